//! The API's one route table. The router matches requests against it and
//! the OpenAPI 3 document ([`openapi`]) is built from it and from the
//! schemas below, so the two cannot disagree.

use serde_json::{json, Map, Value};

/// What a route does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    ListInstances,
    CreateInstance,
    ShowInstance,
    DestroyInstance,
    GetConfig,
    InstallConfig,
    StopInstance,
    StartInstance,
    ListHandlers,
    ReadHandler,
    WriteHandler,
    WriteHandlerPost,
    Console,
    Fault,
    Suspend,
    Resume,
    ResumeNew,
    Migrate,
    Incoming,
    IncomingCommit,
    Events,
    Metrics,
    OpenApi,
    Health,
}

/// One route: `{name}` segments are parameters (percent-decoded).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    pub method: &'static str,
    pub path: &'static str,
    pub op: Op,
    pub summary: &'static str,
    /// Request body schema (JSON), if any.
    pub request: Option<&'static str>,
    /// Schema of the success response; `text` for plain text.
    pub response: &'static str,
    /// Success status.
    pub status: u16,
    /// Query parameters: (name, type, description).
    pub query: &'static [(&'static str, &'static str, &'static str)],
}

const I: &str = "/v1/instances/{instance}";

macro_rules! route {
    ($m:expr, $p:expr, $op:ident, $s:expr, $req:expr, $resp:expr, $st:expr) => {
        route!($m, $p, $op, $s, $req, $resp, $st, &[])
    };
    ($m:expr, $p:expr, $op:ident, $s:expr, $req:expr, $resp:expr, $st:expr, $q:expr) => {
        Route {
            method: $m,
            path: $p,
            op: Op::$op,
            summary: $s,
            request: $req,
            response: $resp,
            status: $st,
            query: $q,
        }
    };
}

/// Every route the daemon serves.
pub static ROUTES: &[Route] = &[
    route!("GET", "/v1/health", Health, "Liveness: the daemon answers.", None, "Health", 200),
    route!("GET", "/v1/instances", ListInstances, "List the instances the caller may see.", None, "InstanceList", 200),
    route!("POST", "/v1/instances", CreateInstance, "Create an instance: boot it with its configuration and wire its vNICs; kept across daemon restarts.", Some("CreateRequest"), "Instance", 201),
    route!("GET", I, ShowInstance, "Show one instance (by name or id).", None, "Instance", 200),
    route!("DELETE", I, DestroyInstance, "Destroy an instance and forget it.", None, "Instance", 200),
    route!("GET", "/v1/instances/{instance}/config", GetConfig, "The instance's current configuration.", None, "Config", 200),
    route!("PUT", "/v1/instances/{instance}/config", InstallConfig, "Install a configuration atomically: a refused one leaves the old one running and the error lists Click-style file:line lines.", Some("InstallRequest"), "Instance", 200),
    route!("POST", "/v1/instances/{instance}/stop", StopInstance, "Stop the instance (it stays stopped across daemon restarts).", None, "Instance", 200),
    route!("POST", "/v1/instances/{instance}/start", StartInstance, "Start a stopped instance with its stored configuration and wiring.", None, "Instance", 200),
    route!("GET", "/v1/instances/{instance}/handlers", ListHandlers, "List the instance's handlers with their modes.", None, "HandlerList", 200),
    route!("GET", "/v1/instances/{instance}/handlers/{handler}", ReadHandler, "Read handler ELEMENT.HANDLER.", None, "HandlerValue", 200),
    route!("PUT", "/v1/instances/{instance}/handlers/{handler}", WriteHandler, "Write handler ELEMENT.HANDLER.", Some("WriteRequest"), "HandlerValue", 200),
    route!("POST", "/v1/instances/{instance}/handlers/{handler}", WriteHandlerPost, "Write handler ELEMENT.HANDLER (as PUT).", Some("WriteRequest"), "HandlerValue", 200),
    route!("GET", "/v1/instances/{instance}/console", Console, "The instance's recent console output (a ring of the last 64 KiB).", None, "Console", 200),
    route!("POST", "/v1/instances/{instance}/fault", Fault, "Inject a fault (only when the daemon runs with --allow-fault-injection and the instance was created with fault_injection).", Some("FaultRequest"), "HandlerValue", 200),
    route!("POST", "/v1/instances/{instance}/suspend", Suspend, "Suspend a vm instance: its whole state (configuration, counters, queues, NAT mappings, ARP tables) to a snapshot kept by the daemon (it survives daemon restarts), also written to `file` or returned base64 when asked (`inline`), or returned as the raw bytes with `Accept: application/octet-stream` (the instance's JSON then in the `X-Clickos-Instance` header); the instance is then `suspended`. The body is optional.", Some("SuspendRequest"), "Suspended", 200),
    route!("POST", "/v1/instances/{instance}/resume", Resume, "Resume a suspended instance from its kept snapshot, vNICs rewired (`start` does the same).", None, "Instance", 200),
    route!("POST", "/v1/instances/resume", ResumeNew, "Resume a snapshot (taken here or by another daemon: migration) as a new instance, its vNICs attached here. The snapshot may also be the body itself (`Content-Type: application/octet-stream`), with `?name=NAME&vnic=ATTACH&vnic=...` (or `novnics=1`) in the query.", Some("ResumeRequest"), "Instance", 201),
    route!("POST", "/v1/instances/{instance}/migrate", Migrate, "Live-migrate a running vm instance to the daemon at `to` (a UNIX socket on this host, or tcp:HOST:PORT): its memory is sent while it runs (pre-copy), then it is paused and only the pages changed since, its registers and its record follow; once the other daemon answers that it runs there it is destroyed here. If anything fails it runs on here. The answer is the other daemon's view of it with `downtime_ms` (from the pause to that answer).", Some("MigrateRequest"), "Migrated", 200),
    route!("POST", "/v1/instances/incoming", Incoming, "Daemon to daemon (sent by `migrate`): the first part of a live migration as the body (`Content-Type: application/octet-stream`), with `?name=NAME&vnic=ATTACH&vnic=...` (or `novnics=1`); the VM is built with its memory and the name reserved (`starting`). The same connection must then carry `POST /v1/instances/incoming/commit`; if it closes first, everything is dropped.", None, "IncomingReady", 200,
        &[("name", "string", "The instance's name here (default: the sender's)."),
          ("vnic", "string", "Where vNIC k joins here (repeated, in order; default: as in the sender's record)."),
          ("novnics", "boolean", "No vNIC attachments here.")]),
    route!("POST", "/v1/instances/incoming/commit", IncomingCommit, "Daemon to daemon: the second part of a live migration (`application/octet-stream`: the registers and the pages changed since the first part), on the connection that carried the first; the instance then runs here. Anywhere else: 409.", None, "Instance", 201),
    route!("GET", "/v1/events", Events, "Lifecycle events after sequence number `since`; `wait` long-polls up to that many seconds for the first one; `follow=1` streams them as chunked newline-delimited JSON.", None, "EventList", 200,
        &[("since", "integer", "Return events with a sequence number above this (default 0)."),
          ("wait", "number", "Long-poll: seconds to wait for a new event (at most 60)."),
          ("follow", "boolean", "Stream events (chunked NDJSON) until the client goes away.")]),
    route!("GET", "/metrics", Metrics, "Prometheus metrics (text exposition format 0.0.4).", None, "text", 200),
    route!("GET", "/v1/openapi.json", OpenApi, "This document.", None, "OpenApi", 200),
];

/// Why no route matched.
#[derive(Debug, PartialEq, Eq)]
pub enum Miss {
    NotFound,
    /// The path exists with these methods.
    Method(Vec<&'static str>),
    /// A path segment's percent-encoding is broken.
    BadPath,
}

/// The route for `method path` and its decoded parameters.
pub fn route(method: &str, path: &str) -> Result<(&'static Route, Vec<String>), Miss> {
    let segs: Vec<&str> = path.split('/').collect();
    let mut methods = Vec::new();
    for r in ROUTES {
        let pat: Vec<&str> = r.path.split('/').collect();
        if pat.len() != segs.len() {
            continue;
        }
        let mut params = Vec::new();
        let mut ok = true;
        for (p, s) in pat.iter().zip(&segs) {
            if p.starts_with('{') {
                if s.is_empty() {
                    ok = false;
                    break;
                }
                match crate::http::percent_decode(s) {
                    Some(d) => params.push(d),
                    None => return Err(Miss::BadPath),
                }
            } else if p != s {
                ok = false;
                break;
            }
        }
        if !ok {
            continue;
        }
        if r.method == method {
            return Ok((r, params));
        }
        methods.push(r.method);
    }
    if methods.is_empty() {
        Err(Miss::NotFound)
    } else {
        Err(Miss::Method(methods))
    }
}

fn r(name: &str) -> Value {
    json!({ "$ref": format!("#/components/schemas/{name}") })
}

/// The schemas named in the route table.
pub fn schemas() -> Map<String, Value> {
    let s = json!({
        "Error": {
            "type": "object",
            "required": ["error", "code"],
            "properties": {
                "error": {"type": "string", "description": "What went wrong."},
                "code": {"type": "string", "description": "A stable machine-readable code: bad_request, unauthorized, not_found, conflict, config_refused, quota_exceeded, handler_error, too_large, timeout, internal, ..."},
                "lines": {"type": "array", "items": {"type": "string"}, "description": "Click-style file:line error lines (config_refused)."}
            }
        },
        "Health": {"type": "object", "properties": {"ok": {"type": "boolean"}, "version": {"type": "string"}}},
        "Vnic": {
            "type": "object",
            "properties": {
                "index": {"type": "integer"},
                "attach": {"type": "string", "description": "An interface name, tap:NAME or pcap:IN[,OUT]."},
                "to_instance_packets": {"type": "integer"},
                "to_instance_bytes": {"type": "integer"},
                "from_instance_packets": {"type": "integer"},
                "from_instance_bytes": {"type": "integer"},
                "drops": {"type": "integer"}
            }
        },
        "Instance": {
            "type": "object",
            "required": ["id", "name", "state"],
            "properties": {
                "id": {"type": "integer"},
                "name": {"type": "string"},
                "tenant": {"type": "string"},
                "state": {"type": "string", "enum": ["starting", "running", "stopped", "suspended", "crashed", "restarting", "failed"]},
                "isolation": {"type": "string", "enum": ["vm", "process", "none"]},
                "memory": {"type": "integer"},
                "restart": {"type": "string", "enum": ["never", "on-failure", "always"]},
                "restarts": {"type": "integer"},
                "uptime_seconds": {"type": "number"},
                "boot_seconds": {"type": "number"},
                "config_file": {"type": "string"},
                "config_bytes": {"type": "integer"},
                "last_end": {"type": "string", "nullable": true},
                "vnics": {"type": "array", "items": r("Vnic")}
            }
        },
        "InstanceList": {"type": "object", "properties": {"instances": {"type": "array", "items": r("Instance")}}},
        "CreateRequest": {
            "type": "object",
            "additionalProperties": false,
            "required": ["name", "config"],
            "properties": {
                "name": {"type": "string", "pattern": "^[A-Za-z0-9_.-]{1,64}$", "description": "Unique; not all digits (ids are)."},
                "config": {"type": "string", "description": "The Click configuration text (up to 16 MiB)."},
                "config_file": {"type": "string", "description": "Its name in error messages."},
                "vnics": {"type": "array", "items": {"type": "string"}, "description": "vNIC k joins attachment k through a switch."},
                "memory": {"type": "integer", "description": "Bytes (default 8 MiB)."},
                "isolation": {"type": "string", "enum": ["vm", "process", "none"]},
                "restart": {"type": "string", "enum": ["never", "on-failure", "always"]},
                "fault_injection": {"type": "boolean"},
                "metrics": {"type": "array", "maxItems": 32, "items": {"type": "string", "pattern": "^[!-~]+\\.[!-~]+$"}, "description": "Read handlers (ELEMENT.HANDLER) that /metrics exports as clickos_handler_value."}
            }
        },
        "InstallRequest": {
            "type": "object",
            "additionalProperties": false,
            "required": ["config"],
            "properties": {"config": {"type": "string"}, "config_file": {"type": "string"}}
        },
        "Config": {"type": "object", "properties": {"config": {"type": "string"}, "config_file": {"type": "string"}}},
        "WriteRequest": {
            "type": "object",
            "additionalProperties": false,
            "properties": {"value": {"type": "string", "default": ""}}
        },
        "SuspendRequest": {
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "file": {"type": "string", "description": "Also write the snapshot to this file on the daemon's host."},
                "inline": {"type": "boolean", "description": "Return the snapshot (base64) in `snapshot`."}
            }
        },
        "Suspended": {
            "allOf": [r("Instance"), {
                "type": "object",
                "properties": {
                    "snapshot_bytes": {"type": "integer"},
                    "suspend_ms": {"type": "number", "description": "From the request to the instance's end (pause, snapshot)."},
                    "snapshot": {"type": "string", "format": "byte", "description": "The snapshot, base64 (when inline)."}
                }
            }]
        },
        "ResumeRequest": {
            "type": "object",
            "additionalProperties": false,
            "properties": {
                "file": {"type": "string", "description": "A snapshot file on the daemon's host (or give `snapshot`)."},
                "snapshot": {"type": "string", "format": "byte", "description": "The snapshot, base64."},
                "name": {"type": "string", "description": "The new instance's name (default: the snapshot's)."},
                "vnics": {"type": "array", "items": {"type": "string"}, "description": "Where its vNICs join on this host (default: as in the snapshot)."}
            }
        },
        "MigrateRequest": {
            "type": "object",
            "additionalProperties": false,
            "required": ["to"],
            "properties": {
                "to": {"type": "string", "description": "The other daemon's UNIX socket, or tcp:HOST:PORT."},
                "name": {"type": "string", "description": "The name there (default: the same)."},
                "vnics": {"type": "array", "items": {"type": "string"}, "description": "Where its vNICs join there (default: as here)."},
                "token": {"type": "string", "description": "The token to present to the other daemon (default: none)."}
            }
        },
        "Migrated": {
            "allOf": [r("Instance"), {
                "type": "object",
                "properties": {
                    "to": {"type": "string"},
                    "from": {"type": "string", "description": "Its name here."},
                    "downtime_ms": {"type": "number", "description": "From pausing it here to the other daemon's answer that it runs there."},
                    "suspend_ms": {"type": "number", "description": "The pause and the second part's writing."},
                    "precopy_ms": {"type": "number", "description": "Reading its memory while it ran."},
                    "prepare_ms": {"type": "number", "description": "The other daemon building the VM from the first part (before the pause)."},
                    "resume_ms": {"type": "number", "description": "The other daemon, from the second part to running."},
                    "base_bytes": {"type": "integer"},
                    "delta_bytes": {"type": "integer"}
                }
            }]
        },
        "IncomingReady": {
            "type": "object",
            "properties": {
                "ready": {"type": "boolean"},
                "name": {"type": "string"},
                "id": {"type": "integer"},
                "prepare_ms": {"type": "number"}
            }
        },
        "FaultRequest": {
            "type": "object",
            "additionalProperties": false,
            "required": ["kind"],
            "properties": {"kind": {"type": "string", "description": "panic, spin, oom, scribble-mailbox, ..."}}
        },
        "HandlerValue": {"type": "object", "properties": {"handler": {"type": "string"}, "value": {"type": "string"}}},
        "HandlerList": {
            "type": "object",
            "properties": {"handlers": {"type": "array", "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "mode": {"type": "string", "description": "r, w or rw"}}
            }}}
        },
        "Console": {"type": "object", "properties": {"text": {"type": "string"}, "total_bytes": {"type": "integer"}}},
        "Event": {
            "type": "object",
            "properties": {
                "seq": {"type": "integer"},
                "time": {"type": "number", "description": "UNIX time, seconds."},
                "kind": {"type": "string", "enum": ["created", "installed", "config_refused", "crashed", "restarted", "restart_failed", "stopped", "started", "recovered", "destroyed", "migrated"]},
                "instance": {"type": "string"},
                "id": {"type": "integer"},
                "tenant": {"type": "string"},
                "message": {"type": "string"},
                "lines": {"type": "array", "items": {"type": "string"}}
            }
        },
        "EventList": {"type": "object", "properties": {"events": {"type": "array", "items": r("Event")}, "last": {"type": "integer"}}},
        "OpenApi": {"type": "object", "description": "An OpenAPI 3.0 document."}
    });
    match s {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The OpenAPI 3.0 document, built from [`ROUTES`].
pub fn openapi() -> Value {
    let mut paths = Map::new();
    for rt in ROUTES {
        let entry = paths
            .entry(rt.path.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        let mut params: Vec<Value> = rt
            .path
            .split('/')
            .filter_map(|s| s.strip_prefix('{').and_then(|s| s.strip_suffix('}')))
            .map(|p| {
                json!({"name": p, "in": "path", "required": true, "schema": {"type": "string"},
                       "description": if p == "instance" { "Name or id." } else { "ELEMENT.HANDLER (percent-encoded)." }})
            })
            .collect();
        for (name, ty, desc) in rt.query {
            params.push(json!({"name": name, "in": "query", "required": false,
                               "schema": {"type": ty}, "description": desc}));
        }
        let ok_content = if rt.response == "text" {
            json!({"text/plain": {"schema": {"type": "string"}}})
        } else {
            json!({"application/json": {"schema": r(rt.response)}})
        };
        let mut op = json!({
            "operationId": format!("{:?}", rt.op),
            "summary": rt.summary,
            "parameters": params,
            "responses": {
                rt.status.to_string(): {"description": "Success.", "content": ok_content},
                "default": {"description": "An error.", "content": {"application/json": {"schema": r("Error")}}}
            },
            "security": [{}, {"bearer": []}]
        });
        if let Some(req) = rt.request {
            op["requestBody"] =
                json!({"required": true, "content": {"application/json": {"schema": r(req)}}});
        }
        if let Value::Object(m) = entry {
            m.insert(rt.method.to_ascii_lowercase(), op);
        }
    }
    json!({
        "openapi": "3.0.3",
        "info": {
            "title": "ClickOS daemon API",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The control plane of a fleet of Click instances. Over the UNIX socket a client running as root or as the daemon's user is the admin without a token; otherwise send Authorization: Bearer TOKEN."
        },
        "paths": paths,
        "components": {
            "schemas": schemas(),
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}}
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_route_is_in_the_document_and_every_schema_exists() {
        let doc = openapi();
        let schemas = schemas();
        for rt in ROUTES {
            let op = &doc["paths"][rt.path][rt.method.to_ascii_lowercase()];
            assert!(op.is_object(), "{} {} missing", rt.method, rt.path);
            assert_eq!(op["operationId"], format!("{:?}", rt.op));
            for name in rt.request.iter().chain([&rt.response]) {
                assert!(*name == "text" || schemas.contains_key(*name), "{name}");
            }
            // and the router finds it with concrete parameters
            let concrete = rt
                .path
                .replace("{instance}", "x")
                .replace("{handler}", "c.count");
            let (found, _) = route(rt.method, &concrete).unwrap();
            assert_eq!(found.op, rt.op);
        }
        // nothing in the document the router does not serve
        let n: usize = doc["paths"]
            .as_object()
            .unwrap()
            .values()
            .map(|v| v.as_object().unwrap().len())
            .sum();
        assert_eq!(n, ROUTES.len());
        // every $ref resolves
        let text = doc.to_string();
        for part in text.split("#/components/schemas/").skip(1) {
            let name: String = part.chars().take_while(|c| *c != '"').collect();
            assert!(schemas.contains_key(&name), "dangling $ref {name}");
        }
    }

    #[test]
    fn routing() {
        let (r, p) = route("GET", "/v1/instances/a/handlers/sub%2Fc.count").unwrap();
        assert_eq!(r.op, Op::ReadHandler);
        assert_eq!(p, vec!["a", "sub/c.count"]);
        assert_eq!(route("GET", "/v1/nothing"), Err(Miss::NotFound));
        assert!(matches!(
            route("PATCH", "/v1/instances"),
            Err(Miss::Method(_))
        ));
        assert_eq!(route("GET", "/v1/instances/%zz"), Err(Miss::BadPath));
        assert_eq!(route("GET", "/v1/instances//config"), Err(Miss::NotFound));
    }
}
