"""Fixtures: a real ``clickos daemon`` on a temporary state directory."""

from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import time
from typing import Iterator

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from clickos import Client  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]


def clickos_bin() -> str:
    b = os.environ.get("CLICKOS_BIN") or str(ROOT / "target" / "debug" / "clickos")
    if not os.path.exists(b):
        pytest.fail("no clickos binary at %s (cargo build -p clickos, or set CLICKOS_BIN)" % b)
    return b


class Daemon:
    def __init__(self, tmp: pathlib.Path, extra: list):
        self.tmp = tmp
        self.sock = str(tmp / "d.sock")
        self.args = [clickos_bin(), "daemon", "--state", str(tmp / "state"), "--socket", self.sock,
                     "--isolation", "process", "--allow-fault-injection"] + extra
        self.proc = None
        self.start()

    def start(self) -> None:
        self.proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        t0 = time.monotonic()
        while True:
            try:
                s = socket.socket(socket.AF_UNIX)
                s.connect(self.sock)
                s.close()
                return
            except OSError:
                if self.proc.poll() is not None:
                    raise RuntimeError("daemon exited")
                if time.monotonic() - t0 > 10:
                    raise RuntimeError("daemon did not come up")
                time.sleep(0.02)

    def kill9(self) -> None:
        self.proc.kill()
        self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture
def daemon(tmp_path_factory) -> Iterator[Daemon]:
    # short paths: UNIX socket names are limited to 108 bytes
    tmp = pathlib.Path("/tmp") / ("clickos-py-%d-%d" % (os.getpid(), time.monotonic_ns() % 10**9))
    tmp.mkdir()
    tokens = tmp / "tokens.json"
    tokens.write_text(json.dumps({"tokens": [
        {"token": "tenant-a-token", "tenant": "a", "max_instances": 1},
        {"token": "tenant-b-token", "tenant": "b"},
    ]}))
    d = Daemon(tmp, ["--tokens", str(tokens)])
    yield d
    d.stop()
    subprocess.run(["rm", "-rf", str(tmp)])


@pytest.fixture
def client(daemon: Daemon) -> Client:
    return Client(daemon.sock, token="")
