//! Connections: accept, authenticate, parse, dispatch through the route
//! table, answer. One thread per connection up to a cap; past it a
//! connection gets 503 at once.

use crate::api::{self, Miss, Op};
use crate::auth::{Caller, Tokens};
use crate::fleet::{
    ApiError, CreateRequest, Fleet, Incoming, MigrateRequest, ResumeRequest, SuspendRequest,
};
use crate::http::{self, Limits, Request, Response};
use serde::Deserialize;
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

/// Shared by every connection.
pub struct Server {
    pub fleet: Arc<Fleet>,
    pub tokens: Tokens,
    pub limits: Limits,
    pub max_connections: usize,
    pub active: AtomicUsize,
    /// The daemon's effective uid (peers with it, or root, are admin).
    pub uid: u32,
    pub pool: Pool,
}

/// Where a connection comes from.
#[derive(Clone, Copy, Debug)]
pub enum Peer {
    /// A UNIX socket peer with this uid (if known).
    Unix(Option<u32>),
    Tcp,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InstallReq {
    config: String,
    #[serde(default)]
    config_file: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WriteReq {
    #[serde(default)]
    value: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultReq {
    kind: String,
}

/// What a request produces.
pub enum Reply {
    Whole(Response),
    /// Stream events after this sequence number.
    Follow(Caller, u64),
    /// A live migration's first part arrived: answer, then take the second
    /// part on the same connection.
    Incoming(Caller, Box<Incoming>),
}

fn err(e: ApiError) -> Response {
    Response::json(e.status, &e.to_json())
}

fn body<T: for<'de> Deserialize<'de>>(req: &Request) -> Result<T, ApiError> {
    if let Some(ct) = req.header("content-type") {
        if !ct.starts_with("application/json") {
            return Err(ApiError::new(
                415,
                "unsupported_media_type",
                format!("Content-Type '{ct}': send application/json"),
            ));
        }
    }
    if req.body.is_empty() {
        return Err(ApiError::bad("a JSON body is required"));
    }
    serde_json::from_slice(&req.body).map_err(|e| ApiError::bad(format!("bad JSON body: {e}")))
}

/// The client asks for the snapshot as raw bytes.
fn wants_octets(req: &Request) -> bool {
    req.header("accept")
        .is_some_and(|a| a.contains("application/octet-stream"))
}

/// The body is raw bytes (a snapshot).
fn is_octets(req: &Request) -> bool {
    req.header("content-type")
        .is_some_and(|c| c.starts_with("application/octet-stream"))
}

/// `?name=NAME&vnic=ATTACH&...` (or `novnics=1`) of a raw snapshot body.
fn resume_query(req: &Request) -> ResumeRequest {
    let vnics: Vec<String> = req
        .query
        .iter()
        .filter(|(k, _)| k == "vnic")
        .map(|(_, v)| v.clone())
        .collect();
    ResumeRequest {
        name: req.query("name").map(str::to_string),
        vnics: (!vnics.is_empty() || req.query("novnics").is_some()).then_some(vnics),
        ..ResumeRequest::default()
    }
}

impl Server {
    /// Who the request is from, or why it is refused.
    pub fn authenticate(&self, req: &Request, peer: Peer) -> Result<Caller, ApiError> {
        if let Some(a) = req.header("authorization") {
            let tok = a
                .strip_prefix("Bearer ")
                .ok_or_else(|| {
                    ApiError::new(401, "unauthorized", "Authorization must be 'Bearer TOKEN'")
                })?
                .trim();
            return self
                .tokens
                .caller(tok)
                .ok_or_else(|| ApiError::new(401, "unauthorized", "unknown token"));
        }
        match peer {
            Peer::Unix(Some(uid)) if uid == 0 || uid == self.uid => Ok(Caller::Admin),
            _ => Err(ApiError::new(
                401,
                "unauthorized",
                "a token is required (Authorization: Bearer TOKEN)",
            )),
        }
    }

    /// Answers one parsed request.
    pub fn dispatch(&self, req: &mut Request, peer: Peer) -> Reply {
        let caller = match self.authenticate(req, peer) {
            Ok(c) => c,
            Err(e) => return Reply::Whole(err(e)),
        };
        let (route, params) = match api::route(&req.method, &req.path) {
            Ok(x) => x,
            Err(Miss::NotFound) => {
                return Reply::Whole(err(ApiError::new(
                    404,
                    "no_route",
                    format!("no route {} {}", req.method, req.path),
                )))
            }
            Err(Miss::Method(m)) => {
                return Reply::Whole(err(ApiError::new(
                    405,
                    "method_not_allowed",
                    format!("{} {}: allowed {}", req.method, req.path, m.join(", ")),
                )))
            }
            Err(Miss::BadPath) => {
                return Reply::Whole(err(ApiError::bad("bad percent-encoding in the path")))
            }
        };
        let p = |i: usize| params.get(i).map(String::as_str).unwrap_or("");
        let f = &self.fleet;
        let r: Result<Value, ApiError> = match route.op {
            Op::Health => Ok(json!({"ok": true, "version": env!("CARGO_PKG_VERSION")})),
            Op::OpenApi => Ok(api::openapi()),
            Op::Metrics => {
                return Reply::Whole(Response::text(
                    200,
                    "text/plain; version=0.0.4; charset=utf-8",
                    f.metrics(&caller),
                ))
            }
            Op::ListInstances => Ok(f.list(&caller)),
            Op::CreateInstance => body::<CreateRequest>(req).and_then(|c| {
                let quota = self.tokens.quota(caller.tenant());
                f.create(&caller, quota, c)
            }),
            Op::ShowInstance => f.show(&caller, p(0)),
            Op::DestroyInstance => f.destroy(&caller, p(0)),
            Op::GetConfig => f.config(&caller, p(0)),
            Op::InstallConfig => body::<InstallReq>(req)
                .and_then(|b| f.install(&caller, p(0), b.config, b.config_file)),
            Op::StopInstance => f.stop(&caller, p(0)),
            Op::StartInstance => f.start(&caller, p(0)),
            Op::Suspend if wants_octets(req) => {
                let b = if req.body.is_empty() {
                    Ok(SuspendRequest::default())
                } else {
                    body::<SuspendRequest>(req)
                };
                return Reply::Whole(match b.and_then(|b| f.suspend_bytes(&caller, p(0), &b)) {
                    Ok((v, snap)) => Response {
                        status: 200,
                        content_type: "application/octet-stream",
                        body: snap,
                        headers: vec![(
                            "X-Clickos-Instance",
                            serde_json::to_string(&v).unwrap_or_default(),
                        )],
                    },
                    Err(e) => err(e),
                });
            }
            Op::ResumeNew if is_octets(req) => {
                let r = resume_query(req);
                let quota = self.tokens.quota(caller.tenant());
                f.resume_new_from(&caller, quota, r, Some(std::mem::take(&mut req.body)))
            }
            Op::Migrate => body::<MigrateRequest>(req).and_then(|b| f.migrate(&caller, p(0), b)),
            Op::Incoming => {
                if !is_octets(req) {
                    return Reply::Whole(err(ApiError::new(
                        415,
                        "unsupported_media_type",
                        "send the migration's first part as application/octet-stream",
                    )));
                }
                let r = resume_query(req);
                let quota = self.tokens.quota(caller.tenant());
                let base = std::mem::take(&mut req.body);
                return match f.prepare_incoming(&caller, quota, r, &base) {
                    Ok(inc) => Reply::Incoming(caller, Box::new(inc)),
                    Err(e) => Reply::Whole(err(e)),
                };
            }
            Op::IncomingCommit => Err(ApiError::new(
                409,
                "conflict",
                "no migration on this connection (the commit follows POST /v1/instances/incoming on the same connection)",
            )),
            Op::Suspend => if req.body.is_empty() {
                Ok(SuspendRequest::default())
            } else {
                body::<SuspendRequest>(req)
            }
            .and_then(|b| f.suspend(&caller, p(0), b)),
            Op::Resume => f.resume_in_place(&caller, p(0)),
            Op::ResumeNew => body::<ResumeRequest>(req).and_then(|b| {
                let quota = self.tokens.quota(caller.tenant());
                f.resume_new(&caller, quota, b)
            }),
            Op::ListHandlers => f.handlers(&caller, p(0)),
            Op::ReadHandler => f.read(&caller, p(0), p(1)),
            Op::WriteHandler | Op::WriteHandlerPost => {
                body::<WriteReq>(req).and_then(|b| f.write(&caller, p(0), p(1), &b.value))
            }
            Op::Console => f.console(&caller, p(0)),
            Op::Fault => body::<FaultReq>(req).and_then(|b| f.fault(&caller, p(0), &b.kind)),
            Op::Events => {
                let since = match req.query("since").map(str::parse::<u64>) {
                    None => 0,
                    Some(Ok(n)) => n,
                    Some(Err(_)) => return Reply::Whole(err(ApiError::bad("since: not a number"))),
                };
                let follow = matches!(req.query("follow"), Some("1" | "true"));
                if follow {
                    return Reply::Follow(caller, since);
                }
                let wait = match req.query("wait").map(str::parse::<f64>) {
                    None => 0.0,
                    Some(Ok(w)) if w.is_finite() && w >= 0.0 => w.min(60.0),
                    Some(_) => return Reply::Whole(err(ApiError::bad("wait: not a number"))),
                };
                let deadline = Instant::now() + Duration::from_secs_f64(wait);
                loop {
                    let (evs, last) = f.events.since(since, &caller);
                    let now = Instant::now();
                    if !evs.is_empty() || now >= deadline || f.shutting_down() {
                        break Ok(json!({"events": evs, "last": last}));
                    }
                    f.events.wait(last, deadline - now);
                }
            }
        };
        Reply::Whole(match r {
            Ok(v) => Response::json(route.status, &v),
            Err(e) => err(e),
        })
    }

    /// Serves one connection.
    pub fn serve<S: Read + Write>(&self, mut s: S, peer: Peer) {
        let mut req = match http::read_request(&mut s, &self.limits) {
            Ok(r) => r,
            Err(http::ParseError::Closed) => return,
            Err(e) => {
                let _ = http::write_response(
                    &mut s,
                    &Response::json(
                        e.status(),
                        &json!({"error": e.message(), "code": "bad_request"}),
                    ),
                );
                return;
            }
        };
        match self.dispatch(&mut req, peer) {
            Reply::Whole(resp) => {
                let _ = http::write_response(&mut s, &resp);
            }
            Reply::Incoming(caller, inc) => self.incoming(&mut s, peer, caller, *inc),
            Reply::Follow(caller, mut since) => {
                if http::write_chunked_head(&mut s, 200, "application/x-ndjson").is_err() {
                    return;
                }
                let f = &self.fleet;
                loop {
                    let (evs, last) = f.events.since(since, &caller);
                    let mut buf = Vec::new();
                    for e in &evs {
                        if let Ok(mut line) = serde_json::to_vec(e) {
                            line.push(b'\n');
                            buf.extend_from_slice(&line);
                        }
                    }
                    since = last;
                    // an empty line every few seconds notices gone clients
                    if buf.is_empty() {
                        buf.push(b'\n');
                    }
                    if http::write_chunk(&mut s, &buf).is_err() {
                        return;
                    }
                    if f.shutting_down() {
                        let _ = http::write_last_chunk(&mut s);
                        return;
                    }
                    f.events.wait(since, Duration::from_secs(5));
                }
            }
        }
    }

    /// A live migration's connection after its first part: says it is
    /// ready, then takes the second part (from the same caller) and lets
    /// the instance run; anything else drops the migration.
    fn incoming<S: Read + Write>(&self, s: &mut S, peer: Peer, caller: Caller, inc: Incoming) {
        let f = &self.fleet;
        let ready = Response::json(200, &inc.ready());
        let write_err = http::write_response(s, &ready).is_err();
        let next = if write_err {
            Err(ApiError::new(400, "bad_request", "the sender went away"))
        } else {
            match http::read_request(s, &self.limits) {
                Ok(r) => Ok(r),
                Err(e) => Err(ApiError::new(e.status(), "bad_request", e.message())),
            }
        };
        let r = next.and_then(|req| {
            let same = match (self.authenticate(&req, peer), &caller) {
                (Ok(Caller::Admin), Caller::Admin) => true,
                (Ok(Caller::Tenant(a)), Caller::Tenant(b)) => a == *b,
                _ => false,
            };
            match api::route(&req.method, &req.path) {
                Ok((r, _)) if r.op == Op::IncomingCommit && same => Ok(req),
                Ok((r, _)) if r.op == Op::IncomingCommit => Err(ApiError::new(
                    401,
                    "unauthorized",
                    "the commit must come from the caller that sent the first part",
                )),
                _ => Err(ApiError::new(
                    409,
                    "conflict",
                    format!(
                        "{} {}: a migration's first part must be followed by POST /v1/instances/incoming/commit",
                        req.method, req.path
                    ),
                )),
            }
        });
        let resp = match r {
            Ok(req) => match f.commit_incoming(inc, &req.body) {
                Ok(v) => Response::json(201, &v),
                Err(e) => err(e),
            },
            Err(e) => {
                f.abort_incoming(inc);
                err(e)
            }
        };
        let _ = http::write_response(s, &resp);
    }

    /// A connection over the cap: 503 and close.
    pub fn refuse<S: Write>(mut s: S) {
        let _ = http::write_response(
            &mut s,
            &Response::json(
                503,
                &json!({"error": "too many connections; try again", "code": "busy"}),
            ),
        );
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// The threads that serve connections. They are kept, not ended: every
/// `vm` instance's guest memory is mapped into the daemon, so each change
/// to the daemon's memory map (a thread's stack mapped, guarded, unmapped)
/// calls every instance's KVM MMU notifier; a thread per connection cost
/// ~1 ms per request with 1,000 instances. The pool grows when no thread
/// is idle (up to the connection cap) and never shrinks.
pub struct Pool {
    tx: Mutex<mpsc::Sender<Job>>,
    rx: Arc<Mutex<mpsc::Receiver<Job>>>,
    idle: Arc<AtomicUsize>,
    threads: AtomicUsize,
}

impl Default for Pool {
    fn default() -> Self {
        let (tx, rx) = mpsc::channel();
        Pool {
            tx: Mutex::new(tx),
            rx: Arc::new(Mutex::new(rx)),
            idle: Arc::new(AtomicUsize::new(0)),
            threads: AtomicUsize::new(0),
        }
    }
}

impl Pool {
    /// Runs `job` on an idle thread, or a new one.
    fn run(&self, job: Job) -> Result<(), ()> {
        if self.idle.load(Ordering::SeqCst) == 0 {
            let rx = self.rx.clone();
            let idle = self.idle.clone();
            idle.fetch_add(1, Ordering::SeqCst);
            let r = std::thread::Builder::new()
                .name("clickos-conn".into())
                .stack_size(256 << 10)
                .spawn(move || loop {
                    let job = {
                        let rx = rx.lock().unwrap_or_else(|p| p.into_inner());
                        rx.recv()
                    };
                    let Ok(job) = job else { return };
                    idle.fetch_sub(1, Ordering::SeqCst);
                    job();
                    idle.fetch_add(1, Ordering::SeqCst);
                });
            match r {
                Ok(_) => {
                    self.threads.fetch_add(1, Ordering::SeqCst);
                }
                Err(_) => {
                    self.idle.fetch_sub(1, Ordering::SeqCst);
                    if self.threads.load(Ordering::SeqCst) == 0 {
                        return Err(());
                    }
                }
            }
        }
        self.tx
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .send(job)
            .map_err(|_| ())
    }

    /// Threads started so far.
    pub fn threads(&self) -> usize {
        self.threads.load(Ordering::SeqCst)
    }
}

/// Runs `serve` on a pool thread if under the cap.
pub fn spawn_conn<S: Read + Write + Send + 'static>(srv: &Arc<Server>, s: S, peer: Peer) {
    if srv.active.fetch_add(1, Ordering::SeqCst) >= srv.max_connections {
        srv.active.fetch_sub(1, Ordering::SeqCst);
        Server::refuse(s);
        return;
    }
    let srv2 = srv.clone();
    let r = srv.pool.run(Box::new(move || {
        srv2.serve(s, peer);
        srv2.active.fetch_sub(1, Ordering::SeqCst);
    }));
    if r.is_err() {
        srv.active.fetch_sub(1, Ordering::SeqCst);
    }
}
