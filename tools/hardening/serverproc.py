"""The moderation-server of the soak and crash tests: the client package's ServerProcess with
the hardening key, and what the soak samples of it from /proc (memory, descriptors, threads).

Importing this module puts the client package (clients/python/src) and bench/ (for
bench/benchkit.py, what the hardening drivers share with the benchmarks) on sys.path."""

from __future__ import annotations

import os
import sys
from typing import Dict, List, Optional

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "clients", "python", "src"))
sys.path.append(os.path.join(ROOT, "bench"))  # last: bench's scripts shadow no module

import benchkit  # noqa: E402
from mrpc_client.testing import ServerProcess  # noqa: E402

APP_ID = "hardening"
API_KEY = APP_ID + ":hardening-key-0123456789"


class ObservedServer(ServerProcess):
    """``moderation-server`` on an ephemeral loopback port with its own data directory, whose
    memory, open files and threads can be sampled."""

    def __init__(self, binary: str, data_dir: str, log_path: str, extra_args: Optional[List[str]] = None) -> None:
        super().__init__(binary, data_dir, API_KEY, log_path, extra_args=extra_args)

    def memory_kib(self) -> Dict[str, int]:
        """VmRSS, RssAnon, RssFile and RssShmem in KiB (benchkit.memory_kib)."""
        return benchkit.memory_kib(self.pid)

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
