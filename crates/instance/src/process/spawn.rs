//! Starting the instance process in its own namespaces, Firecracker-jailer
//! style: `clone` with new user, PID, network, mount, IPC and UTS
//! namespaces, the user namespace's uid/gid maps written by the parent,
//! then `execveat` of the `clickos` binary with exactly the inherited
//! descriptors.
//!
//! **The user namespace.** It means different things for different
//! parents:
//!
//! * *Parent running as root.* Without it the instance would run as root:
//!   the owner of root's files, with every capability, seccomp its only
//!   barrier. With it, the parent maps uid and gid 65534 (nobody/nogroup)
//!   and nothing else, and the child drops its supplementary groups and
//!   becomes 65534 before it executes the binary: no capability outside
//!   its namespaces, nobody's file permissions, and (65534 not being
//!   root *inside* either) no capability at all after `execve`.
//! * *Unprivileged parent.* The child stays the parent's user (a user
//!   namespace can only map one's own uid without `CAP_SETUID`), so the
//!   user namespace grants nothing on the host; it is what lets an
//!   unprivileged parent create the other namespaces at all.
//!
//! **The PID namespace** makes the instance PID 1 of its own namespace: it
//! sees no other process, and signals it sends could only reach itself.
//! As an init process it ignores signals it has no handler for unless they
//! come from outside; the parent's `SIGKILL` and the kernel's (seccomp,
//! faults, the parent's death) still end it. `abort()` is the one path
//! that relied on a self-sent `SIGABRT`: the child handles `SIGABRT` by
//! exiting with [`EXIT_ABORT`](super::EXIT_ABORT).
//!
//! **Fallbacks.** Where a namespace is not permitted (no user namespaces
//! in this kernel or container, an unprivileged parent without them), the
//! instance starts with fewer: first without the user namespace, then
//! without any. Each fallback is reported once per process on the console
//! of the instance that met it; a test under `CI=true` must not accept it.
//!
//! The child side runs between `clone` and `execve` in a copy of a
//! multi-threaded process: it makes raw system calls only (no allocation,
//! no locks, no glibc wrappers that talk to other threads, such as
//! `setresuid`).

use std::ffi::{CString, OsStr, OsString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;

/// The unprivileged uid and gid a root parent's instances run as.
pub const NOBODY: u32 = 65534;

/// Which namespaces an instance process got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Namespaces {
    /// User, PID, network, mount, IPC and UTS.
    All,
    /// PID, network, mount, IPC and UTS (no user namespace permitted).
    NoUser,
    /// None permitted.
    None,
}

impl Namespaces {
    fn clone_flags(self) -> libc::c_int {
        let rest = libc::CLONE_NEWPID
            | libc::CLONE_NEWNET
            | libc::CLONE_NEWNS
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS;
        match self {
            Namespaces::All => libc::CLONE_NEWUSER | rest,
            Namespaces::NoUser => rest,
            Namespaces::None => 0,
        }
    }
}

/// A started instance process.
pub struct Spawned {
    /// Its pid (in our PID namespace).
    pub pid: libc::pid_t,
    /// The read end of its standard error.
    pub stderr: OwnedFd,
    pub namespaces: Namespaces,
    /// Why it got fewer namespaces than it asked for, if it did.
    pub fallback: Option<String>,
}

/// Where the child failed before `execve` (written to the error pipe with
/// the errno).
#[derive(Clone, Copy, Debug)]
#[repr(u32)]
enum Stage {
    Maps = 1,
    Setgroups = 2,
    Setgid = 3,
    Setuid = 4,
    Descriptors = 5,
    Exec = 6,
}

impl Stage {
    fn from(n: u32) -> &'static str {
        match n {
            1 => "waiting for the uid/gid maps",
            2 => "setgroups",
            3 => "setresgid",
            4 => "setresuid",
            5 => "setting up descriptors",
            _ => "execveat",
        }
    }
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn pipe() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut p = [0; 2];
    // SAFETY: pipe2 fills in two descriptors we then own.
    cvt(unsafe { libc::pipe2(p.as_mut_ptr(), libc::O_CLOEXEC) })?;
    // SAFETY: both were just returned to us.
    Ok(unsafe { (OwnedFd::from_raw_fd(p[0]), OwnedFd::from_raw_fd(p[1])) })
}

/// Everything the child needs, prepared before `clone` (the child cannot
/// allocate).
struct Prepared {
    exe: OwnedFd,
    devnull: OwnedFd,
    argv: Vec<CString>,
    envp: Vec<CString>,
}

fn cstring(s: &OsStr) -> io::Result<CString> {
    CString::new(s.as_bytes()).map_err(|_| io::ErrorKind::InvalidInput.into())
}

fn prepare(exe: &Path, args: &[String]) -> io::Result<Prepared> {
    let path = cstring(exe.as_os_str())?;
    // O_PATH: executed through the descriptor, so the child (possibly
    // nobody by then) needs no search permission on exe's directories.
    // SAFETY: a NUL-terminated path; the result is checked.
    let fd = cvt(unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) })?;
    // SAFETY: just opened, ours.
    let exe_fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: as above.
    let null = cvt(unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR | libc::O_CLOEXEC) })?;
    // SAFETY: as above.
    let devnull = unsafe { OwnedFd::from_raw_fd(null) };
    let mut argv = vec![path];
    for a in args {
        argv.push(cstring(OsStr::new(a))?);
    }
    let mut envp = vec![];
    for (k, v) in std::env::vars_os() {
        if k == "RUST_BACKTRACE" {
            continue;
        }
        let mut kv: OsString = k;
        kv.push("=");
        kv.push(v);
        if let Ok(c) = CString::new(kv.into_vec()) {
            envp.push(c);
        }
    }
    envp.push(c"RUST_BACKTRACE=0".to_owned());
    Ok(Prepared {
        exe: exe_fd,
        devnull,
        argv,
        envp,
    })
}

/// Starts `exe args...` with `inherit` kept open, in as many namespaces as
/// this host permits. Call from the long-lived spawner thread (the child's
/// `PR_SET_PDEATHSIG` is tied to it).
pub fn spawn(exe: &Path, args: &[String], inherit: &[RawFd]) -> Result<Spawned, String> {
    let p = prepare(exe, args).map_err(|e| format!("preparing {}: {e}", exe.display()))?;
    let mut fallback: Option<String> = None;
    for ns in [Namespaces::All, Namespaces::NoUser, Namespaces::None] {
        match attempt(&p, inherit, ns) {
            Ok((pid, stderr)) => {
                return Ok(Spawned {
                    pid,
                    stderr,
                    namespaces: ns,
                    fallback,
                })
            }
            Err(Attempt::Namespaces(why)) if ns != Namespaces::None => {
                let what = match ns {
                    Namespaces::All => "no user namespace",
                    _ => "no namespaces",
                };
                fallback = Some(format!("{what} ({why})"));
            }
            Err(Attempt::Namespaces(why)) | Err(Attempt::Fatal(why)) => {
                return Err(format!("starting {}: {why}", exe.display()))
            }
        }
    }
    unreachable!("the last attempt asks for no namespaces")
}

enum Attempt {
    /// The namespaces (or the user namespace's set-up) were not permitted:
    /// try with fewer.
    Namespaces(String),
    Fatal(String),
}

fn attempt(
    p: &Prepared,
    inherit: &[RawFd],
    ns: Namespaces,
) -> Result<(libc::pid_t, OwnedFd), Attempt> {
    let fatal = |what: &str, e: io::Error| Attempt::Fatal(format!("{what}: {e}"));
    let (err_r, err_w) = pipe().map_err(|e| fatal("pipe", e))?;
    let (out_r, out_w) = pipe().map_err(|e| fatal("pipe", e))?;
    let (sync_r, sync_w) = pipe().map_err(|e| fatal("pipe", e))?;
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let user_ns = ns == Namespaces::All;
    let mut argv: Vec<*const libc::c_char> = p.argv.iter().map(|a| a.as_ptr()).collect();
    argv.push(std::ptr::null());
    let mut envp: Vec<*const libc::c_char> = p.envp.iter().map(|a| a.as_ptr()).collect();
    envp.push(std::ptr::null());
    let child = Child {
        exe: p.exe.as_raw_fd(),
        devnull: p.devnull.as_raw_fd(),
        stderr: out_w.as_raw_fd(),
        sync: sync_r.as_raw_fd(),
        err: err_w.as_raw_fd(),
        inherit,
        argv: argv.as_ptr(),
        envp: envp.as_ptr(),
        drop_to_nobody: user_ns && root,
    };
    // SAFETY: a fork-like clone (no CLONE_VM, no new stack: the child runs
    // on a copy of this stack). The child only runs `Child::run`, which
    // makes raw system calls on data prepared above and never returns.
    let pid = unsafe {
        libc::syscall(
            libc::SYS_clone,
            (ns.clone_flags() | libc::SIGCHLD) as libc::c_ulong,
            0usize,
            0usize,
            0usize,
            0usize,
        )
    };
    if pid == 0 {
        child.run();
    }
    if pid < 0 {
        let e = io::Error::last_os_error();
        return Err(match (ns, e.raw_os_error()) {
            (
                Namespaces::All | Namespaces::NoUser,
                Some(libc::EPERM | libc::EINVAL | libc::ENOSPC | libc::EUSERS | libc::EACCES),
            ) => Attempt::Namespaces(format!("clone: {e}")),
            _ => Attempt::Fatal(format!("clone: {e}")),
        });
    }
    let pid = pid as libc::pid_t;
    drop((out_w, sync_r, err_w));
    let kill = |pid| {
        // SAFETY: our own unreaped child; then reap it.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
            libc::waitpid(pid, std::ptr::null_mut(), 0);
        }
    };
    if user_ns {
        if let Err(e) = write_maps(pid, root) {
            kill(pid);
            return Err(Attempt::Namespaces(format!(
                "writing the uid/gid maps: {e}"
            )));
        }
    }
    // Go: the maps are written (or there are none to write).
    // SAFETY: a one-byte write from a local.
    unsafe { libc::write(sync_w.as_raw_fd(), b"g".as_ptr() as *const libc::c_void, 1) };
    drop(sync_w);
    // The error pipe closes on a successful exec, or carries where the
    // child failed.
    let mut report = [0u8; 8];
    let mut got = 0;
    while got < report.len() {
        // SAFETY: reads into the unfilled part of a local buffer.
        let n = unsafe {
            libc::read(
                err_r.as_raw_fd(),
                report[got..].as_mut_ptr() as *mut libc::c_void,
                report.len() - got,
            )
        };
        if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            break;
        }
        got += n as usize;
    }
    if got == 0 {
        return Ok((pid, out_r));
    }
    kill(pid);
    let stage = u32::from_ne_bytes(report[..4].try_into().expect("4 bytes"));
    let errno = u32::from_ne_bytes(report[4..].try_into().expect("4 bytes"));
    let why = format!(
        "{}: {}",
        Stage::from(stage),
        io::Error::from_raw_os_error(errno as i32)
    );
    if user_ns && stage < Stage::Descriptors as u32 {
        Err(Attempt::Namespaces(why))
    } else {
        Err(Attempt::Fatal(why))
    }
}

/// The child's uid and gid maps: nobody for a root parent, else the
/// parent's own ids (and then `setgroups` must be denied first).
fn write_maps(pid: libc::pid_t, root: bool) -> io::Result<()> {
    // SAFETY: getuid/getgid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let proc = format!("/proc/{pid}");
    if root {
        std::fs::write(format!("{proc}/uid_map"), format!("{NOBODY} {NOBODY} 1\n"))?;
        std::fs::write(format!("{proc}/gid_map"), format!("{NOBODY} {NOBODY} 1\n"))?;
    } else {
        std::fs::write(format!("{proc}/uid_map"), format!("{uid} {uid} 1\n"))?;
        std::fs::write(format!("{proc}/setgroups"), "deny")?;
        std::fs::write(format!("{proc}/gid_map"), format!("{gid} {gid} 1\n"))?;
    }
    Ok(())
}

/// The child's half: plain data, used between `clone` and `execve`.
struct Child<'a> {
    exe: RawFd,
    devnull: RawFd,
    stderr: RawFd,
    sync: RawFd,
    err: RawFd,
    inherit: &'a [RawFd],
    argv: *const *const libc::c_char,
    envp: *const *const libc::c_char,
    drop_to_nobody: bool,
}

impl Child<'_> {
    /// Reports where it failed and leaves.
    fn fail(&self, stage: Stage) -> ! {
        let errno = io::Error::last_os_error().raw_os_error().unwrap_or(0) as u32;
        let mut b = [0u8; 8];
        b[..4].copy_from_slice(&(stage as u32).to_ne_bytes());
        b[4..].copy_from_slice(&errno.to_ne_bytes());
        // SAFETY: async-signal-safe write and exit.
        unsafe {
            libc::write(self.err, b.as_ptr() as *const libc::c_void, b.len());
            libc::_exit(super::EXIT_SETUP)
        }
    }

    fn run(&self) -> ! {
        // SAFETY (whole function): raw system calls on descriptors and
        // NUL-terminated arrays prepared by the parent; no allocation.
        unsafe {
            // Wait until the parent has written our maps (or says go).
            let mut go = 0u8;
            loop {
                let n = libc::read(self.sync, &mut go as *mut u8 as *mut libc::c_void, 1);
                if n == 1 && go == b'g' {
                    break;
                }
                if n < 0 && *libc::__errno_location() == libc::EINTR {
                    continue;
                }
                self.fail(Stage::Maps);
            }
            if self.drop_to_nobody {
                let id = NOBODY as libc::c_long;
                if libc::syscall(libc::SYS_setgroups, 0, std::ptr::null::<libc::gid_t>()) != 0 {
                    self.fail(Stage::Setgroups);
                }
                if libc::syscall(libc::SYS_setresgid, id, id, id) != 0 {
                    self.fail(Stage::Setgid);
                }
                if libc::syscall(libc::SYS_setresuid, id, id, id) != 0 {
                    self.fail(Stage::Setuid);
                }
            }
            // After any credential change (which resets it).
            libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGKILL as libc::c_ulong,
                0,
                0,
                0,
            );
            if libc::dup2(self.devnull, 0) < 0
                || libc::dup2(self.devnull, 1) < 0
                || libc::dup2(self.stderr, 2) < 0
            {
                self.fail(Stage::Descriptors);
            }
            for &fd in self.inherit.iter().chain([self.exe].iter()) {
                if clickos_sys::clear_cloexec(fd).is_err() {
                    self.fail(Stage::Descriptors);
                }
            }
            // A clean signal state for the new program.
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::pthread_sigmask(libc::SIG_SETMASK, &set, std::ptr::null_mut());
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
            libc::syscall(
                libc::SYS_execveat,
                self.exe,
                c"".as_ptr(),
                self.argv,
                self.envp,
                libc::AT_EMPTY_PATH,
            );
            self.fail(Stage::Exec)
        }
    }
}
