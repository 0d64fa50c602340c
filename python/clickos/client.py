"""The HTTP/JSON client (standard library only)."""

from __future__ import annotations

import http.client
import json
import os
import socket
import time
import urllib.parse
from typing import Any, Dict, Iterator, List, Optional


class ClickOSError(Exception):
    """The daemon refused a request.

    :ivar status: the HTTP status.
    :ivar code: the daemon's stable error code (``not_found``,
        ``config_refused``, ``quota_exceeded``, ...).
    :ivar lines: Click-style ``file:line: message`` lines, if any.
    """

    def __init__(self, status: int, code: str, message: str, lines: Optional[List[str]] = None):
        super().__init__(message if not lines else message + "\n" + "\n".join(lines))
        self.status = status
        self.code = code
        self.message = message
        self.lines: List[str] = list(lines or [])


class NotFound(ClickOSError):
    """No such instance (or one the caller's tenant may not see), or no such handler."""


class ConfigRefused(ClickOSError):
    """A configuration was refused; ``lines`` says why. On install the old one keeps running."""


class QuotaExceeded(ClickOSError):
    """The tenant's quota (instances or memory) would be exceeded."""


class Unauthorized(ClickOSError):
    """No valid token, or not allowed."""


class Unreachable(ClickOSError):
    """The daemon cannot be reached."""


def default_socket() -> str:
    """``$CLICKOS_SOCKET``, else ``/run/clickos.sock`` for root, else
    ``$XDG_RUNTIME_DIR/clickos.sock`` (or ``/tmp/clickos-UID.sock``)."""
    env = os.environ.get("CLICKOS_SOCKET")
    if env:
        return env
    if os.geteuid() == 0:
        return "/run/clickos.sock"
    rt = os.environ.get("XDG_RUNTIME_DIR")
    return os.path.join(rt, "clickos.sock") if rt else "/tmp/clickos-%d.sock" % os.geteuid()


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float):
        super().__init__("clickos", timeout=timeout)
        self._path = path

    def connect(self) -> None:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(self.timeout)
        s.connect(self._path)
        self.sock = s


def _q(s: str) -> str:
    return urllib.parse.quote(s, safe="")


class Client:
    """A connection to ``clickos daemon``.

    :param socket_path: the daemon's UNIX socket, or ``tcp:HOST:PORT``
        (default: :func:`default_socket`).
    :param token: a tenant's or the admin's API token (default:
        ``$CLICKOS_TOKEN``; without one, root and the daemon's user are the
        admin over the UNIX socket).
    :param timeout: seconds per request.
    """

    def __init__(self, socket_path: Optional[str] = None, token: Optional[str] = None, timeout: float = 30.0):
        self.socket_path = socket_path or default_socket()
        self.token = token if token is not None else (os.environ.get("CLICKOS_TOKEN") or None)
        self.timeout = timeout

    # -- transport ---------------------------------------------------------

    def _conn(self, timeout: Optional[float] = None) -> http.client.HTTPConnection:
        t = self.timeout if timeout is None else timeout
        if self.socket_path.startswith("tcp:"):
            host, _, port = self.socket_path[4:].rpartition(":")
            return http.client.HTTPConnection(host, int(port), timeout=t)
        return _UnixConnection(self.socket_path, t)

    def _headers(self, content_type: Optional[str], accept: Optional[str] = None) -> Dict[str, str]:
        h = {"Connection": "close"}
        if self.token:
            h["Authorization"] = "Bearer " + self.token
        if content_type is not None:
            h["Content-Type"] = content_type
        if accept is not None:
            h["Accept"] = accept
        return h

    def _exchange(self, method: str, path: str, data: Optional[bytes], content_type: Optional[str],
                  accept: Optional[str] = None, timeout: Optional[float] = None):
        conn = self._conn(timeout)
        try:
            try:
                conn.request(method, path, body=data, headers=self._headers(content_type, accept))
                resp = conn.getresponse()
                raw = resp.read()
            except (OSError, http.client.HTTPException) as e:
                raise Unreachable(0, "unreachable", "cannot reach the daemon at %s: %s" % (self.socket_path, e)) from e
        finally:
            conn.close()
        return resp, raw

    def request(self, method: str, path: str, body: Optional[Dict[str, Any]] = None,
                timeout: Optional[float] = None) -> Any:
        """One API call: returns the decoded JSON (or text for ``/metrics``);
        raises a :class:`ClickOSError` subclass on an error status."""
        data = None if body is None else json.dumps(body).encode()
        resp, raw = self._exchange(method, path, data, None if data is None else "application/json",
                                   timeout=timeout)
        return self._decode(resp, raw)

    def raw_request(self, method: str, path: str, data: Optional[bytes] = None,
                    timeout: Optional[float] = None):
        """An API call whose body (``data``, if any) and answer are raw bytes
        (``application/octet-stream``: snapshots). Returns ``(headers,
        bytes)``; a JSON answer is decoded as by :meth:`request` (errors
        raise) and returned as ``(headers, value)``."""
        resp, raw = self._exchange(method, path, data,
                                   None if data is None else "application/octet-stream",
                                   accept="application/octet-stream", timeout=timeout)
        if resp.getheader("Content-Type", "").startswith("application/octet-stream") and resp.status < 400:
            return resp, raw
        return resp, self._decode(resp, raw)

    @staticmethod
    def _decode(resp, raw: bytes) -> Any:
        ctype = resp.getheader("Content-Type", "")
        if not ctype.startswith("application/json"):
            if resp.status >= 400:
                raise ClickOSError(resp.status, "error", raw.decode(errors="replace"))
            return raw.decode(errors="replace")
        value = json.loads(raw.decode() or "null")
        if resp.status < 400:
            return value
        code = value.get("code", "error") if isinstance(value, dict) else "error"
        msg = value.get("error", "error") if isinstance(value, dict) else str(value)
        lines = value.get("lines", []) if isinstance(value, dict) else []
        cls: type = ClickOSError
        if resp.status == 404:
            cls = NotFound
        elif code == "config_refused":
            cls = ConfigRefused
        elif code == "quota_exceeded":
            cls = QuotaExceeded
        elif resp.status in (401, 403):
            cls = Unauthorized
        raise cls(resp.status, code, msg, lines)

    # -- instances ---------------------------------------------------------

    def create_instance(self, name: str, config: str, *, vnics: Optional[List[str]] = None,
                        memory: Optional[int] = None, isolation: Optional[str] = None,
                        restart: Optional[str] = None, config_file: Optional[str] = None,
                        fault_injection: bool = False,
                        metrics: Optional[List[str]] = None) -> Dict[str, Any]:
        """Boot an instance named ``name`` with configuration text ``config``.

        :param vnics: vNIC k joins ``vnics[k]`` (an interface, ``tap:NAME``,
            ``pcap:IN[,OUT]``).
        :param memory: bytes (default 8 MiB).
        :param isolation: ``vm``, ``process`` or ``none``.
        :param restart: ``never``, ``on-failure`` or ``always``.
        :param metrics: read handlers (``ELEMENT.HANDLER``) the daemon's
            ``/metrics`` exports as ``clickos_handler_value``.
        :returns: the instance (as :meth:`show`).
        """
        body: Dict[str, Any] = {"name": name, "config": config, "vnics": list(vnics or [])}
        if memory is not None:
            body["memory"] = memory
        if isolation is not None:
            body["isolation"] = isolation
        if restart is not None:
            body["restart"] = restart
        if config_file is not None:
            body["config_file"] = config_file
        if fault_injection:
            body["fault_injection"] = True
        if metrics:
            body["metrics"] = list(metrics)
        return self.request("POST", "/v1/instances", body)

    def list(self) -> List[Dict[str, Any]]:
        """The instances the caller may see."""
        return self.request("GET", "/v1/instances")["instances"]

    def show(self, instance: str) -> Dict[str, Any]:
        """One instance by name or id: state, restarts, uptime, vNIC counters."""
        return self.request("GET", "/v1/instances/" + _q(str(instance)))

    def config(self, instance: str) -> str:
        """The instance's current configuration text."""
        return self.request("GET", "/v1/instances/%s/config" % _q(str(instance)))["config"]

    def install(self, instance: str, config: str, config_file: Optional[str] = None) -> Dict[str, Any]:
        """Replace the configuration atomically; raises :class:`ConfigRefused`
        (the old configuration keeps running)."""
        body: Dict[str, Any] = {"config": config}
        if config_file is not None:
            body["config_file"] = config_file
        return self.request("PUT", "/v1/instances/%s/config" % _q(str(instance)), body)

    def stop_instance(self, instance: str) -> Dict[str, Any]:
        """Stop the instance; it stays stopped across daemon restarts."""
        return self.request("POST", "/v1/instances/%s/stop" % _q(str(instance)))

    def start_instance(self, instance: str) -> Dict[str, Any]:
        """Start a stopped instance with its stored configuration and wiring."""
        return self.request("POST", "/v1/instances/%s/start" % _q(str(instance)))

    def destroy_instance(self, instance: str) -> Dict[str, Any]:
        """Destroy the instance and forget it."""
        return self.request("DELETE", "/v1/instances/" + _q(str(instance)))

    # -- suspend, resume, migrate (vm instances) ---------------------------

    def suspend(self, instance: str, file: Optional[str] = None) -> Dict[str, Any]:
        """Suspend the instance: its whole state (configuration, counters,
        NAT mappings, ...) to a snapshot the daemon keeps (state
        ``suspended``, across daemon restarts); ``file`` gets a copy written
        by this client (the snapshot comes as raw bytes). Raises
        ``ClickOSError`` (code ``cannot_suspend``) for instances not at
        isolation ``vm``."""
        path = "/v1/instances/%s/suspend" % _q(str(instance))
        if file is None:
            return self.request("POST", path)
        resp, snap = self.raw_request("POST", path)
        if not isinstance(snap, bytes):
            raise ClickOSError(resp.status, "error", "the daemon did not send the snapshot")
        with open(file, "wb") as f:
            f.write(snap)
        return json.loads(resp.getheader("X-Clickos-Instance", "{}"))

    def resume(self, instance_or_file: str, *, name: Optional[str] = None,
               vnics: Optional[List[str]] = None, snapshot: Optional[bytes] = None) -> Dict[str, Any]:
        """Resume a suspended instance by name, or a snapshot (a file path
        read by this client, or ``snapshot`` bytes; sent as raw bytes) as a
        new instance named ``name`` with its vNICs attached to ``vnics``
        (default: as before; ``[]``: none). A damaged snapshot raises
        ``ClickOSError`` (code ``bad_snapshot``)."""
        if snapshot is None and not os.path.isfile(instance_or_file):
            return self.request("POST", "/v1/instances/%s/resume" % _q(str(instance_or_file)))
        if snapshot is None:
            with open(instance_or_file, "rb") as f:
                snapshot = f.read()
        q = []
        if name is not None:
            q.append("name=" + _q(name))
        if vnics is not None:
            q += ["vnic=" + _q(v) for v in vnics] or ["novnics=1"]
        path = "/v1/instances/resume" + ("?" + "&".join(q) if q else "")
        return self.raw_request("POST", path, snapshot)[1]

    def migrate(self, instance: str, to: "Client | str", *, name: Optional[str] = None,
                vnics: Optional[List[str]] = None) -> Dict[str, Any]:
        """Move the instance live to the daemon ``to`` (a :class:`Client` or
        its socket): this daemon sends its memory there while it runs,
        pauses it and sends only the pages changed since; once it runs
        there (vNICs attached as ``vnics`` says) it is destroyed here. If
        ``to`` refuses, it runs on here and the error is raised. The answer
        is ``to``'s instance with ``downtime_ms`` (from the pause to running
        there), ``suspend_ms``, ``precopy_ms``, ``base_bytes`` and
        ``delta_bytes``."""
        sock = to.socket_path if isinstance(to, Client) else to
        token = to.token if isinstance(to, Client) else None
        if not sock.startswith("tcp:"):
            sock = os.path.abspath(sock)
        body: Dict[str, Any] = {"to": sock}
        if name is not None:
            body["name"] = name
        if vnics is not None:
            body["vnics"] = vnics
        if token:
            body["token"] = token
        return self.request("POST", "/v1/instances/%s/migrate" % _q(str(instance)), body)

    # -- handlers ----------------------------------------------------------

    def handlers(self, instance: str) -> List[Dict[str, str]]:
        """Every handler as ``{"name": "c.count", "mode": "r"}``."""
        return self.request("GET", "/v1/instances/%s/handlers" % _q(str(instance)))["handlers"]

    def read(self, instance: str, handler: str) -> str:
        """Read handler ``ELEMENT.HANDLER``."""
        p = "/v1/instances/%s/handlers/%s" % (_q(str(instance)), _q(handler))
        return self.request("GET", p)["value"]

    def write(self, instance: str, handler: str, value: str = "") -> None:
        """Write ``value`` to handler ``ELEMENT.HANDLER``."""
        p = "/v1/instances/%s/handlers/%s" % (_q(str(instance)), _q(handler))
        self.request("PUT", p, {"value": value})

    def console(self, instance: str) -> str:
        """The instance's recent console output."""
        return self.request("GET", "/v1/instances/%s/console" % _q(str(instance)))["text"]

    # -- events, metrics, document ----------------------------------------

    def events(self, since: int = 0, wait: float = 0.0) -> List[Dict[str, Any]]:
        """Events after sequence number ``since``; ``wait`` long-polls."""
        v = self.request("GET", "/v1/events?since=%d&wait=%g" % (since, wait), timeout=self.timeout + wait)
        return v["events"]

    def follow(self, since: int = 0, poll: float = 10.0) -> Iterator[Dict[str, Any]]:
        """Yields events as they happen (long-polling), forever."""
        while True:
            for e in self.events(since, wait=poll):
                since = max(since, int(e["seq"]))
                yield e

    def metrics(self) -> str:
        """The Prometheus exposition text."""
        return self.request("GET", "/metrics")

    def openapi(self) -> Dict[str, Any]:
        """The API's OpenAPI 3 document."""
        return self.request("GET", "/v1/openapi.json")

    def wait_state(self, instance: str, state: str, timeout: float = 10.0) -> Dict[str, Any]:
        """Polls until the instance is in ``state``; raises ``TimeoutError``."""
        t0 = time.monotonic()
        while True:
            v = self.show(instance)
            if v["state"] == state:
                return v
            if time.monotonic() - t0 > timeout:
                raise TimeoutError("%s is %s, not %s" % (instance, v["state"], state))
            time.sleep(0.05)

    # -- cosmos's names ----------------------------------------------------

    def create(self, name: str, config: str, **kw: Any) -> Dict[str, Any]:
        """cosmos ``create``: as :meth:`create_instance`."""
        return self.create_instance(name, config, **kw)

    def destroy(self, instance: str) -> Dict[str, Any]:
        """cosmos ``destroy``: as :meth:`destroy_instance`."""
        return self.destroy_instance(instance)

    def start(self, instance: str) -> Dict[str, Any]:
        """cosmos ``start``: as :meth:`start_instance`."""
        return self.start_instance(instance)

    def stop(self, instance: str) -> Dict[str, Any]:
        """cosmos ``stop``: as :meth:`stop_instance`."""
        return self.stop_instance(instance)

    def readh(self, instance: str, element: str, handler: Optional[str] = None) -> str:
        """cosmos ``readh``: ``readh(i, "c", "count")`` or ``readh(i, "c.count")``."""
        return self.read(instance, element if handler is None else "%s.%s" % (element, handler))

    def writeh(self, instance: str, element: str, handler: str, value: Optional[str] = None) -> None:
        """cosmos ``writeh``: ``writeh(i, "c", "reset", "")`` or ``writeh(i, "c.reset", "")``."""
        if value is None:
            self.write(instance, element, handler)
        else:
            self.write(instance, "%s.%s" % (element, handler), value)
