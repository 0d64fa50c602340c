//! ControlSocket through `clickos run -p PORT` / `-u FILE`: a plain socket
//! client speaks Click's protocol exactly as its documentation describes.

mod common;
use common::cs::*;
use common::*;

use std::io::Write;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::Command;
use std::time::{Duration, Instant};

const COUNTER_CFG: &str = "c :: Counter; src :: RatedSource(DATA \"x\", RATE 2000) -> c -> Discard; \
     rt :: RadixIPLookup(10.0.0.0/8 1, 0.0.0.0/0 0); Idle -> rt; rt[0] -> Discard; rt[1] -> Discard; \
     elementclass Box { input -> inner :: Counter -> output }; RatedSource(RATE 500) -> b :: Box -> Discard;";

#[test]
fn tcp_read_write_and_errors() {
    let (mut server, port, mut c) = start_cfg(COUNTER_CFG, &["-h", "c.count"]);

    // the counter grows
    let a = c.count("c.count");
    let t0 = Instant::now();
    let mut b = c.count("c.count");
    while b <= a {
        assert!(t0.elapsed() < Duration::from_secs(10), "count stuck at {a}");
        std::thread::sleep(Duration::from_millis(20));
        b = c.count("c.count");
    }
    // reset_counts brings it back down
    std::thread::sleep(Duration::from_millis(200));
    let before = c.count("c.count");
    let r = c.cmd("WRITE c.reset_counts");
    assert_eq!(
        (r.code, r.text()),
        (200, "Write handler 'c.reset_counts' OK".into())
    );
    let after = c.count("c.count");
    assert!(after < before, "after reset {after}, before {before}");

    // GET and SET are synonyms; element numbers and global names work
    let r = c.cmd("GET c.class");
    assert_eq!(r.code, 200);
    assert_eq!(c.data(), b"Counter");
    assert_eq!(c.read("1.name"), "c");
    assert_eq!(c.read(".version"), c.read("version"));
    assert!(c.read("list").contains("\nclick_driver@@ControlSocket\n"));
    assert_eq!(c.read("click_driver@@ControlSocket.port"), port.to_string());
    assert_eq!(
        c.read("click_driver@@ControlSocket.config"),
        format!("TCP, {port}")
    );

    // compound element paths
    assert_eq!(c.read("b/inner.class"), "Counter");
    let t0 = Instant::now();
    while c.count("b/inner.count") == 0 {
        assert!(t0.elapsed() < Duration::from_secs(10));
        std::thread::sleep(Duration::from_millis(20));
    }

    // read handler with parameters
    let r = c.cmd("READ rt.lookup 10.1.2.3");
    assert_eq!(r.code, 200);
    assert_eq!(c.data(), b"1");
    let r = c.cmd("READ rt.lookup 192.168.1.1");
    assert_eq!(r.code, 200);
    assert_eq!(c.data(), b"0");

    // errors, with Click's codes and words
    let r = c.cmd("READ nosuch.count");
    assert_eq!(
        (r.code, r.text()),
        (510, "No element named 'nosuch'".into())
    );
    let r = c.cmd("READ c.nosuch");
    assert_eq!(
        (r.code, r.text()),
        (511, "No handler named 'c.nosuch'".into())
    );
    let r = c.cmd("READ nosuch");
    assert_eq!(
        (r.code, r.text()),
        (511, "No handler named 'nosuch'".into())
    );
    let r = c.cmd("READ 99.name");
    assert_eq!((r.code, r.text()), (510, "No element named '99'".into()));
    let r = c.cmd("WRITE c.count 5");
    assert_eq!(
        (r.code, r.text()),
        (530, "Handler 'c.count' read-only".into())
    );
    let r = c.cmd("WRITE version 5");
    assert_eq!(
        (r.code, r.text()),
        (530, "Handler 'version' read-only".into())
    );
    let r = c.cmd("READ c.reset_counts");
    assert_eq!(
        (r.code, r.text()),
        (530, "Handler 'c.reset_counts' write-only".into())
    );
    let r = c.cmd("WRITE nosuch.x 1");
    assert_eq!(
        (r.code, r.text()),
        (510, "No element named 'nosuch'".into())
    );
    let r = c.cmd("WRITE click_driver@@ControlSocket.port 1");
    assert_eq!(r.code, 530);
    // a failing write handler: 520 with the handler's message
    let r = c.cmd("WRITE rt.add garbage");
    assert_eq!(r.code, 520);
    assert_eq!(r.lines[0], "Write handler 'rt.add' error:");
    assert!(r.lines.len() >= 2, "{r:?}");
    // a failing read handler: 590, as Click's CSERR_UNSPECIFIED
    let r = c.cmd("READ rt.lookup notanaddress");
    assert_eq!(r.code, 590);
    assert_eq!(r.lines[0], "Read handler 'rt.lookup' error:");
    let r = c.cmd("READ");
    assert_eq!(
        (r.code, r.text()),
        (500, "Wrong number of arguments".into())
    );

    // CHECKREAD / CHECKWRITE
    let r = c.cmd("CHECKREAD c.count");
    assert_eq!(
        (r.code, r.text()),
        (200, "Read handler 'c.count' OK".into())
    );
    let r = c.cmd("CHECKWRITE c.count");
    assert_eq!(
        (r.code, r.text()),
        (511, "Handler 'c.count' not writable".into())
    );
    let r = c.cmd("CHECKWRITE c.reset_counts");
    assert_eq!(
        (r.code, r.text()),
        (200, "Write handler 'c.reset_counts' OK".into())
    );
    let r = c.cmd("CHECKREAD c.reset_counts");
    assert_eq!(
        (r.code, r.text()),
        (511, "Handler 'c.reset_counts' not readable".into())
    );
    let r = c.cmd("CHECKREAD c.nosuch");
    assert_eq!(
        (r.code, r.text()),
        (511, "No handler named 'c.nosuch'".into())
    );
    let r = c.cmd("CHECKREAD nosuch.count");
    assert_eq!(r.code, 510);
    let r = c.cmd("CHECKWRITE stop");
    assert_eq!((r.code, r.text()), (200, "Write handler 'stop' OK".into()));
    let r = c.cmd("CHECKREAD");
    assert_eq!(r.code, 500);

    // unknown commands; HELP
    let r = c.cmd("FROB c.count");
    assert_eq!(
        (r.code, r.text()),
        (501, "Command 'FROB' unimplemented".into())
    );
    let r = c.cmd("help");
    assert_eq!(r.code, 200);
    assert_eq!(r.lines[0], "Commands supported:");
    assert!(r.lines.len() > 5);

    // the router still runs; stop it: exit 0, -h printed after the run
    assert!(server.alive());
    let (code, out, err) = stop_and_wait(&mut c, server);
    assert_eq!(code, 0, "stderr: {err}");
    assert!(out.trim().parse::<u64>().is_ok(), "stdout {out:?}");
    assert!(c.at_eof());
}

#[test]
fn writedata_readdata_until_and_line_endings() {
    let (server, _port, mut c) = start_cfg(COUNTER_CFG, &[]);

    // WRITEDATA passes raw bytes, CR and LF included
    let payload = b"ab\r\ncd\n ef \r";
    c.send(format!("WRITEDATA src.data {}\r\n", payload.len()).as_bytes());
    c.send(payload);
    let r = c.reply();
    assert_eq!(
        (r.code, r.text()),
        (200, "Write handler 'src.data' OK".into())
    );
    assert_eq!(c.read("src.data").as_bytes(), payload);
    // SETDATA with zero bytes
    let r = c.cmd("SETDATA src.data 0");
    assert_eq!(r.code, 200);
    assert_eq!(c.read("src.data"), "");

    // READDATA: the bytes are the parameter
    c.send(b"READDATA rt.lookup 8\r\n10.9.8.7");
    let r = c.reply();
    assert_eq!(
        (r.code, r.text()),
        (200, "Read handler 'rt.lookup' OK".into())
    );
    assert_eq!(c.data(), b"1");

    // WRITE keeps inner spacing of its value, trims the ends
    let r = c.cmd("WRITE src.data   a  b   ");
    assert_eq!(r.code, 200);
    assert_eq!(c.read("src.data"), "a  b");

    // WRITEUNTIL: lines up to the terminator (trailing spaces ignored)
    c.send(b"WRITEUNTIL src.data END\r\nline1\r\nline2\nEND  \r\n");
    let r = c.reply();
    assert_eq!(r.code, 200, "{r:?}");
    assert_eq!(c.read("src.data"), "line1\r\nline2\n");
    // default terminator: an empty line
    c.send(b"WRITEUNTIL src.data\nx\ny\n\n");
    assert_eq!(c.reply().code, 200);
    assert_eq!(c.read("src.data"), "x\ny\n");

    // payloads split across writes wait for the rest
    c.send(b"WRITEDATA src.data 10\r\n01234");
    std::thread::sleep(Duration::from_millis(100));
    c.send(b"56789");
    assert_eq!(c.reply().code, 200);
    assert_eq!(c.read("src.data"), "0123456789");

    // CR, LF and CRLF all end commands; commands may be pipelined
    c.send(b"READ c.class\rREAD c.name\nREAD 1.name\r\n\r\n   \nREAD c.class\n");
    for want in ["Counter", "c", "c", "Counter"] {
        assert_eq!(c.reply().code, 200);
        assert_eq!(c.data(), want.as_bytes());
    }

    // bad lengths
    let r = c.cmd("WRITEDATA src.data -5");
    assert_eq!(
        (r.code, r.text()),
        (500, "Syntax error in 'WRITEDATA'".into())
    );
    let r = c.cmd("WRITEDATA src.data 99999999999");
    assert_eq!(r.code, 500);
    let r = c.cmd("WRITEDATA src.data");
    assert_eq!(
        (r.code, r.text()),
        (500, "Wrong number of arguments".into())
    );

    let (code, _, err) = stop_and_wait(&mut c, server);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn llrpc_switch_and_counter() {
    let cfg = "s :: Switch(0); Idle -> s -> Idle; s[1] -> Idle; c :: Counter; \
               InfiniteSource(DATA \"abc\", LIMIT 3) -> c -> Discard;";
    let (server, _port, mut c) = start_cfg(cfg, &[]);
    // CLICK_LLRPC_GET_SWITCH: the output, 4 bytes in host order
    let r = c.cmd("LLRPC s#4004C005");
    assert_eq!((r.code, r.text()), (200, "LLRPC 's#4004C005' OK".into()));
    assert_eq!(c.data(), 0i32.to_ne_bytes());
    // CLICK_LLRPC_SET_SWITCH: no output data
    c.send(b"LLRPC s#80044006 4\r\n");
    c.send(&1i32.to_ne_bytes());
    let r = c.reply();
    assert_eq!((r.code, r.text()), (200, "LLRPC 's#80044006' OK".into()));
    assert!(c.data().is_empty());
    assert_eq!(c.read("s.switch"), "1");
    // an output the Switch lacks
    c.send(b"LLRPC s#80044006 4\r\n");
    c.send(&2i32.to_ne_bytes());
    let r = c.reply();
    assert_eq!(
        (r.code, r.text()),
        (522, "LLRPC 's#80044006' error: Invalid argument".into())
    );
    assert_eq!(c.read("s.switch"), "1");
    // -1 drops
    c.send(b"LLRPC s#80044006 4\r\n");
    c.send(&(-1i32).to_ne_bytes());
    assert_eq!(c.reply().code, 200);
    assert!(c.data().is_empty());
    assert_eq!(c.read("s.switch"), "-1");
    // CLICK_LLRPC_GET_COUNT: 0 packets, 1 bytes, else EINVAL
    while c.count("c.count") < 3 {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    c.send(b"LLRPC c#C004C003 4\r\n");
    c.send(&0i32.to_ne_bytes());
    assert_eq!(c.reply().code, 200);
    assert_eq!(c.data(), 3i32.to_ne_bytes());
    c.send(b"LLRPC c#C004C003 4\r\n");
    c.send(&1i32.to_ne_bytes());
    assert_eq!(c.reply().code, 200);
    assert_eq!(c.data(), 9i32.to_ne_bytes());
    c.send(b"LLRPC c#C004C003 4\r\n");
    c.send(&7i32.to_ne_bytes());
    assert_eq!(c.reply().code, 522);
    let (code, _, _) = stop_and_wait(&mut c, server);
    assert_eq!(code, 0);
}

#[test]
fn llrpc_is_refused() {
    let (server, _port, mut c) = start_cfg(COUNTER_CFG, &[]);
    // not a flat LLRPC
    let r = c.cmd("LLRPC c#1");
    assert_eq!(
        (r.code, r.text()),
        (501, "Cannot call LLRPC 'c#1' remotely".into())
    );
    // a flat in/out LLRPC with 4 bytes: Counter does not implement it
    c.send(b"LLRPC c#C0044001 4\r\nabcd");
    let r = c.reply();
    assert_eq!(
        (r.code, r.text()),
        (522, "LLRPC 'c#C0044001' error: Invalid argument".into())
    );
    // the input size must match
    let r = c.cmd("LLRPC c#80044001");
    assert_eq!(
        (r.code, r.text()),
        (522, "LLRPC 'c#80044001' requires 4 bytes input data".into())
    );
    let r = c.cmd("LLRPC nosuch#C0044001");
    assert_eq!(
        (r.code, r.text()),
        (510, "No element named 'nosuch'".into())
    );
    let r = c.cmd("LLRPC c#zz");
    assert_eq!(
        (r.code, r.text()),
        (500, "Syntax error in LLRPC name 'c#zz'".into())
    );
    let r = c.cmd("LLRPC");
    assert_eq!(r.code, 500);
    // the connection still works
    assert_eq!(c.read("c.class"), "Counter");
    let (code, _, _) = stop_and_wait(&mut c, server);
    assert_eq!(code, 0);
}

#[test]
fn junk_long_lines_and_huge_payloads_do_not_hurt() {
    let (mut server, port, mut c) = start_cfg(COUNTER_CFG, &[]);

    // binary junk: an unknown command, echoed printably
    c.send(b"\x01\x02\xff\x7fjunk\x00 more\r\n");
    let r = c.reply();
    assert_eq!(r.code, 501);
    assert_eq!(r.text(), "Command '^A^B\\377^?JUNK^@' unimplemented");
    // a NUL-only line and lone spaces
    c.send(b"\x00\x00\r\n");
    assert_eq!(c.reply().code, 501);

    // a 3 MiB line: refused once, skipped, and the connection goes on
    let big = vec![b'A'; 3 << 20];
    c.send(&big);
    c.send(b"\r\nREAD c.class\r\n");
    let r = c.reply();
    assert_eq!((r.code, r.text()), (500, "Line too long".into()));
    assert_eq!(c.reply().code, 200);
    assert_eq!(c.data(), b"Counter");

    // a payload over the cap: 521, and its bytes are skipped
    let n = 9 << 20;
    c.send(format!("WRITEDATA src.data {n}\r\n").as_bytes());
    let r = c.reply();
    assert_eq!(
        (r.code, r.text()),
        (521, "Data too large for write handler 'src.data'".into())
    );
    let junk = vec![b'\n'; n];
    c.send(&junk);
    assert_eq!(c.read("c.class"), "Counter");

    // an absurd length: refused; that connection is then stuck skipping,
    // but others are served
    let r = c.cmd("WRITEDATA src.data 2147483647");
    assert_eq!(r.code, 521);
    let mut d = Client::tcp(port, &mut server);
    assert_eq!(d.read("c.class"), "Counter");
    drop(c);

    // a client that closes mid-payload gets "Not enough data"
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut e = Client::new(Box::new(s.try_clone().unwrap()));
    e.send(b"READ c.class\r\nWRITEDATA src.data 100\r\nshort");
    s.shutdown(Shutdown::Write).unwrap();
    assert_eq!(e.reply().code, 200);
    assert_eq!(e.data(), b"Counter");
    let r = e.reply();
    assert_eq!((r.code, r.text()), (500, "Not enough data".into()));
    assert!(e.at_eof());

    // a half-closed client's last unterminated line still runs
    let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut f = Client::new(Box::new(s.try_clone().unwrap()));
    f.send(b"READ c.name");
    s.shutdown(Shutdown::Write).unwrap();
    assert_eq!(f.reply().code, 200);
    assert_eq!(f.data(), b"c");
    assert!(f.at_eof());

    // clients that vanish without reading, or reset
    for _ in 0..5 {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.write_all(b"READ list\r\nREAD flatconfig\r\n").unwrap();
        drop(s);
    }

    // QUIT says goodbye and closes
    let r = d.cmd("QUIT");
    assert_eq!((r.code, r.text()), (200, "Goodbye!".into()));
    assert!(d.at_eof());

    let mut g = Client::tcp(port, &mut server);
    assert_eq!(g.read("src.data"), "x");
    let (code, _, err) = stop_and_wait(&mut g, server);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn many_clients_at_once() {
    let (mut server, port, mut first) = start_cfg(COUNTER_CFG, &[]);
    let mut clients: Vec<Client> = (0..60).map(|_| Client::tcp(port, &mut server)).collect();
    // everyone asks at once, then everyone reads
    for (i, c) in clients.iter_mut().enumerate() {
        c.send(format!("READ {}.name\r\nCHECKREAD c.count\r\n", 1 + i % 3).as_bytes());
    }
    for c in clients.iter_mut() {
        assert_eq!(c.reply().code, 200);
        assert!(!c.data().is_empty());
        assert_eq!(c.reply().code, 200);
    }
    // threads hammering in parallel
    let handles: Vec<_> = (0..8)
        .map(|_| {
            std::thread::spawn(move || {
                let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
                let mut c = Client::new(Box::new(s));
                let mut last = 0;
                for _ in 0..50 {
                    let v = c.count("c.count");
                    assert!(v >= last);
                    last = v;
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    drop(clients);
    assert_eq!(first.read("c.class"), "Counter");
    let (code, _, err) = stop_and_wait(&mut first, server);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn unix_socket_and_idle_router_keeps_running() {
    let dir = tmpdir("cs-unix");
    let path = dir.join("ctl.sock");
    let p = path.to_str().unwrap();
    // Idle alone would stop at once; the control socket keeps it running
    let mut server = Server::start(&["-u", p, "-e", "Idle -> Discard"]);
    let mut c = Client::unix(&path, &mut server);
    std::thread::sleep(Duration::from_millis(300));
    assert!(server.alive());
    assert_eq!(c.read("click_driver@@ControlSocket.filename"), p);
    assert_eq!(c.read("click_driver@@ControlSocket.class"), "ControlSocket");
    let r = c.cmd("READ click_driver@@ControlSocket.port");
    assert_eq!(r.code, 511);
    let (code, _, err) = stop_and_wait(&mut c, server);
    assert_eq!(code, 0, "{err}");
    assert!(!path.exists(), "socket file removed at cleanup");
}

#[test]
fn interrupt_stops_cleanly() {
    let dir = tmpdir("cs-int");
    let path = dir.join("ctl.sock");
    let (mut server, _port, mut a) = start_cfg(
        COUNTER_CFG,
        &["-u", path.to_str().unwrap(), "-h", "c.class"],
    );
    let mut b = Client::unix(&path, &mut server);
    assert_eq!(a.read("click_driver@@ControlSocket.class"), "ControlSocket");
    assert_eq!(
        b.read("click_driver@@ControlSocket@1.filename"),
        path.to_str().unwrap()
    );
    let pid = server.pid() as libc::pid_t;
    // SAFETY: signals our own child process.
    unsafe {
        libc::kill(pid, libc::SIGINT);
    }
    let (code, out, err) = server.wait();
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, "Counter\n");
    assert!(!path.exists());
    assert!(a.at_eof());
}

#[test]
fn readonly_keyword_and_config_errors() {
    let (mut server, port, mut c) = start_tcp(|port, token| {
        vec![
            "-e".into(),
            format!(
                "{COUNTER_CFG} {token} :: Idle; \
                 cs :: ControlSocket(TCP, {port}, READONLY true, VERBOSE true);"
            ),
        ]
    });
    let r = c.cmd("WRITE c.reset_counts");
    assert_eq!(
        (r.code, r.text()),
        (530, "Permission denied for 'c.reset_counts'".into())
    );
    let r = c.cmd("CHECKWRITE c.reset_counts");
    assert_eq!(r.code, 530);
    let r = c.cmd("WRITE c.count");
    assert_eq!(
        (r.code, r.text()),
        (530, "Handler 'c.count' read-only".into())
    );
    let r = c.cmd("WRITE stop");
    assert_eq!(r.code, 530);
    assert_eq!(c.read("cs.port"), port.to_string());
    assert!(server.alive());
    drop(c);
    let pid = server.pid() as libc::pid_t;
    std::thread::sleep(Duration::from_millis(100));
    // SAFETY: signals our own child process.
    unsafe {
        libc::kill(pid, libc::SIGTERM);
    }
    let (code, _, err) = server.wait();
    assert_eq!(code, 0);
    assert!(
        err.contains("cs :: ControlSocket: opened connection"),
        "{err}"
    );
    assert!(
        err.contains("cs :: ControlSocket: closed connection"),
        "{err}"
    );

    // configuration errors
    let r = click(&["-q", "-e", "ControlSocket(FOO, 1)"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("unknown socket type 'FOO'"), "{}", r.err);
    let r = click(&["-q", "-e", "ControlSocket(TCP, 70000)"]);
    assert!(r.err.contains("PORT requires TCP port"), "{}", r.err);
    let r = click(&["-q", "-e", "ControlSocket(TCP, 1, PROXY x)"]);
    assert!(r.err.contains("PROXY is not supported"), "{}", r.err);
    let r = click(&["-q", "-e", "ControlSocket(UNIX)"]);
    assert_eq!(r.code, 1);

    // the port is taken: bind fails at initialization
    let hold = TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = hold.local_addr().unwrap().port().to_string();
    let r = click(&["-p", &taken, "-e", "Idle -> Discard"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("bind: Address already in use"), "{}", r.err);
    assert!(
        r.err.contains("Router could not be initialized!"),
        "{}",
        r.err
    );
    // ... and with RETRIES, the router gives up after the retries
    let cfg = format!("ControlSocket(TCP, {taken}, RETRIES 1); Idle -> Discard");
    let r = click(&["-e", &cfg]);
    assert_eq!(r.code, 0, "{}", r.err);
    assert!(r.err.contains("(1 try left)"), "{}", r.err);
    assert!(r.err.contains("bind: Address already in use"), "{}", r.err);
    drop(hold);

    // -R works with one thread only; -p, -u and -R are documented
    let r = click(&["-R", "-q", "-e", "Idle -> Discard"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let r = click(&["-R", "-j", "2", "-e", "Idle -> Discard"]);
    assert_eq!(r.code, 1);
    assert!(r.err.contains("one thread only"), "{}", r.err);
    let r = click(&["--help"]);
    assert!(r.out.contains("-p, --port PORT"));
    assert!(r.out.contains("-u, --unix-socket FILE"));
    assert!(r.out.contains("-R, --allow-reconfigure"));
}

#[test]
fn netcat_client() {
    let have_nc = Command::new("sh")
        .args(["-c", "command -v nc"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !have_nc {
        skip::skip("no `nc` on this machine (scripts/setup installs netcat-openbsd)");
        return;
    }
    let (server, port, c) = start_cfg(COUNTER_CFG, &[]);
    drop(c);
    let out = Command::new("sh")
        .args([
            "-c",
            &format!(
                "printf 'READ c.class\\nCHECKREAD c.count\\nQUIT\\n' | timeout 10 nc 127.0.0.1 {port}"
            ),
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        text,
        "Click::ControlSocket/1.3\r\n200 Read handler 'c.class' OK\r\nDATA 7\r\nCounter\
         200 Read handler 'c.count' OK\r\n200 Goodbye!\r\n"
    );
    let out = Command::new("sh")
        .args([
            "-c",
            &format!("printf 'WRITE stop\\n' | timeout 10 nc 127.0.0.1 {port}"),
        ])
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains("200 Write handler 'stop' OK"));
    let (code, _, err) = server.wait();
    assert_eq!(code, 0, "{err}");
}

const PY_CLIENT: &str = r#"
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
f = s.makefile("rb")
assert f.readline() == b"Click::ControlSocket/1.3\r\n"
def reply():
    lines = []
    while True:
        l = f.readline().decode()
        lines.append(l[4:].rstrip("\r\n"))
        if l[3] == " ":
            return int(l[:3]), lines
def read(h):
    s.sendall(("READ %s\r\n" % h).encode())
    code, lines = reply()
    assert code == 200, (code, lines)
    n = int(f.readline().split()[1])
    return f.read(n).decode()
a = int(read("c.count"))
s.sendall(b"WRITEDATA src.data 5\r\nhello")
assert reply()[0] == 200
assert read("src.data") == "hello"
s.sendall(b"READ nosuch.x\r\n")
assert reply() == (510, ["No element named 'nosuch'"])
s.sendall(b"WRITE stop\r\n")
print(reply()[0], a >= 0)
"#;

#[test]
fn python_client() {
    let have_py = Command::new("python3")
        .arg("--version")
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !have_py {
        skip::skip("no python3 on this machine (scripts/setup installs it)");
        return;
    }
    let dir = tmpdir("cs-py");
    let script = dir.join("client.py");
    std::fs::write(&script, PY_CLIENT).unwrap();
    let (server, port, c) = start_cfg(COUNTER_CFG, &[]);
    drop(c);
    let out = Command::new("python3")
        .arg(&script)
        .arg(port.to_string())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "python client failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout), "200 True\n");
    let (code, _, err) = server.wait();
    assert_eq!(code, 0, "{err}");
}

/// A small deterministic generator for the junk test.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.next() as u8).collect()
    }
}

#[test]
fn random_junk_from_many_clients() {
    let (mut server, port, mut first) = start_cfg(COUNTER_CFG, &[]);
    let mut rng = Lcg(0x5eed_c0de);
    let mut socks: Vec<TcpStream> = Vec::new();
    for round in 0..300 {
        if socks.len() < 12 || rng.below(4) == 0 {
            let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.set_write_timeout(Some(Duration::from_millis(200)))
                .unwrap();
            socks.push(s);
        }
        let i = rng.below(socks.len() as u64) as usize;
        let msg: Vec<u8> = match rng.below(8) {
            0 => {
                let n = rng.below(4096) as usize;
                rng.bytes(n)
            }
            1 => {
                let mut v = b"READ ".to_vec();
                let n = rng.below(40) as usize;
                v.extend(rng.bytes(n));
                v.push(b'\n');
                v
            }
            2 => format!("WRITEDATA src.data {}\r\n", rng.below(1 << 31)).into_bytes(),
            3 => {
                let mut v = b"WRITEDATA c.reset_counts 7\r\n".to_vec();
                let n = rng.below(12) as usize;
                v.extend(rng.bytes(n));
                v
            }
            4 => format!("LLRPC c#{:x} {}\n", rng.next(), rng.below(64)).into_bytes(),
            5 => {
                let n = rng.below(2000) as usize;
                let mut v = rng.bytes(n);
                for b in v.iter_mut() {
                    if *b > 0xf0 {
                        *b = b'\r';
                    } else if *b > 0xe0 {
                        *b = b'\n';
                    }
                }
                v
            }
            6 => b"READUNTIL c.count ZZZ\r\nabc\r\n".to_vec(),
            _ => format!("CHECKREAD {}.count\nREAD {}.name\n", round % 7, round % 9).into_bytes(),
        };
        // the server may have closed this one (QUIT in the junk, say)
        let _ = socks[i].write_all(&msg);
        match rng.below(10) {
            0 => {
                let _ = socks[i].shutdown(Shutdown::Write);
            }
            1 => {
                socks.swap_remove(i);
            }
            _ => {}
        }
    }
    drop(socks);
    // still serving, counting, and well-formed
    assert_eq!(first.read("c.class"), "Counter");
    let mut fresh = Client::tcp(port, &mut server);
    assert_eq!(fresh.read("1.name"), "c");
    let (code, _, err) = stop_and_wait(&mut first, server);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn handlers_on_other_threads() {
    // Under -j 2 the ControlSocket runs on thread 0 and `c1` on thread 1:
    // reads, writes and errors behave as if there were one thread.
    let cfg = "s0 :: RatedSource(RATE 1000) -> c0 :: Counter -> Discard; \
               s1 :: RatedSource(RATE 1000) -> c1 :: Counter -> Discard; \
               StaticThreadSched(s0 0, s1 1);";
    let (server, _port, mut c) = start_cfg(cfg, &["-j", "2", "-h", "c1.count"]);
    let threads = c.read("threads");
    assert!(
        threads
            .lines()
            .any(|l| l.starts_with("thread 1:") && l.split_whitespace().any(|w| w == "c1")),
        "{threads}"
    );
    let t0 = Instant::now();
    while c.count("c1.count") < 20 {
        assert!(t0.elapsed() < Duration::from_secs(10), "c1 does not count");
        std::thread::sleep(Duration::from_millis(20));
    }
    let r = c.cmd("WRITE c1.reset");
    assert_eq!(
        (r.code, r.text()),
        (200, "Write handler 'c1.reset' OK".into())
    );
    assert!(c.count("c1.count") < 20);
    assert_eq!(c.read("c1.class"), "Counter");
    assert!(c.read("list").lines().any(|l| l == "c1"));
    let r = c.cmd("READ nosuch.count");
    assert_eq!(r.code, 510, "{r:?}");
    let r = c.cmd("READ c1.nosuch");
    assert_eq!(r.code, 511, "{r:?}");
    let r = c.cmd("WRITE c1.count 5");
    assert_eq!(r.code, 530, "{r:?}");
    let r = c.cmd("CHECKREAD c1.count");
    assert_eq!(r.code, 200, "{r:?}");
    let (code, out, err) = stop_and_wait(&mut c, server);
    assert_eq!(code, 0, "stderr: {err}");
    assert!(out.trim().parse::<u64>().is_ok(), "{out}");
}

/// `-R` (and `--allow-socket-reconfigure` for `-u`): writing `hotconfig`
/// replaces the running configuration; this very
/// connection carries on with the new router, and elements of the same
/// name keep their state (a Queue its packets, an ARPQuerier its table). A
/// bad configuration is refused with Click's error code and the old one
/// keeps running. Without `-R` there is no `hotconfig` handler.
#[test]
fn hotconfig_replaces_the_configuration_and_keeps_state() {
    let old = "InfiniteSource(LIMIT 5, STOP false) -> q :: Queue(10) -> Idle; \
               Idle -> a :: ARPQuerier(10.0.0.1, 2:0:0:0:0:1) -> Discard; Idle -> [1]a; \
               s :: Switch(0); Idle -> s -> Discard; s[1] -> Discard;";
    // (over a UNIX socket that allows it: tests/hardening.rs checks that
    // TCP and sockets without the opt-in are refused)
    let dir = tmpdir("cs-hotconfig");
    let path = dir.join("ctl.sock");
    let p = path.to_str().unwrap();
    let args = ["-R", "-u", p, "--allow-socket-reconfigure", "-e", old];
    let mut server = Server::start(&args);
    let mut c = Client::unix(&path, &mut server);
    let t0 = Instant::now();
    while c.read("q.length") != "5" {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "the source never filled the queue"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(c.cmd("WRITE a.insert 10.0.0.2 2:0:0:0:0:2").code, 200);
    assert!(c.read("handlers").contains("hotconfig\tw"));

    // refused: the old router keeps running
    let r = c.cmd("WRITE hotconfig Idle -> Print;");
    assert_eq!(r.code, 520, "{r:?}");
    assert!(r.text().contains("output 0 unused"), "{r:?}");
    assert!(
        r.text().ends_with("Router could not be initialized!"),
        "{r:?}"
    );
    let r = c.cmd("WRITE hotconfig Idle -> Nonesuch;");
    assert_eq!(r.code, 520, "{r:?}");
    assert!(r.text().contains("undeclared element 'Nonesuch'"), "{r:?}");
    assert_eq!(c.read("s.config"), "0");

    // replaced, in one go with the commands after it
    let new = "q :: Queue(3) -> Idle; Idle -> q; \
               Idle -> a :: ARPQuerier(10.0.0.1, 2:0:0:0:0:1) -> Discard; Idle -> [1]a; \
               s :: Switch(1); Idle -> s -> Discard; s[1] -> Discard;";
    c.send(format!("WRITE hotconfig {new}\r\nREAD s.config\r\n").as_bytes());
    let r = c.reply();
    assert_eq!(r.code, 200, "{r:?}");
    assert_eq!(r.text(), "Write handler 'hotconfig' OK");
    let r = c.reply();
    assert_eq!(r.code, 200, "{r:?}");
    assert_eq!(c.data(), b"1");
    assert_eq!(c.read("q.length"), "3");
    assert!(
        c.read("a.table").contains("10.0.0.2 1 02-00-00-00-00-02"),
        "the ARP entry did not survive the swap"
    );
    // the old configuration's elements are gone
    assert_eq!(c.cmd("READ InfiniteSource@1.count").code, 510);
    assert_eq!(c.cmd("WRITE stop").code, 200);
    let (code, _out, err) = server.wait();
    assert_eq!(code, 0, "stderr: {err}");
    assert!(
        err.contains("q :: Queue: warning: some packets lost (old length 5, new capacity 3)"),
        "{err}"
    );

    let (server, _port, mut c) = start_cfg("Idle -> Discard;", &[]);
    let r = c.cmd("WRITE hotconfig Idle -> Discard;");
    assert_eq!(r.code, 511, "{r:?}");
    drop(server);
}
