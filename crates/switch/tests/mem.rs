//! The switch between in-memory ports: which frame goes where.

use clickos_switch::ports::mem::{MemSink, MemSource, SinkLog};
use clickos_switch::{Drop, SwitchHandle, SwitchOptions};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

fn frame(dst: [u8; 6], src: [u8; 6], tag: u8) -> Vec<u8> {
    let mut f = Vec::new();
    f.extend_from_slice(&dst);
    f.extend_from_slice(&src);
    f.extend_from_slice(&[0x08, 0x00]);
    f.extend_from_slice(&[tag; 46]);
    f
}

const A: [u8; 6] = [2, 0, 0, 0, 0, 0xa];
const B: [u8; 6] = [2, 0, 0, 0, 0, 0xb];
const C: [u8; 6] = [2, 0, 0, 0, 0, 0xc];
const BCAST: [u8; 6] = [0xff; 6];

fn sink(sw: &SwitchHandle, name: &str) -> (usize, Arc<SinkLog>) {
    let s = MemSink::new(64, 2048, 1000);
    let log = s.log();
    (sw.add_port(name, s.spec()).unwrap(), log)
}

fn kept(l: &SinkLog) -> Vec<Vec<u8>> {
    l.kept.lock().unwrap().clone()
}

/// Waits until `f` holds (the switch runs on its own thread).
fn until(what: &str, f: impl Fn() -> bool) {
    let t0 = Instant::now();
    while !f() {
        assert!(t0.elapsed() < Duration::from_secs(10), "timed out: {what}");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn static_entries_route_unknown_floods_broadcast_floods() {
    let sw = SwitchHandle::spawn(SwitchOptions::default()).unwrap();
    let (pb, lb) = sink(&sw, "b");
    let (pc, lc) = sink(&sw, "c");
    sw.insert(B, pb).unwrap();
    sw.insert(C, pc).unwrap();
    let frames = vec![
        frame(B, A, 1),
        frame(C, A, 2),
        frame(BCAST, A, 3),
        frame([2, 0, 0, 0, 0, 0xee], A, 4),
    ];
    let src = sw
        .add_port("a", MemSource::new(frames.clone(), 4).spec())
        .unwrap();
    until("6 frames delivered", || {
        kept(&lb).len() + kept(&lc).len() == 6
    });
    assert_eq!(
        kept(&lb),
        vec![frames[0].clone(), frames[2].clone(), frames[3].clone()]
    );
    assert_eq!(
        kept(&lc),
        vec![frames[1].clone(), frames[2].clone(), frames[3].clone()]
    );
    let st = sw.stop().unwrap();
    let a = st.port(src).unwrap();
    assert_eq!(a.counters.rx_packets, 4);
    assert_eq!(a.counters.total_drops(), 0);
    assert_eq!(st.port(pb).unwrap().counters.tx_packets, 3);
    assert_eq!(st.port(pb).unwrap().counters.tx_bytes, 3 * 60);
    assert_eq!(st.table_entries, 2);
}

#[test]
fn without_flooding_unknown_unicast_is_dropped_and_counted() {
    let sw = SwitchHandle::spawn(SwitchOptions {
        flood_unknown: false,
        ..Default::default()
    })
    .unwrap();
    let (pb, lb) = sink(&sw, "b");
    sw.insert(B, pb).unwrap();
    let src = sw
        .add_port(
            "a",
            MemSource::new(vec![frame(C, A, 1), frame(B, A, 2), vec![1, 2, 3]], 3).spec(),
        )
        .unwrap();
    until("one frame delivered", || kept(&lb).len() == 1);
    let st = sw.stats().unwrap();
    let a = &st.port(src).unwrap().counters;
    until("counters settle", || {
        sw.stats().unwrap().port(src).unwrap().counters.rx_packets == 3
    });
    let st2 = sw.stats().unwrap();
    let a2 = &st2.port(src).unwrap().counters;
    assert_eq!(a2.drops(Drop::NoRoute), 1);
    assert_eq!(a2.drops(Drop::Runt), 1);
    assert!(a.rx_packets <= 3);
    assert_eq!(kept(&lb)[0][14], 2);
}

#[test]
fn learning_finds_the_host_and_hairpins_are_dropped() {
    let sw = SwitchHandle::spawn(SwitchOptions {
        learning: true,
        ..Default::default()
    })
    .unwrap();
    let (pb, lb) = sink(&sw, "b");
    let (_pc, lc) = sink(&sw, "c");
    // B speaks first (from port b's side we cannot send: a sink does not
    // receive), so teach the table by a source port that owns B.
    let pbsrc = sw
        .add_port("bsrc", MemSource::new(vec![frame(BCAST, B, 9)], 1).spec())
        .unwrap();
    until("broadcast flooded", || {
        kept(&lb).len() == 1 && kept(&lc).len() == 1
    });
    let rows = sw.table().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (rows[0].mac, rows[0].port, rows[0].fixed),
        (B, pbsrc, false)
    );
    // Now A → B goes only to bsrc's port, which is a source: hairpin
    // check from bsrc itself.
    let back = sw
        .add_port("again", MemSource::new(vec![frame(B, A, 7)], 1).spec())
        .unwrap();
    until("learned route used", || {
        sw.stats().unwrap().port(pbsrc).unwrap().counters.tx_packets == 1
    });
    assert_eq!(kept(&lc).len(), 1, "not flooded once learned");
    let _ = pb;
    sw.remove_port(pbsrc).unwrap();
    let rows = sw.table().unwrap();
    assert_eq!(rows.len(), 1, "entries of a removed port go");
    assert_eq!((rows[0].mac, rows[0].port), (A, back));
}

#[test]
fn patches_bypass_the_table_and_do_not_take_floods() {
    let sw = SwitchHandle::spawn(SwitchOptions::default()).unwrap();
    let (pb, lb) = sink(&sw, "b");
    let (pc, lc) = sink(&sw, "c");
    let (s, go) = MemSource::gated(vec![frame(C, A, 5), frame(BCAST, A, 6)], 10);
    let src = sw.add_port("a", s.spec()).unwrap();
    sw.insert(C, pc).unwrap();
    sw.patch(src, Some(pb)).unwrap();
    go.store(true, Ordering::Release);
    until("all frames out", || kept(&lb).len() == 10);
    assert!(
        kept(&lc).is_empty(),
        "the patch wins over the table entry for C"
    );
    // A second source's broadcast reaches b and c but not a, whose
    // receive side is patched (a patched port takes no floods).
    let (s2, go2) = MemSource::gated(vec![frame(BCAST, B, 7)], 1);
    let src2 = sw.add_port("d", s2.spec()).unwrap();
    go2.store(true, Ordering::Release);
    until("flood reached b and c", || {
        kept(&lc).len() == 1 && kept(&lb).len() == 11
    });
    assert_eq!(kept(&lb)[10][14], 7);
    assert_eq!(kept(&lc)[0][14], 7);
    let st = sw.stats().unwrap();
    assert_eq!(st.port(src).unwrap().counters.tx_packets, 0);
    let _ = src2;
    // Unpatched, a's frames go by the table again.
    sw.patch(src, None).unwrap();
    assert!(sw.patch(src, Some(src)).is_err());
    assert!(sw.patch(src, Some(99)).is_err());
    assert!(sw.insert(C, 99).is_err());
}

#[test]
fn a_full_sink_counts_drops_and_oversize_is_refused() {
    let sw = SwitchHandle::spawn(SwitchOptions::default()).unwrap();
    let s = MemSink::new(4, 64, 0);
    let log = s.log();
    let pb = sw.add_port("b", s.spec()).unwrap();
    let mut big = frame(B, A, 1);
    big.resize(100, 0);
    let src = sw
        .add_port("a", MemSource::new(vec![frame(B, A, 1), big], 10).spec())
        .unwrap();
    sw.patch(src, Some(pb)).unwrap();
    until("all frames seen", || {
        sw.stats().unwrap().port(pb).unwrap().counters.total_drops()
            + log.frames.load(Ordering::Relaxed)
            >= 10
            && sw.stats().unwrap().port(src).unwrap().counters.rx_packets == 10
    });
    let st = sw.stop().unwrap();
    let b = &st.port(pb).unwrap().counters;
    assert_eq!(b.drops(Drop::Oversize) + b.tx_packets, 10);
    assert!(b.drops(Drop::Oversize) >= 4);
}

#[test]
fn three_hundred_ports_and_a_hundred_thousand_macs() {
    let sw = SwitchHandle::spawn(SwitchOptions::default()).unwrap();
    let mut logs = Vec::new();
    for i in 0..300 {
        logs.push(sink(&sw, &format!("p{i}")));
    }
    for i in 0..100_000u32 {
        let b = i.to_be_bytes();
        sw.insert([2, 1, b[0], b[1], b[2], b[3]], logs[(i % 300) as usize].0)
            .unwrap();
    }
    // One frame to each of the last 300 addresses.
    let frames: Vec<Vec<u8>> = (99_700..100_000u32)
        .map(|i| {
            let b = i.to_be_bytes();
            frame([2, 1, b[0], b[1], b[2], b[3]], A, (i % 251) as u8)
        })
        .collect();
    sw.add_port("src", MemSource::new(frames, 300).spec())
        .unwrap();
    until("300 frames", || {
        logs.iter().map(|(_, l)| kept(l).len()).sum::<usize>() == 300
    });
    for i in 99_700..100_000u32 {
        let (_, l) = &logs[(i % 300) as usize];
        let k = kept(l);
        assert_eq!(k.len(), 1, "port {} got one frame", i % 300);
        assert_eq!(k[0][14], (i % 251) as u8);
    }
    assert_eq!(sw.table().unwrap().len(), 100_000);
}

#[test]
fn a_duplicate_port_name_and_a_stopped_switch_are_errors() {
    let sw = SwitchHandle::spawn(SwitchOptions {
        max_ports: 2,
        ..Default::default()
    })
    .unwrap();
    sink(&sw, "x");
    let e = sw.add_port("x", MemSink::new(1, 64, 0).spec()).unwrap_err();
    assert!(e.contains("named 'x'"), "{e}");
    let e = sw
        .add_port("bad", Box::new(|| Err("no such thing".into())))
        .unwrap_err();
    assert!(e.contains("port 'bad': no such thing"), "{e}");
    sink(&sw, "y");
    let e = sw.add_port("z", MemSink::new(1, 64, 0).spec()).unwrap_err();
    assert!(e.contains("all 2 ports"), "{e}");
    let (y, _) = (1usize, ());
    sw.remove_port(y).unwrap();
    sink(&sw, "z");
    let st = sw.stats().unwrap();
    assert_eq!(st.port(1).unwrap().name, "z", "a freed slot is reused");
    sw.stop().unwrap();
}

#[test]
fn a_held_switch_moves_nothing_until_released() {
    let sw = SwitchHandle::spawn(SwitchOptions::default()).unwrap();
    sw.hold(true).unwrap();
    // a source added before its destination and its patch: unheld, its
    // first burst would be flooded to nobody and vanish
    let frames: Vec<Vec<u8>> = (0..200).map(|i| frame(B, A, i as u8)).collect();
    let src = sw
        .add_port("a", MemSource::new(frames.clone(), 200).spec())
        .unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let (pb, lb) = sink(&sw, "b");
    sw.patch(src, Some(pb)).unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let st = sw.stats().unwrap();
    assert_eq!(st.port(src).unwrap().counters.rx_packets, 0, "held");
    sw.hold(false).unwrap();
    until("200 frames delivered", || kept(&lb).len() == 200);
    assert_eq!(kept(&lb), frames);
    let st = sw.stop().unwrap();
    assert_eq!(st.port(src).unwrap().counters.rx_packets, 200);
    assert_eq!(st.port(pb).unwrap().counters.total_drops(), 0);
}

/// A port whose health a test controls, that receives what the test
/// pushes and logs what it is sent.
struct TestPort {
    down: Arc<std::sync::atomic::AtomicBool>,
    inbox: Arc<std::sync::Mutex<Vec<Vec<u8>>>>,
    sent: Arc<std::sync::Mutex<Vec<Vec<u8>>>>,
}

impl clickos_switch::Port for TestPort {
    fn kind(&self) -> &'static str {
        "test"
    }
    fn describe(&self) -> String {
        "test port".into()
    }
    fn recv(&mut self, max: usize, f: &mut dyn FnMut(&[u8])) -> usize {
        let mut q = self.inbox.lock().unwrap();
        let n = q.len().min(max);
        for fr in q.drain(..n) {
            f(&fr);
        }
        n
    }
    fn queue(&mut self, frame: &[u8]) -> Result<(), clickos_switch::Refused> {
        self.sent.lock().unwrap().push(frame.to_vec());
        Ok(())
    }
    fn flush(&mut self) -> bool {
        false
    }
    fn max_frame(&self) -> usize {
        2048
    }
    fn poll_fd(&self) -> Option<std::os::fd::RawFd> {
        None
    }
    fn arm(&mut self) -> bool {
        self.inbox.lock().unwrap().is_empty()
    }
    fn health(&mut self) -> clickos_switch::Health {
        if self.down.load(Ordering::Relaxed) {
            clickos_switch::Health::Down("gone".into())
        } else {
            clickos_switch::Health::Up
        }
    }
}

type Shared<T> = Arc<std::sync::Mutex<T>>;

type TestPortHandles = (
    usize,
    Arc<std::sync::atomic::AtomicBool>,
    Shared<Vec<Vec<u8>>>,
    Shared<Vec<Vec<u8>>>,
);

fn test_port(sw: &SwitchHandle, name: &str) -> TestPortHandles {
    let down = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let inbox: Shared<Vec<Vec<u8>>> = Default::default();
    let sent: Shared<Vec<Vec<u8>>> = Default::default();
    let p = TestPort {
        down: down.clone(),
        inbox: inbox.clone(),
        sent: sent.clone(),
    };
    let id = sw
        .add_port(
            name,
            Box::new(move || Ok(Box::new(p) as Box<dyn clickos_switch::Port>)),
        )
        .unwrap();
    (id, down, inbox, sent)
}

#[test]
fn a_port_that_goes_down_is_reported_and_takes_nothing() {
    let sw = SwitchHandle::spawn(SwitchOptions::default()).unwrap();
    let (x, xdown, _xin, xsent) = test_port(&sw, "x");
    let (y, _ydown, yin, ysent) = test_port(&sw, "y");
    sw.wire(x, y).unwrap();
    yin.lock().unwrap().push(frame(A, B, 1));
    until("frame 1 crossed", || xsent.lock().unwrap().len() == 1);
    xdown.store(true, Ordering::Relaxed);
    until("x reported down", || {
        sw.stats().unwrap().port(x).unwrap().health != clickos_switch::Health::Up
    });
    let ev = sw.events();
    assert_eq!(ev.len(), 1, "{ev:?}");
    assert_eq!((ev[0].port, ev[0].port_name.as_str()), (x, "x"));
    assert_eq!(
        ev[0].to_string(),
        format!("switch sw0: port {x} (x): down: gone")
    );
    yin.lock().unwrap().push(frame(A, B, 2));
    until("frame 2 counted", || {
        sw.stats()
            .unwrap()
            .port(x)
            .unwrap()
            .counters
            .drops(Drop::Down)
            == 1
    });
    assert_eq!(
        xsent.lock().unwrap().len(),
        1,
        "a down port is sent nothing"
    );
    assert!(ysent.lock().unwrap().is_empty());
    let st = sw.stats().unwrap();
    assert_eq!(st.by_name("y").unwrap().id, y);
    assert_eq!(st.by_name("y").unwrap().counters.rx_packets, 2);
    assert_eq!(st.by_name("y").unwrap().counters.rx_bytes, 120);
    assert!(st.by_name("z").is_none());
}

#[test]
fn hairpins_runts_and_the_ethernet_header_boundary() {
    let sw = SwitchHandle::spawn(SwitchOptions {
        flood_unknown: false,
        ..Default::default()
    })
    .unwrap();
    let (x, _, xin, xsent) = test_port(&sw, "x");
    let (y, _, _yin, ysent) = test_port(&sw, "y");
    sw.insert(B, x).unwrap();
    sw.insert(C, y).unwrap();
    let mut header_only = frame(C, A, 0);
    header_only.truncate(14);
    let mut runt = header_only.clone();
    runt.truncate(13);
    xin.lock().unwrap().extend([
        frame(B, A, 1),
        header_only.clone(),
        runt,
        frame([2, 0, 0, 0, 0, 0xee], A, 2),
    ]);
    until("all four seen", || {
        sw.stats().unwrap().port(x).unwrap().counters.rx_packets == 4
    });
    let st = sw.stats().unwrap();
    let c = &st.port(x).unwrap().counters;
    assert_eq!(c.drops(Drop::Hairpin), 1);
    assert_eq!(c.drops(Drop::Runt), 1);
    assert_eq!(c.drops(Drop::NoRoute), 1);
    assert_eq!(*ysent.lock().unwrap(), vec![header_only]);
    assert!(xsent.lock().unwrap().is_empty());
}

#[test]
fn a_disabled_port_receives_nothing_until_enabled_and_removed_ports_are_gone() {
    let sw = SwitchHandle::spawn(SwitchOptions::default()).unwrap();
    let (pb, lb) = sink(&sw, "b");
    let src = sw
        .add_port_disabled("a", MemSource::new(vec![frame(B, A, 3)], 5).spec())
        .unwrap();
    sw.patch(src, Some(pb)).unwrap();
    std::thread::sleep(Duration::from_millis(30));
    assert_eq!(
        sw.stats().unwrap().port(src).unwrap().counters.rx_packets,
        0
    );
    sw.enable(src).unwrap();
    until("five delivered", || kept(&lb).len() == 5);
    sw.remove_port(pb).unwrap();
    assert!(
        sw.patch(src, Some(pb)).is_err(),
        "a removed port cannot be patched to"
    );
    assert!(sw.insert(B, pb).is_err());
    assert!(sw.enable(pb).is_err());
    assert!(sw.remove_port(pb).is_err());
    let st = sw.stats().unwrap();
    assert!(st.port(pb).is_none());
}

#[test]
fn an_idle_switch_sleeps_and_a_busy_one_does_not() {
    let sw = SwitchHandle::spawn(SwitchOptions::default()).unwrap();
    let (pb, _lb) = sink(&sw, "b");
    let (s, go) = MemSource::gated(vec![frame(B, A, 1)], u64::MAX);
    let src = sw.add_port("a", s.spec()).unwrap();
    sw.patch(src, Some(pb)).unwrap();
    // Idle (the source is gated): the switch arms its ports and sleeps.
    until("slept", || sw.stats().unwrap().sleeps >= 2);
    // Busy: an always-ready source keeps it polling.
    go.store(true, Ordering::Release);
    until("forwarding", || {
        sw.stats().unwrap().port(pb).unwrap().counters.tx_packets > 1000
    });
    let before = sw.stats().unwrap().sleeps;
    std::thread::sleep(Duration::from_millis(150));
    let after = sw.stats().unwrap().sleeps;
    // Each stats request wakes it once at most; no sleeps of its own.
    assert!(
        after - before <= 1,
        "slept {} times while busy",
        after - before
    );
}
