//! `clickos switch bench`: the data-plane benchmarks of the ClickOS paper
//! (NSDI'14, figures 4, 7, 10 and 11) on this machine, through the
//! software switch (`clickos-switch`) and instance vNICs:
//!
//! * `switch`: the switch alone between two in-memory ports (source →
//!   MAC lookup → sink, which copies every frame into a ring of 2 KiB
//!   buffers), against a plain memcpy loop of the same frame into a ring of
//!   the same size, alternately in the same run; also with 100,000 static
//!   MACs in the table.
//! * `vnic`: one instance transmitting (`InfiniteSource → ToVNIC(0)` →
//!   switch → memory sink) and receiving (memory source → switch →
//!   `FromVNIC(0) → Counter → Discard`) for ring sizes 64 to 2048 slots.
//! * `chain`: 1 to 9 instances (`FromVNIC(0) → ToVNIC(1)`) patched in a
//!   line between a memory source and a memory sink.
//! * `fanin`: 1 to 100 transmitting instances into one switch and one
//!   sink: aggregate rate and the spread of the per-instance rates.
//!
//! The switch thread is pinned to CPU 1; this thread, and so every
//! instance's vCPU thread (they inherit its affinity), to CPU 0, as a
//! ClickOS host gives the switch (Xen's netback/VALE in dom0) cores of its
//! own.

use crate::vmbench::{progress, progress_done};
use clickos_instance::{Instance, InstanceOptions, Isolation, VnicSpec};
use clickos_switch::ports::mem::{MemSink, MemSource, SinkLog};
use clickos_switch::ports::vnic::VnicPort;
use clickos_switch::{Drop, SwitchHandle, SwitchOptions};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where every benchmark frame goes (the memory sink's entry).
const SINK_MAC: [u8; 6] = [0x02, 0, 0, 0, 0xee, 0x01];
const SRC_MAC: [u8; 6] = [0x02, 0, 0, 0, 0xee, 0x02];
/// The memory sink's (and the memcpy baseline's) ring: 256 buffers of
/// 2 KiB, the default vNIC ring.
const SINK_SLOTS: usize = 256;
const BUF: usize = 2048;
const SWITCH_CPU: usize = 1;
const GUEST_CPU: usize = 0;
const TABLE_BIG: usize = 100_000;
const RING_SIZES: [u32; 6] = [64, 128, 256, 512, 1024, 2048];
const CHAIN_CONFIG: &str = "FromVNIC(0) -> ToVNIC(1); FromVNIC(1) -> ToVNIC(0);";

pub fn usage() -> &'static str {
    "Usage: clickos switch bench [--quick] [--only switch,vnic,chain,fanin] [--json FILE]
                           [--isolation LEVEL] [--memory SIZE] [--max-instances N]

Measures the data plane: the switch alone between two memory ports against a
memcpy loop (with 1 and 100,000 MACs in its table); one instance's vNIC
transmitting and receiving for ring sizes 64 to 2048 slots; chains of 1 to 9
instances between a memory source and sink; 1 to 100 instances sending into
one switch (aggregate rate and fairness). Frame sizes 64, 128, 256, 512, 1024
and 1500 B (--quick: 64 and 1500, shorter windows). Prints markdown tables;
--json writes every figure. The switch runs on CPU 1, the instances on CPU 0.

Options:
      --quick               Fewer sizes and points, shorter windows.
      --only LIST           Some of switch, vnic, chain, fanin.
      --json FILE           Write the results as JSON.
  -i, --isolation LEVEL     vm (default where /dev/kvm works), process, none.
  -m, --memory SIZE         Memory per fan-in instance (default 4M).
      --max-instances N     Largest fan-in (default 100).
"
}

struct Opts {
    isolation: Isolation,
    quick: bool,
    only: Vec<String>,
    json: Option<String>,
    fanin_memory: u64,
    max_instances: usize,
    sizes: Vec<usize>,
    warm: Duration,
    window: Duration,
    reps: usize,
}

/// One benchmark's output: markdown lines and JSON objects.
#[derive(Default)]
struct Out {
    text: Vec<String>,
    json: Vec<String>,
}

fn pin_self(cpu: usize) {
    // SAFETY: a zeroed cpu_set_t is valid; CPU_SET writes inside it;
    // sched_setaffinity reads it for the calling thread (0).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

/// CPUs online (not this thread's affinity, which the benchmark narrows).
fn ncpus() -> usize {
    // SAFETY: sysconf has no preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    n.max(1) as usize
}

fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return f64::NAN;
    }
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// An Ethernet + IPv4 + UDP frame of `len` bytes (no FCS).
fn frame(len: usize, dst: [u8; 6], src: [u8; 6]) -> Vec<u8> {
    let mut f = vec![0u8; len];
    f[0..6].copy_from_slice(&dst);
    f[6..12].copy_from_slice(&src);
    f[12] = 0x08;
    if len >= 42 {
        let ip_len = (len - 14) as u16;
        f[14] = 0x45;
        f[16..18].copy_from_slice(&ip_len.to_be_bytes());
        f[22] = 64;
        f[23] = 17;
        f[26..30].copy_from_slice(&[10, 0, 0, 1]);
        f[30..34].copy_from_slice(&[10, 0, 0, 2]);
        f[34..36].copy_from_slice(&1234u16.to_be_bytes());
        f[36..38].copy_from_slice(&5678u16.to_be_bytes());
        f[38..40].copy_from_slice(&((len - 34) as u16).to_be_bytes());
    }
    f
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn gbps(mpps: f64, size: usize) -> f64 {
    mpps * 1e6 * size as f64 * 8.0 / 1e9
}

fn spawn_switch(name: &str) -> Result<SwitchHandle, String> {
    SwitchHandle::spawn(SwitchOptions {
        name: name.into(),
        cpu: (ncpus() > SWITCH_CPU).then_some(SWITCH_CPU),
        ..SwitchOptions::default()
    })
}

fn options(o: &Opts, memory: Option<u64>, vnics: Vec<VnicSpec>) -> InstanceOptions {
    let mut opts = crate::vmcmd::base_options(o.isolation);
    opts.console = Some(crate::vmcmd::stderr_console());
    opts.vnics = vnics;
    // Dozens of busy vCPUs share one CPU here (with whatever else the
    // machine runs): a heartbeat can stand still for seconds.
    opts.watchdog = Duration::from_secs(60);
    opts.boot_timeout = Duration::from_secs(30);
    if let Some(m) = memory {
        opts.memory = m;
    }
    opts
}

fn vnic(id: u32, k: usize, slots: u32) -> VnicSpec {
    VnicSpec {
        slots,
        buf_size: BUF as u32,
        mac: [
            0x52,
            0x54,
            (id >> 16) as u8,
            (id >> 8) as u8,
            id as u8,
            k as u8,
        ],
    }
}

fn read_u64(inst: &Instance, h: &str) -> Result<u64, String> {
    let s = inst.read(h).map_err(|e| format!("{h}: {e}"))?;
    s.trim()
        .parse()
        .map_err(|_| format!("{h}: not a number: '{}'", s.trim()))
}

/// Warms up, then reads `read` twice `window` apart: (first, second,
/// seconds between).
fn window<T>(o: &Opts, mut read: impl FnMut() -> T) -> (T, T, f64) {
    std::thread::sleep(o.warm);
    let a = read();
    let t0 = Instant::now();
    std::thread::sleep(o.window);
    let b = read();
    (a, b, t0.elapsed().as_secs_f64())
}

/// Sub-windows per measuring window: on a shared machine a burst of
/// outside load spoils one of them, not the point.
const SUBWINDOWS: usize = 3;

/// Warms up, then reads `read` SUBWINDOWS + 1 times over `o.window`:
/// (seconds since the first reading, value).
fn samples<T>(o: &Opts, mut read: impl FnMut() -> T) -> Vec<(f64, T)> {
    std::thread::sleep(o.warm);
    let t0 = Instant::now();
    let mut v = vec![(0.0, read())];
    for _ in 0..SUBWINDOWS {
        std::thread::sleep(o.window / SUBWINDOWS as u32);
        let x = read();
        v.push((t0.elapsed().as_secs_f64(), x));
    }
    v
}

/// Per-sub-window rates (Mp/s) of counter `f` of the samples.
fn rates<T>(s: &[(f64, T)], f: impl Fn(&T) -> u64) -> Vec<f64> {
    s.windows(2)
        .map(|w| f(&w[1].1).saturating_sub(f(&w[0].1)) as f64 / (w[1].0 - w[0].0) / 1e6)
        .collect()
}

/// The best sub-window's rate and the median.
fn best_median(mut r: Vec<f64>) -> (f64, f64) {
    let best = r.iter().cloned().fold(0.0, f64::max);
    (best, median(&mut r))
}

fn sink_frames(log: &SinkLog) -> u64 {
    log.frames.load(Ordering::Relaxed)
}

/// Opens `gate` for a measuring window; the sink's rate in Mp/s.
fn gated_rate(o: &Opts, gate: &AtomicBool, log: &SinkLog) -> f64 {
    gate.store(true, Ordering::Release);
    let (a, b, dt) = window(o, || sink_frames(log));
    gate.store(false, Ordering::Release);
    std::thread::sleep(Duration::from_millis(20));
    (b - a) as f64 / dt / 1e6
}

/// The physical limit: copies `size`-byte frames into a ring of
/// SINK_SLOTS × 2 KiB buffers for `o.window`, on the switch's CPU; Mp/s.
fn memcpy_rate(o: &Opts, size: usize) -> f64 {
    let dur = o.window;
    let h = std::thread::spawn(move || {
        if ncpus() > SWITCH_CPU {
            pin_self(SWITCH_CPU);
        }
        let src = frame(size, SINK_MAC, SRC_MAC);
        let mut bufs = vec![0u8; SINK_SLOTS * BUF];
        let mut k = 0usize;
        let mut n = 0u64;
        // warm the buffers and the CPU's clock as the switch gets
        let t0 = Instant::now();
        loop {
            for _ in 0..65536 {
                let off = k * BUF;
                bufs[off..off + size].copy_from_slice(std::hint::black_box(&src));
                k += 1;
                if k == SINK_SLOTS {
                    k = 0;
                }
            }
            n += 65536;
            if t0.elapsed() >= dur {
                break;
            }
        }
        std::hint::black_box(&bufs);
        n as f64 / t0.elapsed().as_secs_f64() / 1e6
    });
    h.join().unwrap_or(f64::NAN)
}

fn add_sink(sw: &SwitchHandle) -> Result<(usize, Arc<SinkLog>), String> {
    let sink = MemSink::new(SINK_SLOTS, BUF, 0);
    let log = sink.log();
    let d = sw.add_port("sink", sink.spec())?;
    Ok((d, log))
}

fn bench_switch(o: &Opts, out: &mut Out) -> Result<(), String> {
    let sw1 = spawn_switch("bench-1mac")?;
    let swl = spawn_switch("bench-100k")?;
    let (d1, log1) = add_sink(&sw1)?;
    let (dl, logl) = add_sink(&swl)?;
    sw1.insert(SINK_MAC, d1)?;
    let macs: Vec<[u8; 6]> = (0..TABLE_BIG)
        .map(|k| [0x02, 0x10, 0, (k >> 16) as u8, (k >> 8) as u8, k as u8])
        .collect();
    for (k, m) in macs.iter().enumerate() {
        if k.is_multiple_of(5000) {
            progress(&format!("switch: filling a table of {TABLE_BIG} MACs: {k}"));
        }
        swl.insert(*m, dl)?;
    }
    let entries = swl.stats()?.table_entries;
    if entries != TABLE_BIG {
        return Err(format!("the big table holds {entries} entries"));
    }
    out.text.push(format!(
        "**switch** — memory source → switch (MAC lookup) → memory sink (copies each frame into a ring of {SINK_SLOTS} × 2 KiB buffers), switch thread on CPU {SWITCH_CPU}; \
         memcpy = the same frame copied in a loop into a ring of the same size on the same CPU. Table: the source cycles through N frames (at most 8 MiB) to N distinct destinations spread over a table of 100,000 static MACs, \
         against the same N frames all to the one MAC of a one-entry table (same source memory, so the two differ only in the table). Median of {} alternating windows of {:.1} s (memcpy, 1 MAC, 1 MAC × N frames, 100k MACs, memcpy, …).\n",
        o.reps,
        o.window.as_secs_f64()
    ));
    out.text.push("| frame | switch, 1 MAC, 1 frame | memcpy loop | switch / memcpy | N frames | 1-MAC table | 100,000-MAC table | 100k / 1 |".into());
    out.text.push("|---|---|---|---|---|---|---|---|".into());
    for &size in &o.sizes {
        let (s1, g1) = MemSource::gated(vec![frame(size, SINK_MAC, SRC_MAC)], u64::MAX);
        sw1.add_port(&format!("src{size}"), s1.spec())?;
        // distinct destinations spread over the whole table (at most 8 MiB
        // of frames); the same number of frames to one MAC on the small
        // switch, so that the two differ only in the table
        let n = TABLE_BIG.min((8 << 20) / size);
        let step = TABLE_BIG / n;
        let frames: Vec<Vec<u8>> = (0..n)
            .map(|k| frame(size, macs[k * step], SRC_MAC))
            .collect();
        let (sl, gl) = MemSource::gated(frames, u64::MAX);
        swl.add_port(&format!("src{size}"), sl.spec())?;
        let (sn, gn) = MemSource::gated(vec![frame(size, SINK_MAC, SRC_MAC); n], u64::MAX);
        sw1.add_port(&format!("srcn{size}"), sn.spec())?;
        let (mut a, mut b, mut c, mut d) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for r in 0..o.reps {
            let pre = format!("switch: {size} B, round {}/{}", r + 1, o.reps);
            progress(&format!("{pre}: memcpy"));
            c.push(memcpy_rate(o, size));
            progress(&format!("{pre}: switch, 1 MAC"));
            a.push(gated_rate(o, &g1, &log1));
            progress(&format!("{pre}: switch, 1 MAC, {n} frames"));
            d.push(gated_rate(o, &gn, &log1));
            progress(&format!("{pre}: switch, 100k MACs, {n} frames"));
            b.push(gated_rate(o, &gl, &logl));
        }
        let runs = format!(
            "\"runs_switch\": {:?}, \"runs_switch_100k\": {:?}, \"runs_switch_1mac_nframes\": {:?}, \"runs_memcpy\": {:?}",
            a, b, d, c
        );
        let (a, b, c, d) = (
            median(&mut a),
            median(&mut b),
            median(&mut c),
            median(&mut d),
        );
        out.json.push(format!(
            "{{\"size\": {size}, \"switch_mpps\": {a:.4}, \"switch_gbps\": {:.4}, \"switch_100k_mpps\": {b:.4}, \"switch_1mac_nframes_mpps\": {d:.4}, \"memcpy_mpps\": {c:.4}, \"memcpy_gbps\": {:.4}, \"switch_over_memcpy\": {:.4}, \"big_table_over_small\": {:.4}, \"frames_in_source\": {n}, {runs}}}",
            gbps(a, size),
            gbps(c, size),
            a / c,
            b / d
        ));
        out.text.push(format!(
            "| {size} B | {a:.2} Mp/s ({:.2} Gb/s) | {c:.2} Mp/s ({:.2} Gb/s) | {:.0} % | {n} | {d:.2} Mp/s | {b:.2} Mp/s | {:.0} % |",
            gbps(a, size),
            gbps(c, size),
            a / c * 100.0,
            b / d * 100.0
        ));
    }
    progress_done();
    let st = swl.stop()?;
    let drops: u64 = st.ports.iter().map(|p| p.counters.total_drops()).sum();
    let st1 = sw1.stop()?;
    let drops1: u64 = st1.ports.iter().map(|p| p.counters.total_drops()).sum();
    if drops + drops1 > 0 {
        out.text.push(format!(
            "\n(drops counted by the switches: {})",
            drops + drops1
        ));
    }
    Ok(())
}

struct VnicPoint {
    /// Best sub-window.
    delivered: f64,
    median: f64,
    /// Frames/s the instance's ToVNIC dropped (TX) or the switch dropped
    /// on a full ring (RX).
    dropped: f64,
}

fn vnic_tx(o: &Opts, id: u32, slots: u32, size: usize) -> Result<VnicPoint, String> {
    let f = frame(size, SINK_MAC, SRC_MAC);
    let cfg = format!(
        "src :: InfiniteSource(DATA \\<{}>, LIMIT -1, BURST 32) -> t :: ToVNIC(0);",
        hex(&f)
    );
    let inst = Instance::create(id, &cfg, &options(o, None, vec![vnic(id, 0, slots)]))
        .map_err(|e| format!("instance: {e}"))?;
    let sw = spawn_switch("vnic-tx")?;
    let (d, log) = add_sink(&sw)?;
    sw.insert(SINK_MAC, d)?;
    sw.add_port("vnic0", VnicPort::spec(&inst, 0)?)?;
    let s = samples(o, || (sink_frames(&log), read_u64(&inst, "t.drops")));
    let _ = sw.stop();
    if let Some(e) = s.iter().find_map(|x| x.1 .1.as_ref().err()) {
        return Err(e.clone());
    }
    let (delivered, median) = best_median(rates(&s, |x| x.0));
    let dropped = rates(&s, |x| *x.1.as_ref().unwrap_or(&0));
    Ok(VnicPoint {
        delivered,
        median,
        dropped: dropped.iter().sum::<f64>() / dropped.len() as f64,
    })
}

fn vnic_rx(o: &Opts, id: u32, slots: u32, size: usize) -> Result<VnicPoint, String> {
    let spec = vnic(id, 0, slots);
    let inst = Instance::create(
        id,
        "FromVNIC(0) -> c :: Counter -> Discard;",
        &options(o, None, vec![spec]),
    )
    .map_err(|e| format!("instance: {e}"))?;
    let sw = spawn_switch("vnic-rx")?;
    let v = sw.add_port("vnic0", VnicPort::spec(&inst, 0)?)?;
    sw.insert(spec.mac, v)?;
    let (src, go) = MemSource::gated(vec![frame(size, spec.mac, SRC_MAC)], u64::MAX);
    sw.add_port("src", src.spec())?;
    go.store(true, Ordering::Release);
    let full = |sw: &SwitchHandle| -> Result<u64, String> {
        Ok(sw
            .stats()?
            .port(v)
            .map_or(0, |p| p.counters.drops(Drop::Full)))
    };
    let s = samples(o, || (read_u64(&inst, "c.count"), full(&sw)));
    go.store(false, Ordering::Release);
    let _ = sw.stop();
    let mut ok = Vec::new();
    for (t, (c, f)) in s {
        ok.push((t, (c?, f?)));
    }
    let (delivered, median) = best_median(rates(&ok, |x| x.0));
    let dropped = rates(&ok, |x| x.1);
    Ok(VnicPoint {
        delivered,
        median,
        dropped: dropped.iter().sum::<f64>() / dropped.len() as f64,
    })
}

fn bench_vnic(o: &Opts, out: &mut Out) -> Result<(), String> {
    out.text.push(format!(
        "**vnic** — one instance ({}) with one vNIC. TX: `InfiniteSource(BURST 32) → ToVNIC(0)` → switch (MAC lookup) → memory sink; delivered = what reached the sink (ToVNIC drops frames when the ring is full: `drop` = frames/s dropped there). \
         RX: memory source → switch → `FromVNIC(0) → Counter → Discard`; delivered = the Counter's rate (`drop` = frames/s the switch dropped on a full ring). \
         Ring memory = the vNIC's shared region (both rings and 2 × slots 2 KiB buffers). Best of {SUBWINDOWS} windows of {:.2} s per point (JSON: the median too); the instance's vCPU on CPU 0, the switch on CPU 1.\n",
        o.isolation.name(),
        o.window.as_secs_f64() / SUBWINDOWS as f64
    ));
    let mut head = "| ring slots | ring memory |".to_string();
    let mut sep = "|---|---|".to_string();
    for s in &o.sizes {
        head.push_str(&format!(" TX {s} B | RX {s} B |"));
        sep.push_str("---|---|");
    }
    out.text.push(head);
    out.text.push(sep);
    let mut id = 50_000u32;
    let total = RING_SIZES.len() * o.sizes.len();
    let mut done = 0;
    for &slots in &RING_SIZES {
        let mem = clickos_ring::layout::vnic_layout(slots, BUF as u32, [0; 6])
            .map(|l| l.size)
            .unwrap_or(0);
        let mut row = format!("| {slots} | {} KiB |", mem / 1024);
        for &size in &o.sizes {
            progress(&format!(
                "vnic: [{done}/{total}] {slots} slots, {size} B: TX"
            ));
            id += 1;
            let tx = vnic_tx(o, id, slots, size)?;
            progress(&format!(
                "vnic: [{done}/{total}] {slots} slots, {size} B: RX"
            ));
            id += 1;
            let rx = vnic_rx(o, id, slots, size)?;
            done += 1;
            out.json.push(format!(
                "{{\"slots\": {slots}, \"ring_bytes\": {mem}, \"size\": {size}, \"tx_mpps\": {:.4}, \"tx_median_mpps\": {:.4}, \"tx_gbps\": {:.4}, \"tx_dropped_mpps\": {:.4}, \"rx_mpps\": {:.4}, \"rx_median_mpps\": {:.4}, \"rx_gbps\": {:.4}, \"rx_dropped_mpps\": {:.4}}}",
                tx.delivered,
                tx.median,
                gbps(tx.delivered, size),
                tx.dropped,
                rx.delivered,
                rx.median,
                gbps(rx.delivered, size),
                rx.dropped
            ));
            let d = |p: &VnicPoint| {
                if p.dropped > 0.0005 {
                    format!(" (drop {:.2})", p.dropped)
                } else {
                    String::new()
                }
            };
            row.push_str(&format!(
                " {:.2}{} | {:.2}{} |",
                tx.delivered,
                d(&tx),
                rx.delivered,
                d(&rx)
            ));
        }
        out.text.push(row);
    }
    progress_done();
    out.text.push("\n(Mp/s)".into());
    Ok(())
}

fn bench_chain(o: &Opts, out: &mut Out) -> Result<(), String> {
    let lens: Vec<usize> = if o.quick {
        vec![1, 2, 5, 9]
    } else {
        (1..=9).collect()
    };
    let sizes: Vec<usize> = vec![64, 1500];
    out.text.push(format!(
        "**chain** — memory source → switch → instance 1 (`{CHAIN_CONFIG}`, {}) → switch → … → instance N → switch → memory sink, all port-to-port patches (lossless: a patched source takes no more than the next ring has room for). \
         Delivered = the sink's rate, best of {SUBWINDOWS} windows of {:.2} s per point (JSON: the median too); every instance's vCPU on CPU 0, the switch on CPU 1.\n",
        o.isolation.name(),
        o.window.as_secs_f64() / SUBWINDOWS as f64
    ));
    out.text
        .push("| instances | 64 B Mp/s | 64 B Gb/s | 1500 B Mp/s | 1500 B Gb/s |".to_string());
    out.text.push("|---|---|---|---|---|".into());
    for &n in &lens {
        progress(&format!("chain: {n} instance(s): booting"));
        let mut insts = Vec::new();
        for k in 0..n {
            let id = 60_000 + (n * 16 + k) as u32;
            let inst = Instance::create(
                id,
                CHAIN_CONFIG,
                &options(o, None, vec![vnic(id, 0, 256), vnic(id, 1, 256)]),
            )
            .map_err(|e| format!("chain of {n}: instance {}: {e}", k + 1))?;
            insts.push(inst);
        }
        let sw = spawn_switch("chain")?;
        let (sink, log) = add_sink(&sw)?;
        let mut prev: Option<usize> = None;
        let mut first = None;
        for (k, inst) in insts.iter().enumerate() {
            let a = sw.add_port(&format!("i{k}.vnic0"), VnicPort::spec(inst, 0)?)?;
            let b = sw.add_port(&format!("i{k}.vnic1"), VnicPort::spec(inst, 1)?)?;
            match prev {
                Some(p) => sw.wire(p, a)?,
                None => first = Some(a),
            }
            prev = Some(b);
        }
        let (first, last) = (first.unwrap_or(0), prev.unwrap_or(0));
        sw.patch(last, Some(sink))?;
        let mut row = format!("| {n} |");
        let mut js = format!("{{\"instances\": {n}");
        for &size in &sizes {
            progress(&format!("chain: {n} instance(s), {size} B"));
            let (src, go) = MemSource::gated(vec![frame(size, SINK_MAC, SRC_MAC)], u64::MAX);
            let s = sw.add_port(&format!("src{size}"), src.spec())?;
            sw.patch(s, Some(first))?;
            go.store(true, Ordering::Release);
            let smp = samples(o, || sink_frames(&log));
            go.store(false, Ordering::Release);
            let (r, med) = best_median(rates(&smp, |x| *x));
            sw.remove_port(s)?;
            std::thread::sleep(Duration::from_millis(50));
            row.push_str(&format!(" {r:.3} | {:.2} |", gbps(r, size)));
            js.push_str(&format!(
                ", \"mpps_{size}\": {r:.4}, \"median_mpps_{size}\": {med:.4}, \"gbps_{size}\": {:.4}",
                gbps(r, size)
            ));
        }
        let st = sw.stop()?;
        let drops: u64 = st.ports.iter().map(|p| p.counters.total_drops()).sum();
        js.push_str(&format!(", \"switch_drops\": {drops}}}"));
        out.json.push(js);
        out.text.push(row);
        drop(insts);
    }
    progress_done();
    Ok(())
}

fn fanin_config(size: usize) -> String {
    let f = frame(1500, SINK_MAC, SRC_MAC);
    format!(
        "src :: InfiniteSource(DATA \\<{}>, LENGTH {size}, LIMIT -1, BURST 32, ACTIVE false) -> t :: ToVNIC(0);",
        hex(&f)
    )
}

fn set_all(insts: &[Instance], h: &str, v: &str) -> Result<(), String> {
    for (k, i) in insts.iter().enumerate() {
        i.write(h, v)
            .map_err(|e| format!("instance {}: {h}: {e}", k + 1))?;
    }
    Ok(())
}

fn bench_fanin(o: &Opts, out: &mut Out) -> Result<(), String> {
    let mut counts: Vec<usize> = vec![1, 2, 5, 10, 25, 50, 100];
    if o.max_instances > 100 {
        counts.push(o.max_instances);
    }
    counts.retain(|&n| n <= o.max_instances);
    let sizes: Vec<usize> = vec![64, 1500];
    out.text.push(format!(
        "**fanin** — N instances ({}, {} MiB each, one 256-slot vNIC) each running `InfiniteSource(BURST 32) → ToVNIC(0)` into one switch (MAC lookup) → one memory sink. \
         Aggregate = the sink's rate; per instance = its vNIC port's receive counter in the switch; fairness = min / median / max of those and their coefficient of variation (CV). \
         All vCPUs on CPU 0, the switch on CPU 1; the best of {SUBWINDOWS} windows of {:.2} s per point (per-instance figures from that window; JSON: the median aggregate too).\n",
        o.isolation.name(),
        o.fanin_memory >> 20,
        o.window.as_secs_f64() / SUBWINDOWS as f64
    ));
    out.text.push(
        "| instances | frame | aggregate Mp/s | Gb/s | per instance min / median / max Mp/s | CV | ToVNIC drops |"
            .to_string(),
    );
    out.text.push("|---|---|---|---|---|---|---|".into());
    let sw = spawn_switch("fanin")?;
    let (sink, log) = add_sink(&sw)?;
    sw.insert(SINK_MAC, sink)?;
    let mut insts: Vec<Instance> = Vec::new();
    let mut ports: Vec<usize> = Vec::new();
    let mut limit: Option<String> = None;
    for &n in &counts {
        while insts.len() < n {
            let k = insts.len();
            if k.is_multiple_of(10) {
                progress(&format!("fanin: booting instance {}/{n}", k + 1));
            }
            let id = 70_000 + k as u32;
            match Instance::create(
                id,
                &fanin_config(64),
                &options(o, Some(o.fanin_memory), vec![vnic(id, 0, 256)]),
            ) {
                Ok(i) => {
                    ports.push(sw.add_port(&format!("i{k}"), VnicPort::spec(&i, 0)?)?);
                    insts.push(i);
                }
                Err(e) => {
                    limit = Some(format!(
                        "instance {} of {n} did not start ({e}); the largest fan-in that fits here is {k}",
                        k + 1
                    ));
                    break;
                }
            }
        }
        if insts.len() < n {
            break;
        }
        let active = &insts[..n];
        for &size in &sizes {
            progress(&format!("fanin: {n} instance(s), {size} B"));
            set_all(active, "src.length", &size.to_string())?;
            set_all(active, "src.active", "true")?;
            let snap = |sw: &SwitchHandle| -> Result<(u64, Vec<u64>, u64), String> {
                let st = sw.stats()?;
                let per = ports[..n]
                    .iter()
                    .map(|&p| st.port(p).map_or(0, |x| x.counters.rx_packets))
                    .collect();
                Ok((sink_frames(&log), per, st.sleeps))
            };
            let drops0: u64 = active
                .iter()
                .map(|i| read_u64(i, "t.drops").unwrap_or(0))
                .sum();
            let smp = samples(o, || snap(&sw));
            let drops1: u64 = active
                .iter()
                .map(|i| read_u64(i, "t.drops").unwrap_or(0))
                .sum();
            set_all(active, "src.active", "false")?;
            std::thread::sleep(Duration::from_millis(100));
            let mut ok = Vec::new();
            for (t, x) in smp {
                ok.push((t, x?));
            }
            let aggs = rates(&ok, |x| x.0);
            // the best sub-window, and the per-instance rates in it
            let k = (0..aggs.len())
                .max_by(|&a, &b| aggs[a].total_cmp(&aggs[b]))
                .unwrap_or(0);
            let (agg, agg_med) = best_median(aggs.clone());
            let dt = ok[k + 1].0 - ok[k].0;
            // times the switch went to sleep (nothing moved for its spin time)
            let sleeps = ok[SUBWINDOWS].1 .2 - ok[0].1 .2;
            let mut per: Vec<f64> = ok[k]
                .1
                 .1
                .iter()
                .zip(&ok[k + 1].1 .1)
                .map(|(x, y)| y.saturating_sub(*x) as f64 / dt / 1e6)
                .collect();
            let mean = per.iter().sum::<f64>() / n as f64;
            let var = per.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64;
            let cv = if mean > 0.0 { var.sqrt() / mean } else { 0.0 };
            let per_json = format!(
                "{:?}",
                per.iter()
                    .map(|x| (x * 1e4).round() / 1e4)
                    .collect::<Vec<_>>()
            );
            let med = median(&mut per);
            let (min, max) = (per[0], per[n - 1]);
            // ToVNIC drops over warm-up and window (the rings were full)
            let dropped = drops1.saturating_sub(drops0);
            out.json.push(format!(
                "{{\"instances\": {n}, \"size\": {size}, \"aggregate_mpps\": {agg:.4}, \"aggregate_median_mpps\": {agg_med:.4}, \"aggregate_gbps\": {:.4}, \"per_instance_min\": {min:.4}, \"per_instance_median\": {med:.4}, \"per_instance_max\": {max:.4}, \"cv\": {cv:.4}, \"tovnic_drops\": {dropped}, \"switch_sleeps\": {sleeps}, \"per_instance_mpps\": {per_json}}}",
                gbps(agg, size)
            ));
            out.text.push(format!(
                "| {n} | {size} B | {agg:.3} | {:.2} | {min:.3} / {med:.3} / {max:.3} | {cv:.2} | {dropped} |",
                gbps(agg, size)
            ));
        }
    }
    progress_done();
    if let Some(l) = &limit {
        out.text.push(format!("\n{l}."));
        out.json.push(format!("{{\"limit\": {:?}}}", l));
    }
    progress("fanin: destroying instances");
    let _ = sw.stop();
    drop(insts);
    progress_done();
    Ok(())
}

/// (machine busy CPU seconds incl. steal, this process's CPU seconds,
/// now), to tell how much of the machine other work took during a run.
fn cpu_snapshot() -> (f64, f64, Instant) {
    let busy = std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|s| {
            let l = s.lines().next()?.to_string();
            let v: Vec<f64> = l
                .split_whitespace()
                .skip(1)
                .filter_map(|x| x.parse().ok())
                .collect();
            // user nice system idle iowait irq softirq steal (guest is in user)
            Some(v.iter().take(8).sum::<f64>() - v.get(3)? - v.get(4)?)
        })
        .unwrap_or(0.0);
    // SAFETY: sysconf has no preconditions.
    let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let (u, s) = clickos_userlevel::sys::cpu_times();
    (busy / hz, u + s, Instant::now())
}

/// Percent of the machine's CPUs busy with other work (and stolen by the
/// hypervisor) between two snapshots.
fn outside_load(a: (f64, f64, Instant), b: (f64, f64, Instant)) -> f64 {
    let wall = b.2.duration_since(a.2).as_secs_f64() * ncpus() as f64;
    (((b.0 - a.0) - (b.1 - a.1)) / wall * 100.0).clamp(0.0, 100.0)
}

fn now_text() -> String {
    std::process::Command::new("date")
        .arg("+%Y-%m-%d %H:%M:%S %Z")
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

pub fn bench(args: &[String]) -> i32 {
    let mut o = Opts {
        isolation: Isolation::Vm,
        quick: false,
        only: Vec::new(),
        json: None,
        fanin_memory: 4 << 20,
        max_instances: 100,
        sizes: vec![64, 128, 256, 512, 1024, 1500],
        warm: Duration::from_millis(300),
        window: Duration::from_secs(1),
        reps: 5,
    };
    let mut iso = None;
    let mut i = 0;
    let bad = |what: &str| {
        eprintln!("clickos switch bench: {what}");
        eprintln!("Try 'clickos switch bench --help' for more information.");
        1
    };
    while i < args.len() {
        let a = args[i].as_str();
        let mut next = || {
            i += 1;
            args.get(i).cloned()
        };
        match a {
            "--quick" => o.quick = true,
            "--only" => match next() {
                Some(v) => o.only = v.split(',').map(|s| s.trim().to_string()).collect(),
                None => return bad("--only needs a list"),
            },
            "--json" => match next() {
                Some(v) => o.json = Some(v),
                None => return bad("--json needs a file"),
            },
            "-i" | "--isolation" => match next().as_deref().map(crate::vmcmd::parse_isolation) {
                Some(Ok(l)) => iso = Some(l),
                Some(Err(e)) => return bad(&e),
                None => return bad("--isolation needs a level"),
            },
            "-m" | "--memory" => match next()
                .as_deref()
                .and_then(crate::vmcmd::parse_size)
                .filter(|&n| n >= 1 << 20)
            {
                Some(m) => o.fanin_memory = m,
                None => return bad("--memory needs a size of at least 1M"),
            },
            "--max-instances" => match next().and_then(|v| v.parse().ok()).filter(|&n| n > 0) {
                Some(n) => o.max_instances = n,
                None => return bad("--max-instances needs a positive number"),
            },
            "--help" | "-h" => {
                print!("{}", usage());
                return 0;
            }
            other => return bad(&format!("unknown option '{other}'")),
        }
        i += 1;
    }
    const ALL: [&str; 4] = ["switch", "vnic", "chain", "fanin"];
    for s in &o.only {
        if !ALL.contains(&s.as_str()) {
            return bad(&format!(
                "unknown benchmark '{s}' (switch, vnic, chain, fanin)"
            ));
        }
    }
    if o.quick {
        o.sizes = vec![64, 1500];
        o.warm = Duration::from_millis(200);
        o.window = Duration::from_millis(500);
        o.reps = 3;
    }
    let want = |s: &str| o.only.is_empty() || o.only.iter().any(|x| x == s);
    if want("vnic") || want("chain") || want("fanin") {
        o.isolation = iso.unwrap_or_else(crate::vmcmd::default_isolation);
    } else {
        o.isolation = iso.unwrap_or(Isolation::Vm);
    }
    // Instances (their vCPU threads inherit this) on CPU 0, the switch on 1.
    if ncpus() > SWITCH_CPU {
        pin_self(GUEST_CPU);
    }
    let started = now_text();
    let load0 = loadavg();
    let mut failed = false;
    let mut sections: Vec<(String, Out)> = Vec::new();
    type Bench = fn(&Opts, &mut Out) -> Result<(), String>;
    let benches: [(&str, Bench); 4] = [
        ("switch", bench_switch),
        ("vnic", bench_vnic),
        ("chain", bench_chain),
        ("fanin", bench_fanin),
    ];
    for (name, f) in benches {
        if !want(name) {
            continue;
        }
        let mut out = Out::default();
        let c0 = cpu_snapshot();
        let r = f(&o, &mut out);
        let other = outside_load(c0, cpu_snapshot());
        out.text.push(format!(
            "\n(Other work on the machine, and CPU stolen by the hypervisor, took {other:.0} % of its {} CPUs during this benchmark; load average {}.)",
            ncpus(),
            loadavg()
        ));
        out.json
            .push(format!("{{\"other_cpu_percent\": {other:.1}}}"));
        if let Err(e) = r {
            progress_done();
            eprintln!("clickos switch bench: {name}: {e}");
            out.text.push(format!("\n**failed**: {e}"));
            out.json.push(format!("{{\"error\": {:?}}}", e));
            failed = true;
        }
        sections.push((name.to_string(), out));
    }
    let load1 = loadavg();
    println!(
        "ClickOS data-plane benchmarks — isolation '{}', {} CPUs, started {started}, load average {load0} at start, {load1} at end\n",
        o.isolation.name(),
        ncpus()
    );
    for (_, out) in &sections {
        for l in &out.text {
            println!("{l}");
        }
        println!();
    }
    if let Some(path) = &o.json {
        let mut parts = vec![
            format!("\"date\": {:?}", started),
            format!("\"isolation\": \"{}\"", o.isolation.name()),
            format!("\"cpus\": {}", ncpus()),
            format!("\"loadavg_start\": {:?}", load0),
            format!("\"loadavg_end\": {:?}", load1),
            format!("\"quick\": {}", o.quick),
            format!("\"window_s\": {}", o.window.as_secs_f64()),
            format!("\"switch_cpu\": {SWITCH_CPU}, \"guest_cpu\": {GUEST_CPU}"),
        ];
        for (name, out) in &sections {
            parts.push(format!(
                "\"{name}\": [\n    {}\n  ]",
                out.json.join(",\n    ")
            ));
        }
        let text = format!("{{\n  {}\n}}\n", parts.join(",\n  "));
        if let Err(e) = std::fs::write(path, text) {
            eprintln!("clickos switch bench: {path}: {e}");
            failed = true;
        }
    }
    i32::from(failed)
}
