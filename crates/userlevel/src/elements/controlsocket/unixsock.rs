//! UNIX-domain control sockets made with care: the socket file is mode
//! 0600 from the moment it has a name other users can reach, whatever the
//! umask; an existing path is removed only when it is a stale socket; and
//! a peer's user is known (SO_PEERCRED).
//!
//! The socket is bound inside a fresh directory of mode 0700 beside the
//! wanted path, given mode 0600 there (no other user can reach it yet),
//! then renamed into place without replacing anything. Changing the
//! umask instead would race with the router's other threads.

use std::ffi::{CString, OsStr};
use std::io::Error;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::os::unix::net::UnixListener;
use std::path::Path;

/// Longest socket path `bind` takes (`sun_path` less its NUL).
const SUN_PATH_MAX: usize = 107;

/// A listening socket at a path, and the identity of its file.
pub(super) struct Bound {
    pub(super) listener: UnixListener,
    /// (st_dev, st_ino) of the socket file, to remove only that file.
    pub(super) id: (u64, u64),
}

/// A failed step: (the call, the reason), as ControlSocket reports it.
type Failure = (String, String);

fn fail(call: &str, e: &Error) -> Failure {
    (call.to_string(), crate::sys::io_error_text(e))
}

fn cstr(p: &Path) -> Result<CString, Failure> {
    CString::new(p.as_os_str().as_bytes()).map_err(|_| ("bind".into(), "bad file name".into()))
}

/// Listens on the UNIX-domain socket `path`, mode 0600.
pub(super) fn bind(path: &str) -> Result<Bound, Failure> {
    let target = Path::new(path);
    clear_stale(target)?;
    let parent = match target.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    let name = target.file_name().unwrap_or(OsStr::new("socket"));
    let mut template = parent.join(".").into_os_string();
    template.push(name);
    template.push(".XXXXXX");
    let mut template = cstr(Path::new(&template))?.into_bytes_with_nul();
    // SAFETY: `template` is a writable NUL-terminated buffer ending in
    // XXXXXX, which mkdtemp overwrites in place.
    let d = unsafe { libc::mkdtemp(template.as_mut_ptr().cast()) };
    if d.is_null() {
        return Err(fail("bind", &Error::last_os_error()));
    }
    template.pop();
    let dir = Path::new(OsStr::from_bytes(&template)).to_path_buf();
    let r = bind_in(&dir, target);
    // the socket has left it (or was never made, or was removed): empty
    let _ = std::fs::remove_dir(&dir);
    r
}

/// Binds in the private directory `dir` and moves the socket to `target`.
fn bind_in(dir: &Path, target: &Path) -> Result<Bound, Failure> {
    let dirc = cstr(dir)?;
    // mkdtemp made it 0700 less the umask; make it exactly 0700 (only the
    // owner's bits are added, so it is never wider than that)
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::chmod(dirc.as_ptr(), 0o700) } != 0 {
        return Err(fail("chmod", &Error::last_os_error()));
    }
    // SAFETY: a valid NUL-terminated path; the result is checked.
    let dfd = unsafe {
        libc::open(
            dirc.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if dfd < 0 {
        return Err(fail("open", &Error::last_os_error()));
    }
    // SAFETY: `dfd` was just opened and nothing else owns it.
    let dfd = unsafe { OwnedFd::from_raw_fd(dfd) };
    let direct = dir.join("s");
    // a long directory name is reached through the descriptor instead
    let bind_path = if direct.as_os_str().len() <= SUN_PATH_MAX {
        direct
    } else {
        std::path::PathBuf::from(format!("/proc/self/fd/{}/s", dfd.as_raw_fd()))
    };
    let listener = UnixListener::bind(&bind_path).map_err(|e| fail("bind", &e))?;
    let s = c"s";
    let undo = || {
        // SAFETY: `dfd` is an open directory and `s` a NUL-terminated name.
        unsafe { libc::unlinkat(dfd.as_raw_fd(), s.as_ptr(), 0) };
    };
    // SAFETY: `dfd` is an open directory and `s` a NUL-terminated name.
    if unsafe { libc::fchmodat(dfd.as_raw_fd(), s.as_ptr(), 0o600, 0) } != 0 {
        let e = Error::last_os_error();
        undo();
        return Err(fail("chmod", &e));
    }
    // SAFETY: all zeroes is a valid `stat` (plain integers).
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `dfd` is an open directory, `s` a NUL-terminated name and
    // `st` a valid out-parameter.
    if unsafe {
        libc::fstatat(
            dfd.as_raw_fd(),
            s.as_ptr(),
            &mut st,
            libc::AT_SYMLINK_NOFOLLOW,
        )
    } != 0
    {
        let e = Error::last_os_error();
        undo();
        return Err(fail("stat", &e));
    }
    let tc = cstr(target)?;
    // SAFETY: `dfd` is an open directory; both names are NUL-terminated.
    let mut rc = unsafe {
        libc::renameat2(
            dfd.as_raw_fd(),
            s.as_ptr(),
            libc::AT_FDCWD,
            tc.as_ptr(),
            libc::RENAME_NOREPLACE,
        )
    };
    let mut err = Error::last_os_error();
    if rc != 0 && matches!(err.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
        // a file system without RENAME_NOREPLACE: link(2) does not replace
        // either
        // SAFETY: `dfd` is an open directory; both names are NUL-terminated.
        rc = unsafe { libc::linkat(dfd.as_raw_fd(), s.as_ptr(), libc::AT_FDCWD, tc.as_ptr(), 0) };
        err = Error::last_os_error();
    }
    undo();
    if rc != 0 {
        if err.raw_os_error() == Some(libc::EEXIST) {
            return Err(("bind".into(), "Address already in use".into()));
        }
        return Err(fail("bind", &err));
    }
    Ok(Bound {
        listener,
        id: (st.st_dev, st.st_ino),
    })
}

/// Removes `path` if it is a socket nobody listens on; refuses a path
/// that is anything else (a file, a directory, a symbolic link) or a
/// socket in use.
fn clear_stale(path: &Path) -> Result<(), Failure> {
    let m = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(fail("stat", &e)),
    };
    if !m.file_type().is_socket() {
        return Err((
            "bind".into(),
            format!(
                "{} exists and is not a socket (not removing it)",
                path.display()
            ),
        ));
    }
    match probe(path) {
        Ok(()) => Err((
            "bind".into(),
            format!("{}: socket in use by another program", path.display()),
        )),
        Err(e) if e.raw_os_error() == Some(libc::ECONNREFUSED) => {
            // stale: nobody listens; remove only if it is still that file
            match std::fs::symlink_metadata(path) {
                Ok(n) if n.dev() == m.dev() && n.ino() == m.ino() => {
                    std::fs::remove_file(path).map_err(|e| fail("unlink", &e))
                }
                _ => Err(("bind".into(), "Address already in use".into())),
            }
        }
        Err(e) => Err((
            "bind".into(),
            format!(
                "{}: an existing socket ({}; not removing it)",
                path.display(),
                crate::sys::io_error_text(&e)
            ),
        )),
    }
}

/// Tries to connect to the socket at `path` without blocking: Ok when
/// someone listens (or the connection is pending), ECONNREFUSED when
/// nobody does.
fn probe(path: &Path) -> Result<(), Error> {
    let bytes = path.as_os_str().as_bytes();
    // SAFETY: all zeroes is a valid `sockaddr_un` (plain integers).
    let mut sa: libc::sockaddr_un = unsafe { std::mem::zeroed() };
    if bytes.len() > SUN_PATH_MAX {
        return Err(Error::from_raw_os_error(libc::ENAMETOOLONG));
    }
    sa.sun_family = libc::AF_UNIX as libc::sa_family_t;
    for (d, &b) in sa.sun_path.iter_mut().zip(bytes) {
        *d = b as libc::c_char;
    }
    // SAFETY: socket(2) with constant arguments; the result is checked.
    let fd = unsafe {
        libc::socket(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
            0,
        )
    };
    if fd < 0 {
        return Err(Error::last_os_error());
    }
    // SAFETY: `fd` was just made and nothing else owns it.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    // SAFETY: `sa` is a valid sockaddr_un of the given size.
    let rc = unsafe {
        libc::connect(
            fd.as_raw_fd(),
            (&sa as *const libc::sockaddr_un).cast(),
            std::mem::size_of::<libc::sockaddr_un>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        return Ok(());
    }
    let e = Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN | libc::EINPROGRESS) => Ok(()),
        _ => Err(e),
    }
}

/// Removes the socket file `path` if it is still the one `id` names.
pub(super) fn remove_if_ours(path: &str, id: (u64, u64)) {
    if let Ok(m) = std::fs::symlink_metadata(path) {
        if m.file_type().is_socket() && (m.dev(), m.ino()) == id {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The user id of the process at the other end of a UNIX stream.
pub(super) fn peer_uid(fd: std::os::fd::RawFd) -> Option<u32> {
    // SAFETY: a zeroed ucred is valid; getsockopt writes at most `len`
    // bytes into it.
    let mut cred: libc::ucred = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `fd` is an open socket; `cred` and `len` are valid for writes.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&mut cred as *mut libc::ucred).cast(),
            &mut len,
        )
    };
    (rc == 0 && len as usize == std::mem::size_of::<libc::ucred>()).then_some(cred.uid)
}

/// Whether a peer of user `uid` may do what the router's own user may:
/// the same user, or root.
pub(super) fn trusted(uid: u32) -> bool {
    // SAFETY: geteuid has no preconditions.
    uid == 0 || uid == unsafe { libc::geteuid() }
}
