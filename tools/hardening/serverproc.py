"""A real moderation-server process for the soak and crash tests: start, wait for 'listening on',
sample its memory and open files, stop it (SIGTERM) or kill it (SIGKILL)."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import time
import urllib.request
from typing import Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "clients", "python", "src"))

APP_ID = "hardening"
API_KEY = APP_ID + ":hardening-key-0123456789"


class ServerProcess:
    """``moderation-server`` on an ephemeral loopback port with its own data directory."""

    def __init__(self, binary: str, data_dir: str, log_path: str, extra_args: Optional[List[str]] = None) -> None:
        os.makedirs(data_dir, exist_ok=True)
        self._log = open(log_path, "ab")
        self.process = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:0", "--data-dir", data_dir, "--api-key", API_KEY,
             "--shutdown-grace", "2"] + (extra_args or []),
            stdout=subprocess.PIPE, stderr=self._log)
        self.pid = self.process.pid
        self.log_path = log_path
        self.address = self._await_listening()

    def _await_listening(self) -> str:
        assert self.process.stdout is not None
        deadline = time.monotonic() + 30
        line = b""
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([self.process.stdout], [], [], max(deadline - time.monotonic(), 0))
            if not ready:
                self.kill()
                raise RuntimeError("the server printed no 'listening on' line within 30 s")
            chunk = os.read(self.process.stdout.fileno(), 256)
            if not chunk:
                raise RuntimeError("the server exited before listening (exit code %s)" % self.process.wait())
            line += chunk
        text = line.decode().strip()
        if not text.startswith("listening on "):
            raise RuntimeError("unexpected first line from the server: %r" % text)
        return text[len("listening on "):]

    def metrics(self) -> Dict[str, float]:
        """The unlabelled samples of /metrics (needs --metrics-listen 127.0.0.1:0)."""
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

    def alive(self) -> bool:
        return self.process.poll() is None

    def rss_kib(self) -> int:
        """Resident set size (VmRSS) in KiB."""
        return self.memory_kib()["VmRSS"]

    def memory_kib(self) -> Dict[str, int]:
        """VmRSS and its parts, in KiB: RssAnon (heap, stacks: what a leak grows), RssFile
        (mapped files: SQLite maps its database) and RssShmem (SQLite's WAL index)."""
        values = {}
        with open("/proc/%d/status" % self.pid) as fh:
            for line in fh:
                key, _, rest = line.partition(":")
                if key in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
                    values[key] = int(rest.split()[0])
        return values

    def open_files(self) -> int:
        return len(os.listdir("/proc/%d/fd" % self.pid))

    def open_sockets(self) -> int:
        """Open file descriptors that are sockets (the listener, connections)."""
        count = 0
        for name in os.listdir("/proc/%d/fd" % self.pid):
            try:
                count += os.readlink("/proc/%d/fd/%s" % (self.pid, name)).startswith("socket:")
            except OSError:
                pass  # closed meanwhile
        return count

    def describe_files(self) -> List[str]:
        """What each open descriptor is (for the report)."""
        found = []
        for name in sorted(os.listdir("/proc/%d/fd" % self.pid), key=int):
            try:
                found.append("%s -> %s" % (name, os.readlink("/proc/%d/fd/%s" % (self.pid, name))))
            except OSError:
                pass
        return found

    def threads(self) -> int:
        return len(os.listdir("/proc/%d/task" % self.pid))

    def terminate(self, timeout: float = 15) -> int:
        """SIGTERM (graceful drain); the exit code."""
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


def least_squares_slope(points: List[tuple]) -> float:
    """Slope of the least-squares line through (x, y) points; 0 for fewer than two."""
    n = len(points)
    if n < 2:
        return 0.0
    mean_x = sum(x for x, _ in points) / n
    mean_y = sum(y for _, y in points) / n
    var = sum((x - mean_x) ** 2 for x, _ in points)
    if var == 0:
        return 0.0
    return sum((x - mean_x) * (y - mean_y) for x, y in points) / var
