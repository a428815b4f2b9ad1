"""A real moderation-server process for tests: start it on a loopback port, wait until it listens,
read its /metrics, stop it (SIGTERM, a graceful drain) or kill it (SIGKILL, a crash).

Used by this package's own tests and by the project's soak and crash tests; it is here so that a
service testing against a real server binary can use it too.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
import urllib.request
from typing import Dict, List, Optional


class ServerProcess:
    """``moderation-server`` listening on ``127.0.0.1:port`` (0: ephemeral) with its own data
    directory; stderr (the log) goes to ``log_path``. ``extra_args`` are more server flags."""

    def __init__(self, binary: str, data_dir: str, api_key: str, log_path: str, port: int = 0,
                 extra_args: Optional[List[str]] = None, ready_timeout: float = 30) -> None:
        os.makedirs(data_dir, exist_ok=True)
        self.log_path = log_path
        self._log = open(log_path, "ab")
        self.process = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:%d" % port, "--grpc-listen", "127.0.0.1:0", "--data-dir", data_dir, "--api-key", api_key,
             "--shutdown-grace", "2"] + (extra_args or []),
            stdout=subprocess.PIPE, stderr=self._log)
        self.pid = self.process.pid
        self.address = self._await_listening(ready_timeout)

    def _await_listening(self, timeout: float) -> str:
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        line = b""
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([self.process.stdout], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                self.kill()
                raise RuntimeError("the server printed no 'listening on' line within %g s" % timeout)
            chunk = os.read(self.process.stdout.fileno(), 256)
            if not chunk:
                raise RuntimeError("the server exited before listening (exit code %s)" % self.process.wait())
            line += chunk
        text = line.decode().strip()
        if not text.startswith("listening on "):
            raise RuntimeError("unexpected first line from the server: %r" % text)
        return text[len("listening on "):]

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def alive(self) -> bool:
        return self.process.poll() is None

    def metrics(self) -> Dict[str, float]:
        """The unlabelled samples of /metrics (the server needs ``--metrics-listen 127.0.0.1:0``)."""
        url = None
        with open(self.log_path, errors="replace") as fh:
            for line in fh:
                if "metrics served" in line and "listen=" in line:
                    url = line.split("listen=", 1)[1].split()[0]
        if url is None:
            raise RuntimeError("the server logged no 'metrics served' line")
        with urllib.request.urlopen(url, timeout=10) as response:
            text = response.read().decode()
        values: Dict[str, float] = {}
        for line in text.splitlines():
            if line and not line.startswith("#") and "{" not in line:
                name, _, value = line.partition(" ")
                values[name] = float(value)
        return values

    def terminate(self, timeout: float = 15) -> Optional[int]:
        """SIGTERM (graceful drain) and wait; the exit code."""
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        finally:
            self._log.close()

    def kill(self) -> None:
        """SIGKILL: no drain, no flush — a crash."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait()
        self._log.close()
