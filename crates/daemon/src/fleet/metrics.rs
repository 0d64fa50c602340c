//! The Prometheus text exposition of the fleet (`GET /metrics`).

use super::*;

impl Fleet {
    /// Prometheus text exposition for what `caller` may see.
    pub fn metrics(&self, caller: &Caller) -> String {
        let entries: Vec<Arc<Entry>> = lock(&self.entries).values().cloned().collect();
        let mut fams: Vec<(&str, &str, &str, Vec<String>)> = vec![
            (
                "clickos_instance_info",
                "gauge",
                "Instance identity (always 1).",
                vec![],
            ),
            (
                "clickos_instance_up",
                "gauge",
                "1 when the instance runs.",
                vec![],
            ),
            (
                "clickos_instance_state",
                "gauge",
                "1 for the instance's current state.",
                vec![],
            ),
            (
                "clickos_instance_uptime_seconds",
                "gauge",
                "Seconds since the instance last started.",
                vec![],
            ),
            (
                "clickos_instance_boot_seconds",
                "gauge",
                "Time from create to running at the last start.",
                vec![],
            ),
            (
                "clickos_instance_restarts_total",
                "counter",
                "Restarts by the restart policy since the daemon started.",
                vec![],
            ),
            (
                "clickos_instance_memory_bytes",
                "gauge",
                "Memory given to the instance.",
                vec![],
            ),
            (
                "clickos_vnic_packets_total",
                "counter",
                "Frames through a vNIC's switch port, by direction.",
                vec![],
            ),
            (
                "clickos_vnic_bytes_total",
                "counter",
                "Bytes through a vNIC's switch port, by direction.",
                vec![],
            ),
            (
                "clickos_vnic_drops_total",
                "counter",
                "Frames the switch dropped at a vNIC's port.",
                vec![],
            ),
            (
                "clickos_handler_value",
                "gauge",
                "A read handler's value, for the handlers named on create (numeric values only).",
                vec![],
            ),
            (
                "clickos_handler_errors",
                "gauge",
                "1 when a handler named on create could not be read or is not a number.",
                vec![],
            ),
        ];
        // handler reads go to the instances after the fleet's locks are let go
        let mut reads: Vec<(String, Arc<Instance>, Vec<String>)> = Vec::new();
        let mut n = 0u64;
        for e in entries {
            let st = lock(&e.st);
            let r = &st.rec;
            if !caller.owns(&r.tenant) {
                continue;
            }
            n += 1;
            let l = format!(
                "instance=\"{}\",id=\"{}\",tenant=\"{}\"",
                esc(&r.name),
                r.id,
                esc(&r.tenant)
            );
            fams[0].3.push(format!(
                "{{{l},isolation=\"{}\",restart=\"{}\"}} 1",
                r.isolation,
                r.restart.name()
            ));
            fams[1]
                .3
                .push(format!("{{{l}}} {}", u8::from(st.run.is_some())));
            for s in ["starting", "running", "stopped", "crashed", "restarting"] {
                fams[2]
                    .3
                    .push(format!("{{{l},state=\"{s}\"}} {}", u8::from(st.state == s)));
            }
            let (up, boot) = st
                .run
                .as_ref()
                .map(|x| (x.since.elapsed().as_secs_f64(), x.boot.as_secs_f64()))
                .unwrap_or((0.0, 0.0));
            fams[3].3.push(format!("{{{l}}} {up:.3}"));
            fams[4].3.push(format!("{{{l}}} {boot:.6}"));
            fams[5].3.push(format!("{{{l}}} {}", st.restarts));
            fams[6].3.push(format!("{{{l}}} {}", r.memory));
            if let (Some(run), false) = (&st.run, r.metrics.is_empty()) {
                reads.push((l.clone(), run.inst.clone(), r.metrics.clone()));
            }
            if let Some(run) = &st.run {
                if let Some(Ok(s)) = run.sw.as_ref().map(|sw| sw.stats()) {
                    for (k, &pid) in run.vnic_ports.iter().enumerate() {
                        let Some(p) = s.port(pid) else { continue };
                        let c = &p.counters;
                        for (dir, pk, by) in [
                            ("from_instance", c.rx_packets, c.rx_bytes),
                            ("to_instance", c.tx_packets, c.tx_bytes),
                        ] {
                            fams[7]
                                .3
                                .push(format!("{{{l},vnic=\"{k}\",direction=\"{dir}\"}} {pk}"));
                            fams[8]
                                .3
                                .push(format!("{{{l},vnic=\"{k}\",direction=\"{dir}\"}} {by}"));
                        }
                        fams[9]
                            .3
                            .push(format!("{{{l},vnic=\"{k}\"}} {}", c.total_drops()));
                    }
                }
            }
        }
        for (l, inst, hs) in reads {
            for h in hs {
                let v = inst
                    .read(&h)
                    .ok()
                    .and_then(|v| v.trim().parse::<f64>().ok())
                    .filter(|v| v.is_finite());
                let hl = format!("{{{l},handler=\"{}\"}}", esc(&h));
                match v {
                    Some(v) => {
                        fams[10].3.push(format!("{hl} {v}"));
                        fams[11].3.push(format!("{hl} 0"));
                    }
                    None => fams[11].3.push(format!("{hl} 1")),
                }
            }
        }
        let mut out = String::new();
        out.push_str("# HELP clickos_instances Instances the caller may see.\n# TYPE clickos_instances gauge\n");
        out.push_str(&format!("clickos_instances {n}\n"));
        out.push_str("# HELP clickos_events_total Lifecycle events since the daemon started.\n# TYPE clickos_events_total counter\n");
        out.push_str(&format!("clickos_events_total {}\n", self.events.last()));
        out.push_str(&format!(
            "# HELP clickos_daemon_time_seconds The daemon's clock (UNIX time).\n# TYPE clickos_daemon_time_seconds gauge\nclickos_daemon_time_seconds {:.3}\n",
            now_unix()
        ));
        for (name, ty, help, samples) in fams {
            out.push_str(&format!("# HELP {name} {help}\n# TYPE {name} {ty}\n"));
            for s in samples {
                out.push_str(name);
                out.push_str(&s);
                out.push('\n');
            }
        }
        out
    }
}

fn esc(s: &str) -> String {
    s.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}
