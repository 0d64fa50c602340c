//! `clickos run` inside a network namespace with a UNIX control socket:
//! started, read through the socket, stopped with SIGTERM (its `-h`
//! output and standard error returned), killed on drop.

use super::{bin, tmpdir};

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub struct NsClick {
    child: Option<Child>,
    sock: PathBuf,
}

impl NsClick {
    /// `ip netns exec NS clickos run -u SOCK -e CONFIG [-h H]...`, waiting
    /// until the control socket exists (panics with the output if clickos
    /// exits first or takes over 10 s). `tmp` names the temporary directory.
    pub fn start(ns: &str, tmp: &str, config: &str, handlers: &[&str]) -> NsClick {
        NsClick::start_with(ns, tmp, &[], config, handlers)
    }

    /// [`NsClick::start`] with more `clickos run` options.
    pub fn start_with(
        ns: &str,
        tmp: &str,
        options: &[&str],
        config: &str,
        handlers: &[&str],
    ) -> NsClick {
        let sock = tmpdir(tmp).join("ctl");
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns, bin(), "run"])
            .args(options)
            .arg("-u")
            .arg(&sock)
            .args(["-e", config]);
        for h in handlers {
            cmd.args(["-h", h]);
        }
        let child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn clickos");
        let mut c = NsClick {
            child: Some(child),
            sock,
        };
        let t0 = Instant::now();
        while !c.sock.exists() {
            if let Some(Ok(Some(_))) = c.child.as_mut().map(|ch| ch.try_wait()) {
                let (out, err) = c.stop();
                panic!("clickos exited early:\n{out}\n{err}");
            }
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "clickos did not start"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        c
    }

    /// The clickos process (`ip netns exec` executes it in its own place).
    #[allow(dead_code)]
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, |c| c.id())
    }

    /// Handler `h`'s value through the control socket (panics on an error
    /// reply).
    pub fn read(&self, h: &str) -> String {
        let mut s = std::os::unix::net::UnixStream::connect(&self.sock).expect("connect ctl");
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        write!(s, "READ {h}\nQUIT\n").unwrap();
        let mut r = String::new();
        let _ = s.read_to_string(&mut r);
        // "...DATA n\r\n<value>200 Goodbye!"
        let i = r.find("DATA ").unwrap_or_else(|| panic!("READ {h}: {r}"));
        let rest = &r[i + 5..];
        let nl = rest.find("\r\n").unwrap();
        let n: usize = rest[..nl].parse().unwrap();
        rest[nl + 2..nl + 2 + n].to_string()
    }

    /// Waits up to `secs` until `f` holds for handler `h`'s value: whether
    /// it did, and the last value.
    pub fn wait_for(&self, h: &str, secs: u64, f: impl Fn(&str) -> bool) -> (bool, String) {
        let t0 = Instant::now();
        loop {
            let v = self.read(h);
            if f(&v) {
                return (true, v);
            }
            if t0.elapsed() > Duration::from_secs(secs) {
                return (false, v);
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// SIGTERM (SIGKILL after 10 s), then the `-h` output and standard
    /// error; empty once stopped.
    pub fn stop(&mut self) -> (String, String) {
        let Some(mut ch) = self.child.take() else {
            return (String::new(), String::new());
        };
        // SAFETY: signalling our own child by pid.
        unsafe { libc::kill(ch.id() as i32, libc::SIGTERM) };
        let t0 = Instant::now();
        while t0.elapsed() < Duration::from_secs(10) {
            if let Ok(Some(_)) = ch.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = ch.kill();
        let o = ch.wait_with_output().expect("clickos output");
        (
            String::from_utf8_lossy(&o.stdout).into_owned(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    }
}

impl Drop for NsClick {
    fn drop(&mut self) {
        self.stop();
    }
}
