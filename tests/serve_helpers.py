"""Start ``ifpo serve`` as a real process on a loopback port, for the server tests and bench/serve_load.py."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``python -m ifpo.cli serve ARGS --port P`` with its stderr in ``log``; ``kill()`` is kill -9."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, log: Path, python: str = sys.executable,
                 port: int | None = None) -> None:
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.args, self.env, self.log, self.python = args, env, log, python
        self.proc: subprocess.Popen | None = None

    def start(self, timeout: float = 120) -> Server:
        env = {**os.environ, **(self.env or {})}
        handle = self.log.open("ab")
        self.proc = subprocess.Popen([self.python, "-m", "ifpo.cli", "serve", *self.args, "--port", str(self.port),
                                      "--log-level", "info"], stdout=handle, stderr=handle, env=env, cwd=ROOT)
        deadline = time.time() + timeout
        while True:
            try:
                status, body = self.get("/health")
                if status == 200:
                    return self
            except OSError:
                pass
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"ifpo serve did not start (exit {self.proc.poll()}):\n{self.log.read_text()[-3000:]}")
            time.sleep(0.3)

    def get(self, path: str) -> tuple[int, Any]:
        with urllib.request.urlopen(self.url + path, timeout=10) as r:
            return r.status, json.load(r)

    def post(self, path: str, body: Any, *, raw: bytes | None = None, headers: dict[str, str] | None = None,
             timeout: float = 120) -> tuple[int, Any]:
        data = raw if raw is not None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method="POST",
                                         headers={"Content-Type": "application/json", **(headers or {})})
        try:
            with urllib.request.urlopen(request, timeout=timeout) as r:
                return r.status, json.load(r)
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()  # SIGKILL: no shutdown handler runs
            self.proc.wait(30)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(30)
