//! The ClickOS control plane: a daemon that owns a fleet of Click
//! instances ([`clickos_instance`]) and their vNIC wiring
//! ([`clickos_switch`], one switch per wired instance), keeps their desired
//! state in an embedded database so that they come back after the daemon
//! is killed, restarts them by policy, and serves an HTTP/JSON API on a
//! UNIX socket (and on TCP when asked).
//!
//! * [`api`]: the route table and the OpenAPI document built from it.
//! * [`http`]: the strict HTTP/1.1 request parser and response writer.
//! * [`fleet`]: instances, events, consoles, the supervisor, metrics.
//! * [`store`]: desired state in redb.
//! * [`auth`]: tenants, tokens and the no-token rule.
//! * [`server`]: connections and dispatch.

pub mod api;
pub mod auth;
pub mod b64;
pub mod fleet;
pub mod http;
pub mod server;
pub mod store;

use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use fleet::{ApiError, Fleet, FleetOptions};

/// How to run the daemon.
#[derive(Clone)]
pub struct DaemonOptions {
    pub state_dir: PathBuf,
    pub socket: PathBuf,
    /// Also listen on TCP (`ADDR:PORT`); tokens are required there.
    pub listen: Option<String>,
    /// Token file (default `STATE/tokens.json` when it exists).
    pub tokens: Option<PathBuf>,
    pub fleet: FleetOptions,
    pub max_connections: usize,
    pub limits: http::Limits,
}

/// The default state directory: `/var/lib/clickos` for root, else
/// `$XDG_STATE_HOME/clickos` or `~/.local/state/clickos`.
pub fn default_state_dir() -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        return "/var/lib/clickos".into();
    }
    if let Some(x) = std::env::var_os("XDG_STATE_HOME") {
        return PathBuf::from(x).join("clickos");
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/tmp".into());
    PathBuf::from(home).join(".local/state/clickos")
}

/// The default socket: `/run/clickos.sock` for root, else
/// `$XDG_RUNTIME_DIR/clickos.sock` (or `/tmp/clickos-UID.sock`).
pub fn default_socket() -> PathBuf {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    if uid == 0 {
        return "/run/clickos.sock".into();
    }
    match std::env::var_os("XDG_RUNTIME_DIR") {
        Some(d) => PathBuf::from(d).join("clickos.sock"),
        None => PathBuf::from(format!("/tmp/clickos-{uid}.sock")),
    }
}

static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    STOP.store(true, Ordering::Relaxed);
}

/// A started daemon (listeners bound, supervisor not yet running).
pub struct Daemon {
    pub server: Arc<server::Server>,
    socket: PathBuf,
}

impl Daemon {
    /// Opens the state, loads tokens and binds the listeners.
    pub fn start(opts: DaemonOptions) -> Result<Daemon, String> {
        // Every vm instance's guest memory is mapped into this process, so
        // each change to its memory map calls every instance's KVM MMU
        // notifier (O(instances)). Keep malloc from mapping and unmapping
        // (large blocks come from the heap, which is not trimmed).
        // SAFETY: mallopt only sets allocator parameters.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
            libc::mallopt(libc::M_TRIM_THRESHOLD, 256 << 20);
        }
        let tokens_path = opts.tokens.clone().or_else(|| {
            let p = opts.state_dir.join("tokens.json");
            p.exists().then_some(p)
        });
        let tokens = match &tokens_path {
            Some(p) => auth::Tokens::load(p)?,
            None => auth::Tokens::default(),
        };
        let fleet = Fleet::open(&opts.state_dir, opts.fleet.clone())?;
        let server = Arc::new(server::Server {
            fleet,
            tokens,
            limits: opts.limits.clone(),
            max_connections: opts.max_connections,
            active: AtomicUsize::new(0),
            // SAFETY: geteuid has no preconditions.
            uid: unsafe { libc::geteuid() },
            pool: server::Pool::default(),
        });
        let sock = &opts.socket;
        if std::os::unix::net::UnixStream::connect(sock).is_ok() {
            return Err(format!(
                "{}: another daemon is listening there",
                sock.display()
            ));
        }
        let _ = std::fs::remove_file(sock);
        if let Some(d) = sock.parent() {
            let _ = std::fs::create_dir_all(d);
        }
        let ul = std::os::unix::net::UnixListener::bind(sock)
            .map_err(|e| format!("{}: {e}", sock.display()))?;
        // Anyone may connect; without a token only root and the daemon's
        // user are let in (see `auth`).
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(sock, std::fs::Permissions::from_mode(0o666));
        }
        let srv = server.clone();
        std::thread::Builder::new()
            .name("clickos-unix".into())
            .spawn(move || {
                for s in ul.incoming() {
                    let Ok(s) = s else { continue };
                    let uid = auth::peer_uid(s.as_raw_fd());
                    let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                    let _ = s.set_write_timeout(Some(Duration::from_secs(10)));
                    server::spawn_conn(&srv, s, server::Peer::Unix(uid));
                }
            })
            .map_err(|e| e.to_string())?;
        if let Some(addr) = &opts.listen {
            let tl = std::net::TcpListener::bind(addr).map_err(|e| format!("{addr}: {e}"))?;
            let srv = server.clone();
            std::thread::Builder::new()
                .name("clickos-tcp".into())
                .spawn(move || {
                    for s in tl.incoming() {
                        let Ok(s) = s else { continue };
                        let _ = s.set_read_timeout(Some(Duration::from_secs(5)));
                        let _ = s.set_write_timeout(Some(Duration::from_secs(10)));
                        let _ = s.set_nodelay(true);
                        server::spawn_conn(&srv, s, server::Peer::Tcp);
                    }
                })
                .map_err(|e| e.to_string())?;
        }
        Ok(Daemon {
            server,
            socket: opts.socket.clone(),
        })
    }

    /// Supervises until SIGINT or SIGTERM, then removes the socket and
    /// ends the running instances (their desired state stays): `vm`
    /// instances are parked (suspended to `STATE/parked/`) and resumed with
    /// their element state by the next daemon, the others boot fresh.
    pub fn run(self) {
        // SAFETY: the handler only stores to an atomic.
        unsafe {
            libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
            libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
        let fleet = self.server.fleet.clone();
        let mut flushed = std::time::Instant::now();
        while !STOP.load(Ordering::Relaxed) {
            fleet.supervise();
            if flushed.elapsed() >= Duration::from_millis(100) {
                fleet.flush_store();
                flushed = std::time::Instant::now();
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = std::fs::remove_file(&self.socket);
        let t0 = std::time::Instant::now();
        let (parked, ended) = fleet.shutdown();
        eprintln!(
            "clickos daemon: stopped in {:.0} ms: {parked} vm instance(s) parked with their state, {ended} other(s) ended",
            t0.elapsed().as_secs_f64() * 1e3
        );
    }
}
