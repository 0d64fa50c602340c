"""The Python client against a real daemon."""

from __future__ import annotations

import pytest

from clickos import Client, ConfigRefused, NotFound, QuotaExceeded, Unauthorized, Unreachable

COUNTER = "c :: Counter;\nIdle -> c -> Discard;\n"


def test_lifecycle(client: Client) -> None:
    v = client.create_instance("fw", COUNTER, config_file="fw.click", restart="on-failure")
    assert v["state"] == "running" and v["name"] == "fw"
    assert [i["name"] for i in client.list()] == ["fw"]
    assert client.show(str(v["id"]))["name"] == "fw"
    assert client.read("fw", "c.count") == "0"
    client.write("fw", "c.reset")
    names = {h["name"]: h["mode"] for h in client.handlers("fw")}
    assert names["c.count"] == "r"
    assert client.config("fw") == COUNTER
    client.install("fw", "d :: Counter;\nIdle -> d -> Discard;\n")
    assert client.read("fw", "d.count") == "0"
    assert client.stop_instance("fw")["state"] == "stopped"
    assert client.start_instance("fw")["state"] == "running"
    assert isinstance(client.console("fw"), str)
    kinds = [e["kind"] for e in client.events()]
    assert kinds[:2] == ["created", "installed"]
    assert "# TYPE clickos_instance_up gauge" in client.metrics()
    assert "/v1/instances" in client.openapi()["paths"]
    client.destroy_instance("fw")
    with pytest.raises(NotFound):
        client.show("fw")


def test_handler_metrics(client: Client) -> None:
    client.create_instance("hm", COUNTER, metrics=["c.count", "c.nosuch"])
    text = client.metrics()
    assert 'clickos_handler_value{instance="hm",' in text and 'handler="c.count"} 0' in text
    assert 'handler="c.nosuch"} 1' in text
    with pytest.raises(Exception) as e:
        client.create_instance("hn", COUNTER, metrics=["count"])
    assert "ELEMENT.HANDLER" in str(e.value)
    client.destroy_instance("hm")


def test_cosmos_aliases(client: Client) -> None:
    client.create("m", COUNTER)
    assert client.readh("m", "c", "count") == "0"
    assert client.readh("m", "c.count") == "0"
    client.writeh("m", "c", "reset", "")
    client.writeh("m", "c.reset", "")
    client.stop("m")
    client.start("m")
    client.destroy("m")
    assert client.list() == []


def test_errors(client: Client, daemon) -> None:
    client.create("fw", COUNTER)
    with pytest.raises(ConfigRefused) as e:
        client.install("fw", "x :: Nope;\n", config_file="bad.click")
    assert any(l.startswith("bad.click:1:") for l in e.value.lines), e.value.lines
    assert client.read("fw", "c.count") == "0"  # the old one runs
    with pytest.raises(NotFound):
        client.read("fw", "c.nosuch")
    with pytest.raises(NotFound):
        client.read("ghost", "c.count")
    with pytest.raises(ConfigRefused):
        client.create("bad", "x :: Nope;\n")
    with pytest.raises(Unauthorized):
        Client(daemon.sock, token="wrong-token").list()
    with pytest.raises(Unreachable):
        Client(daemon.sock + ".none").list()


def test_tenants_and_quota(client: Client, daemon) -> None:
    a = Client(daemon.sock, token="tenant-a-token")
    b = Client(daemon.sock, token="tenant-b-token")
    a.create("xa", COUNTER)
    with pytest.raises(QuotaExceeded):
        a.create("xa2", COUNTER)
    assert b.list() == []
    for call in (lambda: b.show("xa"), lambda: b.read("xa", "c.count"),
                 lambda: b.console("xa"), lambda: b.destroy("xa")):
        with pytest.raises(NotFound):
            call()
    assert [i["name"] for i in client.list()] == ["xa"]


def test_crash_restart_and_kill_9(client: Client, daemon) -> None:
    client.create("r", COUNTER, restart="always", fault_injection=True)
    client.request("POST", "/v1/instances/r/fault", {"kind": "panic"})
    seen = set()
    for e in client.follow(poll=5):
        seen.add(e["kind"])
        if "restarted" in seen:
            break
    assert "crashed" in seen
    daemon.kill9()
    daemon.start()
    v = client.wait_state("r", "running")
    assert v["restart"] == "always"
    assert client.read("r", "c.count") == "0"


def _kvm() -> bool:
    import os
    ok = os.access("/dev/kvm", os.R_OK | os.W_OK)
    if not ok and os.environ.get("CI") == "true":
        pytest.fail("/dev/kvm unavailable in CI")
    return ok


def test_suspend_resume_migrate(client: Client, daemon, tmp_path) -> None:
    if not _kvm():
        pytest.skip("/dev/kvm unavailable")
    import pathlib
    from conftest import Daemon
    from clickos import ClickOSError
    cfg = "InfiniteSource(LIMIT 77, STOP false) -> c :: Counter -> Discard;"
    client.create_instance("s", cfg, isolation="vm")
    client.wait_state("s", "running")
    for _ in range(100):
        if client.read("s", "c.count").strip() == "77":
            break
        import time
        time.sleep(0.01)
    snap = tmp_path / "s.snap"
    v = client.suspend("s", str(snap))
    assert v["state"] == "suspended" and snap.stat().st_size > 4096
    client.resume("s")
    assert client.read("s", "c.count").strip() == "77"
    c2 = client.resume(str(snap), name="s2")
    assert c2["state"] == "running" and client.read("s2", "c.count").strip() == "77"
    with pytest.raises(ClickOSError) as e:
        client.resume("x", snapshot=snap.read_bytes()[:-10], name="x")
    assert "truncated" in str(e.value)
    other_dir = pathlib.Path(daemon.sock).parent / "other"
    other_dir.mkdir()
    other = Daemon(other_dir, [])  # started by the constructor
    try:
        to = Client(other.sock, token="")
        # A name taken there: refused, and it runs on here, unchanged.
        to.create_instance("taken", cfg, isolation="vm")
        with pytest.raises(ClickOSError) as e:
            client.migrate("s", to, name="taken")
        assert e.value.code == "migration_refused" and "exists" in str(e.value)
        assert client.show("s")["state"] == "running"
        assert client.read("s", "c.count").strip() == "77"
        r = client.migrate("s", to)
        assert r["state"] == "running" and r["downtime_ms"] > 0
        assert r["delta_bytes"] > 0 and r["base_bytes"] > r["delta_bytes"]
        assert to.read("s", "c.count").strip() == "77"
        with pytest.raises(NotFound):
            client.show("s")
    finally:
        other.stop()
