//! The mailbox client and the watchdog against a fake, scriptable
//! instance: whatever it writes, the host must neither panic nor read out
//! of bounds, and must end it with the right reason.

use crate::backend::{Backend, Ended, LaunchSpec, Prepare};
use crate::instance::{Instance, InstanceOptions, State};
use crate::{ConfigError, CreateError, HandlerError};
use clickos_ring::layout::{CONTROL_SIZE, DATA_OFF, MAILBOX_OFF};
use clickos_ring::mailbox::{state, Mailbox, Op, Request, Status};
use clickos_ring::ring::{Consumer, Dir, RingHeader, Slot, HEADER_BYTES};
use clickos_ring::VnicInfo;
use clickos_sys::{drain, signal, wait_readable, EventFd, Mapping};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What the fake does with one request: (seq, op, name, payload).
type Script = dyn Fn(&Mailbox, *mut u8, Request, &str, &[u8]) + Send + Sync;

struct FakeShared {
    control: Mapping,
    /// One vNIC region when the options ask for vNICs.
    vnic: Option<(Mapping, VnicInfo)>,
    wake: EventFd,
    done: EventFd,
    stop: AtomicBool,
    ended: Mutex<Option<Ended>>,
}

struct Fake {
    s: Arc<FakeShared>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

/// A well-behaved reply.
fn reply(mb: &Mailbox, data: *mut u8, seq: u32, st: u32, payload: &[u8]) {
    // SAFETY: payloads in these tests are far smaller than the data area.
    unsafe { std::ptr::copy_nonoverlapping(payload.as_ptr(), data, payload.len()) };
    mb.status.store(st, Ordering::Relaxed);
    mb.resp_len.store(payload.len() as u32, Ordering::Relaxed);
    mb.resp_seq.store(seq, Ordering::Release);
}

fn launch_fake(
    script: Arc<Script>,
) -> impl Fn(&LaunchSpec, Prepare) -> Result<Box<dyn Backend>, String> {
    launch_fake_vnic(script, |_, _| {})
}

/// As [`launch_fake`]; with vNICs in the options the fake has one vNIC
/// region, initialised, and `before_attach` sees it (as the instance would,
/// running before the host attaches its ring endpoints).
fn launch_fake_vnic(
    script: Arc<Script>,
    before_attach: impl Fn(*mut u8, &VnicInfo) + Send + Sync + 'static,
) -> impl Fn(&LaunchSpec, Prepare) -> Result<Box<dyn Backend>, String> {
    move |spec, prepare| {
        let vnic = match spec.vnics.first() {
            Some(v) => {
                let info = clickos_ring::layout::vnic_layout(v.slots, v.buf_size, v.mac)
                    .ok_or("bad vNIC geometry")?;
                let m = Mapping::anonymous(info.size as usize).map_err(|e| e.to_string())?;
                // SAFETY: a fresh mapping of info.size bytes.
                unsafe { clickos_ring::ring::init_region(m.ptr(), &info) };
                before_attach(m.ptr(), &info);
                Some((m, info))
            }
            None => None,
        };
        let s = Arc::new(FakeShared {
            vnic,
            control: Mapping::anonymous(CONTROL_SIZE).map_err(|e| e.to_string())?,
            wake: clickos_sys::eventfd().map_err(|e| e.to_string())?,
            done: clickos_sys::eventfd().map_err(|e| e.to_string())?,
            stop: AtomicBool::new(false),
            ended: Mutex::new(None),
        });
        let control = s.control.ptr();
        // SAFETY: the fake's mailbox page inside its own region.
        let mb = unsafe { &*(control.add(MAILBOX_OFF as usize) as *const Mailbox) };
        mb.reset();
        prepare(control);
        mb.state.store(state::IDLE, Ordering::SeqCst);
        let s2 = s.clone();
        let script = script.clone();
        let t = std::thread::spawn(move || {
            // SAFETY: as above; the region lives as long as `s2`.
            let mb = unsafe { &*(s2.control.ptr().add(MAILBOX_OFF as usize) as *const Mailbox) };
            // SAFETY: the data area is inside the region.
            let data = unsafe { s2.control.ptr().add(DATA_OFF as usize) };
            let mut last = 0;
            while !s2.stop.load(Ordering::Relaxed) {
                if mb.pending(last) {
                    let req = Request::take(mb).unwrap();
                    last = req.seq;
                    let name = String::from_utf8_lossy(&mb.name[..req.name_len]).into_owned();
                    let mut payload = vec![0u8; req.data_len];
                    // SAFETY: data_len was checked by Request::take.
                    unsafe {
                        std::ptr::copy_nonoverlapping(data, payload.as_mut_ptr(), req.data_len)
                    };
                    script(mb, data, req, &name, &payload);
                    if mb.host_waiting.swap(0, Ordering::AcqRel) != 0 {
                        signal(&s2.done);
                    }
                    continue;
                }
                wait_readable(&s2.wake, Some(Duration::from_millis(5)));
                drain(&s2.wake);
            }
        });
        Ok(Box::new(Fake {
            s,
            thread: Mutex::new(Some(t)),
        }) as Box<dyn Backend>)
    }
}

impl Backend for Fake {
    fn control(&self) -> *mut u8 {
        self.s.control.ptr()
    }
    fn vnic(&self, k: usize) -> Option<(*mut u8, VnicInfo)> {
        self.s
            .vnic
            .as_ref()
            .filter(|_| k == 0)
            .map(|(m, info)| (m.ptr(), *info))
    }
    fn wake(&self) {
        signal(&self.s.wake);
    }
    fn wait_notify(&self, timeout: Duration) {
        wait_readable(&self.s.done, Some(timeout));
        drain(&self.s.done);
    }
    fn wait_vnic(&self, _k: usize, timeout: Duration) {
        std::thread::sleep(timeout);
    }
    fn ended(&self) -> Option<Ended> {
        self.s.ended.lock().unwrap().clone()
    }
    fn kill(&self, why: &str) {
        let mut e = self.s.ended.lock().unwrap();
        if e.is_none() {
            *e = Some(Ended::Killed(why.into()));
        }
        self.s.stop.store(true, Ordering::Relaxed);
    }
    fn phases(&self) -> Vec<(&'static str, Duration)> {
        vec![]
    }
}

impl Drop for Fake {
    fn drop(&mut self) {
        self.s.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.lock().unwrap().take() {
            let _ = t.join();
        }
    }
}

fn opts() -> InstanceOptions {
    InstanceOptions {
        watchdog: Duration::from_millis(300),
        boot_timeout: Duration::from_millis(500),
        ..Default::default()
    }
}

/// A fake that installs anything and answers READs with `read`.
fn fake(
    read: impl Fn(&Mailbox, *mut u8, Request, &str, &[u8]) + Send + Sync + 'static,
) -> Instance {
    let script: Arc<Script> = Arc::new(move |mb, data, req, name, payload| {
        if req.op == Op::Install.code() {
            reply(mb, data, req.seq, Status::Ok.code(), b"");
        } else {
            read(mb, data, req, name, payload)
        }
    });
    Instance::create_on(1, "x", &opts(), &launch_fake(script)).unwrap()
}

fn wait_ended(i: &Instance) -> Ended {
    let t0 = Instant::now();
    while i.ended().is_none() && t0.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(10));
    }
    i.ended().expect("ended")
}

fn crashed_with(e: &Ended, what: &str) -> bool {
    matches!(e, Ended::Crashed(m) if m.contains(what))
}

#[test]
fn replies_map_to_results_and_payloads_are_lossy_utf8() {
    let i = fake(|mb, data, req, name, payload| {
        let st = match name {
            "e.ok" => Status::Ok,
            "nope.x" => Status::NoSuchElement,
            "e.nope" => Status::NoSuchHandler,
            "e.ro" => Status::PermissionDenied,
            "e.fail" => Status::Failed,
            _ => Status::Busy,
        }
        .code();
        let mut p = b"\xffok ".to_vec();
        p.extend_from_slice(payload);
        reply(mb, data, req.seq, st, &p);
    });
    assert_eq!(i.read_param("e.ok", "arg").unwrap(), "\u{fffd}ok arg");
    assert!(matches!(
        i.read("nope.x"),
        Err(HandlerError::NoSuchElement(_))
    ));
    assert!(matches!(
        i.read("e.nope"),
        Err(HandlerError::NoSuchHandler(_))
    ));
    assert!(matches!(
        i.write("e.ro", "1"),
        Err(HandlerError::PermissionDenied(_))
    ));
    assert!(matches!(i.read("e.fail"), Err(HandlerError::Failed(_))));
    assert!(matches!(i.read("other.x"), Err(HandlerError::Busy)));
    assert_eq!(i.state(), State::Idle);
    assert!(i.ended().is_none());
}

#[test]
fn a_bad_initial_config_is_an_error_with_its_lines() {
    let script: Arc<Script> = Arc::new(|mb, data, req, _, _| {
        reply(
            mb,
            data,
            req.seq,
            Status::Config.code(),
            b"config:1: no class 'Foo'\nrouter could not be initialized\n",
        )
    });
    match Instance::create_on(1, "x", &opts(), &launch_fake(script)) {
        Err(CreateError::Config(ConfigError::Invalid(l))) => {
            assert_eq!(
                l,
                [
                    "config:1: no class 'Foo'",
                    "router could not be initialized"
                ]
            )
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn no_reply_during_boot_times_out() {
    let script: Arc<Script> = Arc::new(|_, _, _, _, _| {});
    match Instance::create_on(1, "x", &opts(), &launch_fake(script)) {
        Err(CreateError::Instance(HandlerError::Ended(Ended::Killed(m)))) => {
            assert!(m.contains("unresponsive"), "{m}")
        }
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn garbage_status_length_or_seq_crashes_the_instance() {
    let i = fake(|mb, data, req, _, _| reply(mb, data, req.seq, 1000, b""));
    assert!(i.read("a.b").is_err());
    assert!(crashed_with(
        &i.ended().unwrap(),
        "corrupted mailbox: status"
    ));

    let i = fake(|mb, _, req, _, _| {
        mb.status.store(0, Ordering::Relaxed);
        mb.resp_len.store(u32::MAX, Ordering::Relaxed);
        mb.resp_seq.store(req.seq, Ordering::Release);
    });
    assert!(i.read("a.b").is_err());
    assert!(crashed_with(
        &i.ended().unwrap(),
        "corrupted mailbox: resp_len"
    ));

    let i = fake(|mb, data, req, _, _| reply(mb, data, req.seq.wrapping_add(7), 0, b""));
    assert!(i.read("a.b").is_err());
    assert!(crashed_with(
        &i.ended().unwrap(),
        "corrupted mailbox: resp_seq"
    ));
    // Every later call fails cleanly.
    assert!(matches!(i.read("a.b"), Err(HandlerError::Ended(_))));
    assert_eq!(i.state(), State::Ended);
}

#[test]
fn an_unanswered_request_kills_with_the_reason() {
    let i = fake(|_, _, _, _, _| {});
    let t0 = Instant::now();
    let r = i.read("slow.handler");
    assert!(t0.elapsed() >= Duration::from_millis(300));
    assert!(matches!(r, Err(HandlerError::Ended(Ended::Killed(_)))));
    match i.ended().unwrap() {
        Ended::Killed(m) => assert_eq!(
            m,
            "unresponsive: no reply to READ slow.handler within 0.300 s"
        ),
        e => panic!("{e}"),
    }
}

#[test]
fn the_watchdog_catches_a_scribbled_state_and_a_stuck_heartbeat() {
    let i = fake(|mb, data, req, _, _| reply(mb, data, req.seq, 0, b""));
    i.read("a.b").unwrap();
    // SAFETY: test-only look at the fake's mailbox.
    let mb = unsafe { &*(i.control_for_tests().add(MAILBOX_OFF as usize) as *const Mailbox) };
    mb.state.store(0x7777, Ordering::Relaxed);
    assert!(crashed_with(&wait_ended(&i), "corrupted mailbox: state"));

    let i = fake(|mb, data, req, _, _| reply(mb, data, req.seq, 0, b""));
    // SAFETY: as above.
    let mb = unsafe { &*(i.control_for_tests().add(MAILBOX_OFF as usize) as *const Mailbox) };
    mb.state.store(state::RUNNING, Ordering::Relaxed);
    match wait_ended(&i) {
        Ended::Killed(m) => assert!(m.contains("unresponsive") && m.contains("heartbeat"), "{m}"),
        e => panic!("{e}"),
    }

    // A running instance whose heartbeat moves is left alone.
    let i = fake(|mb, data, req, _, _| reply(mb, data, req.seq, 0, b""));
    // SAFETY: as above.
    let mb = unsafe { &*(i.control_for_tests().add(MAILBOX_OFF as usize) as *const Mailbox) };
    mb.state.store(state::RUNNING, Ordering::Relaxed);
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_millis(900) {
        mb.heartbeat.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(i.ended().is_none());
}

#[test]
fn oversized_requests_are_refused_locally() {
    let i = fake(|mb, data, req, _, _| reply(mb, data, req.seq, 0, b""));
    assert!(matches!(
        i.read(&"n".repeat(256)),
        Err(HandlerError::BadRequest(_))
    ));
    let big = "v".repeat(clickos_ring::layout::DATA_SIZE + 1);
    assert!(matches!(i.write("a.b", &big), Err(HandlerError::TooLarge)));
    assert!(i.read("a.b").is_ok());
}

/// An instance with one vNIC whose fake answers everything with OK;
/// `before_attach` plays the instance before the host attaches.
fn fake_with_vnic(
    before_attach: impl Fn(*mut u8, &VnicInfo) + Send + Sync + 'static,
) -> (Instance, *mut u8, VnicInfo) {
    let script: Arc<Script> = Arc::new(|mb, data, req, _, _| reply(mb, data, req.seq, 0, b""));
    let o = InstanceOptions {
        vnics: vec![crate::VnicSpec {
            slots: 64,
            ..Default::default()
        }],
        ..opts()
    };
    let i = Instance::create_on(1, "x", &o, &launch_fake_vnic(script, before_attach)).unwrap();
    let (base, info) = i.inner_backend_vnic_for_tests(0);
    (i, base, info)
}

fn ring_header(base: *mut u8, off: u32) -> &'static RingHeader {
    // SAFETY: test-only: the header at `off` of a vNIC region the instance
    // keeps mapped while the test uses it.
    unsafe { &*(base.add(off as usize) as *const RingHeader) }
}

fn slot(base: *mut u8, off: u32, i: u32) -> &'static Slot {
    // SAFETY: as above; slot i of the ring at `off` (i < slots).
    unsafe { &*(base.add(off as usize + HEADER_BYTES as usize + 8 * i as usize) as *const Slot) }
}

/// The instance writes the host's own ring indices (RX head, TX tail)
/// before the host attaches: the host starts from its own 0 and works.
#[test]
fn the_host_never_takes_the_instances_word_for_its_own_ring_index() {
    let (i, base, info) = fake_with_vnic(|base, info| {
        ring_header(base, info.rx_off)
            .head
            .store(0x8000_0123, Ordering::Relaxed);
        ring_header(base, info.tx_off)
            .tail
            .store(0x0BAD_F00D, Ordering::Relaxed);
    });
    let port = i.vnic(0).unwrap();
    assert!(port.send_now(b"down"), "{:?}", i.ended());
    assert_eq!(i.ended(), None);
    // SAFETY: the region stays mapped while `i` lives; the test is the
    // instance's only consumer of its RX ring.
    let mut rx = unsafe { Consumer::new(base, &info, Dir::Rx) };
    let mut got = vec![];
    assert_eq!(rx.pop(|d| got.extend_from_slice(d)), Ok(true));
    assert_eq!(got, b"down");
    // A frame the instance publishes is read from the host's own tail 0.
    let s0 = slot(base, info.tx_off, 0);
    // SAFETY: TX slot 0's own buffer (`slots`) lies in the pool.
    unsafe {
        let buf = base.add(info.bufs_off as usize + (info.slots * info.buf_size) as usize);
        std::ptr::copy_nonoverlapping(b"up".as_ptr(), buf, 2);
    }
    s0.buf_idx.store(info.slots, Ordering::Relaxed);
    s0.len_flags.store(2, Ordering::Relaxed);
    ring_header(base, info.tx_off)
        .head
        .store(1, Ordering::Release);
    assert_eq!(port.recv().as_deref(), Some(&b"up"[..]));
    assert_eq!(i.ended(), None);
}

/// Slots with lengths beyond the buffer are corruption: the instance is
/// reported (not skipped over in a loop) and `recv` returns.
#[test]
fn bad_slot_lengths_are_corruption() {
    let (i, base, info) = fake_with_vnic(|_, _| {});
    for k in 0..info.slots {
        let s = slot(base, info.tx_off, k);
        s.buf_idx.store(info.slots + k, Ordering::Relaxed);
        s.len_flags.store(0xFFFF, Ordering::Relaxed);
    }
    ring_header(base, info.tx_off)
        .head
        .store(info.slots, Ordering::Release);
    let port = i.vnic(0).unwrap();
    assert_eq!(port.recv(), None);
    match i.ended() {
        Some(Ended::Crashed(m)) => {
            assert!(
                m.contains("corrupted ring") && m.contains("slot length"),
                "{m}"
            )
        }
        e => panic!("bad slot lengths not reported: {e:?}"),
    }
}

/// A `/proc/self/status` field in KiB.
fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap()
}

/// A process-level "instance" that writes one 100 MB line to its
/// standard error: the host forwards a bounded, marked prefix and keeps
/// draining, and its own memory stays bounded (it used to grow by the
/// line's size several times over).
#[test]
fn one_huge_stderr_line_keeps_the_parent_bounded() {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("clickos-longline-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("instance.sh");
    std::fs::write(
        &script,
        "#!/bin/sh\nhead -c 100000000 /dev/zero | tr '\\0' x >&2\necho >&2\necho 'and the end' >&2\n",
    )
    .unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bytes = Arc::new(std::sync::atomic::AtomicU64::new(0));
    let lines = Arc::new(Mutex::new(Vec::<String>::new()));
    let (b, l) = (bytes.clone(), lines.clone());
    let o = InstanceOptions {
        isolation: crate::Isolation::Process,
        helper_exe: Some(script),
        console: Some(Arc::new(move |_, text: &str| {
            b.fetch_add(text.len() as u64, Ordering::Relaxed);
            let mut l = l.lock().unwrap();
            if l.len() < 8 {
                // The start and the end of each line.
                let c: Vec<char> = text.chars().collect();
                let head: String = c.iter().take(40).collect();
                let tail: String = c[c.len().saturating_sub(80)..].iter().collect();
                l.push(format!("{head}...{tail}"));
            }
        })),
        boot_timeout: Duration::from_secs(60),
        ..Default::default()
    };
    let hwm0 = status_kib("VmHWM:");
    let r = Instance::create(77, "x", &o);
    let grown = status_kib("VmHWM:").saturating_sub(hwm0);
    let _ = std::fs::remove_dir_all(&dir);
    let forwarded = bytes.load(Ordering::Relaxed);
    let lines = lines.lock().unwrap().clone();
    let r = r.map(|_| ());
    println!(
        "peak memory grew by {grown} KiB; {forwarded} bytes forwarded; {r:?}; lines {lines:?}"
    );
    match r {
        Err(CreateError::Instance(HandlerError::Ended(Ended::Exited(0)))) => {}
        Err(e) => panic!("{e}"),
        Ok(_) => panic!("the script answered the mailbox?"),
    }
    assert!(grown < 32 << 10, "peak memory grew by {grown} KiB");
    assert!(forwarded < 1 << 20, "{forwarded} bytes forwarded");
    assert!(
        lines.iter().any(|l| l.contains("line truncated")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.contains("and the end")), "{lines:?}");
}
