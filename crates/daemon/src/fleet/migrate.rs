//! Live migration straight from this daemon to another (`POST
//! /v1/instances/{instance}/migrate`), with pre-copy: the instance's
//! memory goes over while it runs (`POST /v1/instances/incoming`: the
//! other daemon builds the VM and writes it), then it is paused and only
//! the pages changed since, its registers and its record follow on the
//! same connection (`POST /v1/instances/incoming/commit`: the other daemon
//! loads them and lets it run). The pause covers the second part only;
//! nothing goes to disk or through the CLI.

use super::*;
use crate::http;
use clickos_instance::PreparedResume;

/// Where to migrate an instance.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MigrateRequest {
    /// The other daemon's UNIX socket (on this host), or tcp:HOST:PORT.
    pub to: String,
    /// The name there (default: the same).
    #[serde(default)]
    pub name: Option<String>,
    /// Where its vNICs join there (default: as here).
    #[serde(default)]
    pub vnics: Option<Vec<String>>,
    /// The token to present to the other daemon (default: none; as root
    /// or its user, this daemon is its admin).
    #[serde(default)]
    pub token: Option<String>,
}

/// A migration arriving on one connection: the name reserved (state
/// `starting`), the VM built with the first part's memory.
pub struct Incoming {
    entry: Arc<Entry>,
    rec: Record,
    from: String,
    attach: Vec<Attach>,
    prepared: PreparedResume,
}

impl Incoming {
    /// The answer to the first part.
    pub fn ready(&self) -> Value {
        json!({
            "ready": true,
            "name": self.rec.name,
            "id": self.rec.id,
            "prepare_ms": self.prepared.prepared_in().as_secs_f64() * 1e3,
        })
    }
}

/// A connection to another daemon: a UNIX socket path, or tcp:HOST:PORT
/// (a daemon run with --listen).
trait Conn: std::io::Read + std::io::Write {}
impl<T: std::io::Read + std::io::Write> Conn for T {}

fn connect(to: &str) -> std::io::Result<Box<dyn Conn>> {
    let t = Some(Duration::from_secs(30));
    Ok(match to.strip_prefix("tcp:") {
        Some(addr) => {
            let s = std::net::TcpStream::connect(addr)?;
            s.set_nodelay(true)?;
            s.set_read_timeout(t)?;
            s.set_write_timeout(t)?;
            Box::new(s)
        }
        None => {
            let s = std::os::unix::net::UnixStream::connect(to)?;
            s.set_read_timeout(t)?;
            s.set_write_timeout(t)?;
            Box::new(s)
        }
    })
}

fn io_error(to: &str, what: &str, e: std::io::Error) -> ApiError {
    ApiError::new(502, "migration_failed", format!("{to}: {what}: {e}"))
}

/// The other daemon's refusal, passed on with its status and code.
fn refused(status: u16, body: &[u8]) -> ApiError {
    let v: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
    let msg = v["error"].as_str().unwrap_or("no reason given").to_string();
    let mut e = ApiError::new(
        if (400..600).contains(&status) {
            status
        } else {
            502
        },
        "migration_refused",
        format!("the other daemon refused: {msg}"),
    );
    if let Some(lines) = v["lines"].as_array() {
        e.lines = lines
            .iter()
            .filter_map(|l| l.as_str().map(str::to_string))
            .collect();
    }
    e
}

impl Fleet {
    /// Migrates a running `vm` instance to the daemon at `req.to`: sends
    /// its memory while it runs, pauses it, sends the rest; once the other
    /// daemon answers that it runs there, it is destroyed here. If
    /// anything fails it runs on here (rewired). The answer is the other
    /// daemon's view of it, with `downtime_ms` (from the pause to its
    /// answer that the instance runs), `suspend_ms` (the pause and the
    /// second part), `precopy_ms`, `base_bytes` and `delta_bytes`.
    pub fn migrate(
        &self,
        caller: &Caller,
        key: &str,
        req: MigrateRequest,
    ) -> Result<Value, ApiError> {
        let e = self.find(caller, key)?;
        let _ops = lock(&e.ops);
        let (inst, rec) = {
            let st = lock(&e.st);
            (st.run.as_ref().map(|r| r.inst.clone()), st.rec.clone())
        };
        let Some(inst) = inst else {
            return Err(ApiError::new(
                409,
                "conflict",
                format!("instance '{}' is not running", rec.name),
            ));
        };
        let mut note_rec = rec.clone();
        note_rec.suspended = false;
        note_rec.running = true;
        let note = serde_json::to_vec(&note_rec).unwrap_or_default();
        let t0 = Instant::now();
        let base = inst
            .precopy(&note)
            .map_err(|why| ApiError::new(409, "cannot_suspend", why))?;
        let precopy = t0.elapsed();
        let to = req.to.as_str();
        let give_up = |err: ApiError| {
            inst.migrate_end(false);
            err
        };
        let mut s = connect(to).map_err(|err| give_up(io_error(to, "cannot connect", err)))?;
        let name = req.name.clone().unwrap_or(rec.name.clone());
        let mut q = format!("?name={}", http::percent_encode(&name));
        match &req.vnics {
            Some(v) if v.is_empty() => q.push_str("&novnics=1"),
            Some(v) => {
                for a in v {
                    q.push_str(&format!("&vnic={}", http::percent_encode(a)));
                }
            }
            None => {}
        }
        let auth = req.token.as_ref().map(|t| format!("Bearer {t}"));
        let headers: Vec<(&str, &str)> = auth
            .as_deref()
            .map(|a| vec![("Authorization", a)])
            .unwrap_or_default();
        let (status, body) = http::exchange(
            &mut s,
            "POST",
            &format!("/v1/instances/incoming{q}"),
            &headers,
            Some(("application/octet-stream", &base)),
        )
        .map_err(|err| give_up(io_error(to, "sending the memory", err)))?;
        if status != 200 {
            return Err(give_up(refused(status, &body)));
        }
        let ready: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);

        // The pause: no frame moves, the guest parks, the rest goes over.
        let t1 = Instant::now();
        let sw = lock(&e.st).run.as_mut().and_then(|r| r.sw.take());
        if let Some(sw) = sw {
            let _ = sw.stop();
        }
        let rewire = || -> Result<(), ApiError> {
            let mut st = lock(&e.st);
            match st.run.as_mut() {
                Some(run) => self.rewire(&rec, run),
                None => Ok(()),
            }
        };
        let delta = match inst.migrate_pause(&note) {
            Ok(d) => d,
            Err(why) => {
                rewire()?;
                return Err(ApiError::new(409, "cannot_suspend", why));
            }
        };
        let paused = t1.elapsed();
        let answer = http::exchange(
            &mut s,
            "POST",
            "/v1/instances/incoming/commit",
            &headers,
            Some(("application/octet-stream", &delta)),
        );
        let downtime = t1.elapsed();
        let mut v = match answer {
            Ok((201, body)) => serde_json::from_slice::<Value>(&body).unwrap_or(Value::Null),
            Ok((status, body)) => {
                inst.migrate_end(false);
                rewire()?;
                return Err(refused(status, &body));
            }
            Err(err) => {
                inst.migrate_end(false);
                rewire()?;
                return Err(io_error(to, "sending the rest", err));
            }
        };
        inst.migrate_end(true);
        // Gone from here.
        let run = {
            let mut st = lock(&e.st);
            st.state = "destroyed";
            st.run.take()
        };
        if let Err(err) = self.store.delete(&rec.name) {
            eprintln!(
                "clickos daemon: {}: migrated but not forgotten: {err}",
                rec.name
            );
        }
        lock(&self.entries).remove(&rec.name);
        if let Some(r) = run {
            r.shut(false);
        }
        let _ = std::fs::remove_file(self.snapshot_path(&rec.name));
        let _ = std::fs::remove_file(self.parked_path(&rec.name));
        self.events.push(
            "migrated",
            &rec,
            format!(
                "migrated to {to} as '{name}': downtime {:.3} ms ({} + {} bytes)",
                downtime.as_secs_f64() * 1e3,
                base.len(),
                delta.len()
            ),
            Vec::new(),
        );
        v["to"] = json!(to);
        v["from"] = json!(rec.name);
        v["downtime_ms"] = json!(downtime.as_secs_f64() * 1e3);
        v["suspend_ms"] = json!(paused.as_secs_f64() * 1e3);
        v["precopy_ms"] = json!(precopy.as_secs_f64() * 1e3);
        v["prepare_ms"] = ready["prepare_ms"].clone();
        v["base_bytes"] = json!(base.len());
        v["delta_bytes"] = json!(delta.len());
        Ok(v)
    }

    /// The first part of an incoming migration: checks it, reserves the
    /// name (the instance is `starting` meanwhile) and builds the VM with
    /// its memory. [`commit_incoming`](Self::commit_incoming) with the
    /// second part lets it run; [`abort_incoming`](Self::abort_incoming)
    /// forgets it.
    pub fn prepare_incoming(
        &self,
        caller: &Caller,
        quota: Quota,
        req: ResumeRequest,
        base: &[u8],
    ) -> Result<Incoming, ApiError> {
        let bad = |m: String| ApiError::new(422, "bad_snapshot", format!("cannot resume: {m}"));
        let note = clickos_instance::snapshot_note(base).map_err(bad)?;
        let old: Record = serde_json::from_slice(&note).map_err(|err| {
            bad(format!(
                "the migration was not sent by a clickos daemon ({err})"
            ))
        })?;
        let entry = self.reserve(caller, quota, &req, old.clone())?;
        let rec = lock(&entry.st).rec.clone();
        let fail = |e: ApiError| {
            lock(&self.entries).remove(&rec.name);
            e
        };
        let (opts, attach) = self.instance_options(&rec, &entry.console).map_err(fail)?;
        let prepared = Instance::prepare_resume(rec.id, base, &opts)
            .map_err(|e| fail(launch_error(e, true)))?;
        if prepared.vnic_count() != attach.len() {
            return Err(fail(ApiError::bad(format!(
                "the snapshot has {} vNICs, {} attachments given",
                prepared.vnic_count(),
                attach.len()
            ))));
        }
        Ok(Incoming {
            entry,
            rec,
            from: old.name,
            attach,
            prepared,
        })
    }

    /// The second part: loads it and lets the instance run here, wired and
    /// recorded.
    pub fn commit_incoming(&self, inc: Incoming, delta: &[u8]) -> Result<Value, ApiError> {
        let t0 = Instant::now();
        let Incoming {
            entry,
            rec,
            from,
            attach,
            prepared,
        } = inc;
        let _ops = lock(&entry.ops);
        let fail = |e: ApiError| {
            let mut entries = lock(&self.entries);
            if entries
                .get(&rec.name)
                .is_some_and(|x| Arc::ptr_eq(x, &entry))
            {
                entries.remove(&rec.name);
            }
            e
        };
        if !lock(&self.entries)
            .get(&rec.name)
            .is_some_and(|x| Arc::ptr_eq(x, &entry))
        {
            return Err(ApiError::new(
                409,
                "conflict",
                format!("instance '{}' was destroyed meanwhile", rec.name),
            ));
        }
        let prepare = prepared.prepared_in();
        let (inst, _) = prepared
            .finish(Some(delta))
            .map_err(|e| fail(launch_error(e, true)))?;
        let took = t0.elapsed();
        let run = self
            .wire(&rec, inst, &attach, prepare + took)
            .map_err(fail)?;
        self.persist(&rec).map_err(fail)?;
        {
            let mut st = lock(&entry.st);
            st.run = Some(run);
            st.state = "running";
        }
        let total = t0.elapsed();
        self.events.push(
            "resumed",
            &rec,
            format!(
                "migrated in from '{from}': {:.3} ms to build, {:.3} ms from the last part to running",
                prepare.as_secs_f64() * 1e3,
                total.as_secs_f64() * 1e3
            ),
            Vec::new(),
        );
        let mut v = self.view_entry(&entry, false);
        v["resume_ms"] = json!(total.as_secs_f64() * 1e3);
        v["prepare_ms"] = json!(prepare.as_secs_f64() * 1e3);
        Ok(v)
    }

    /// An incoming migration that will not complete: its name is freed.
    pub fn abort_incoming(&self, inc: Incoming) {
        let mut entries = lock(&self.entries);
        if entries
            .get(&inc.rec.name)
            .is_some_and(|x| Arc::ptr_eq(x, &inc.entry))
        {
            entries.remove(&inc.rec.name);
        }
    }
}
