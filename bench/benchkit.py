"""What the benchmarks (bench/*.py, bench/*.sh) and the hardening drivers (tools/hardening/*.py)
share: the "median (min–max)" of repeated measurements, free loopback ports, a moderation-server
child process (started, awaited, stopped), stopping any child process, and what /proc and
/metrics say about a process.

    import benchkit                                  # from bench/: the script's own folder
    sys.path.append(os.path.join(ROOT, "bench"))     # from elsewhere (tools/hardening/serverproc.py)

Standard library only: the scripts run with the system python3 from the repository root, with
nothing installed.

clients/python/src/mrpc_client/testing.py (ServerProcess) starts a moderation-server too, and
stays separate: it is part of the published client package, for the tests of the package's
users, so it cannot import from this repository's scripts; and the benchmarks cannot use it,
because importing it imports the package (and so protobuf, which the benchmarks do not need),
and it cannot pin the server to a core, turn the gRPC listener off or send the log anywhere but
a file. The soak and the crash test (tools/hardening/serverproc.py) do use it, on purpose: the
project's own long runs exercise the helper it publishes; the adversarial drivers use
ModerationServer, as they pipe the log and lower the server's descriptor limit.

    python3 bench/benchkit.py free-port              # a free loopback port, for the shell scripts
"""

import os
import select
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from typing import Callable, Dict, Iterable, List, Optional, Sequence, Union

#: The API key of the benchmarks' servers (bench/fanout-rounds.sh spells it out too).
API_KEY = "bench:benchkey0123456789"
TICKS = os.sysconf("SC_CLK_TCK")


# MARK: reports


def spread(values: Sequence[float], digits: int = 1, unit: str = "", grouped: bool = False) -> str:
    """The median and the range of repeated measurements: "12.3 (11.8–13.0)".

    `digits` after the point; `unit` follows the median ("45% (40–50)", "1.2 ms (1.1–1.4)");
    `grouped` puts a space between thousands ("1 234 567 (1 200 000–1 300 000)"). No values: "—".
    """
    if not values:
        return "—"

    def number(value: float) -> str:
        text = "{:,.{}f}".format(value, digits) if grouped else "%.*f" % (digits, value)
        return text.replace(",", " ")

    return "%s%s (%s–%s)" % (number(statistics.median(values)), unit, number(min(values)), number(max(values)))


def column(rows: Iterable[dict], key: str) -> List[float]:
    """One measurement of every run: [row[key] for row in rows]."""
    return [row[key] for row in rows]


# MARK: processes


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on (for a server that cannot be given port 0)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def stop_process(process: subprocess.Popen, timeout: float = 15) -> Optional[int]:
    """SIGTERM, then SIGKILL when it has not exited within `timeout` s. The exit code, or None
    when it had to be killed."""
    if process.poll() is not None:
        return process.returncode
    process.send_signal(signal.SIGTERM)
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None


def proc_stat(pid: int) -> List[str]:
    """The fields of /proc/PID/stat after the command name: [0] the state, [1] the parent's pid,
    [11] and [12] utime and stime, [13] and [14] cutime and cstime (in TICKS)."""
    with open("/proc/%d/stat" % pid) as fh:
        return fh.read().rsplit(")", 1)[1].split()


def cpu_seconds(pid: int) -> float:
    """User and system CPU time of a process so far (all its threads)."""
    fields = proc_stat(pid)
    return (int(fields[11]) + int(fields[12])) / TICKS


def memory_kib(pid: int) -> Dict[str, int]:
    """VmRSS and its parts, in KiB: RssAnon (heap, stacks: what a leak grows), RssFile (mapped
    files: SQLite maps its database) and RssShmem (SQLite's WAL index). Missing for a zombie."""
    values = {}
    with open("/proc/%d/status" % pid) as fh:
        for line in fh:
            key, _, rest = line.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
                values[key] = int(rest.split()[0])
    return values


def read_metrics(url: str, timeout: float = 10) -> Dict[str, float]:
    """The unlabelled samples of a Prometheus text page (the server's --metrics-listen)."""
    with urllib.request.urlopen(url, timeout=timeout) as response:
        text = response.read().decode()
    values: Dict[str, float] = {}
    for line in text.splitlines():
        if line and not line.startswith("#") and "{" not in line:
            fields = line.split()
            values[fields[0]] = float(fields[1])
    return values


class ModerationServer:
    """A ``moderation-server`` child process with its own data directory, listening on an
    ephemeral loopback port: started, and ready once it has printed ``listening on ADDR``.

    ``flags`` are more server flags; ``grpc_listen`` is its --grpc-listen ("off" for none);
    ``core`` pins it (``taskset -c CORE``); ``log`` is where its standard error (the log) goes: a
    file's path (appended to), subprocess.DEVNULL or subprocess.PIPE, or None for this process's
    own. Raises RuntimeError when it does not get that far; a subclass that pipes the log reads it
    from ``started()`` on and says what it said in ``log_excerpt()``."""

    def __init__(self, binary: str, data_dir: str, api_key: Optional[str] = None, flags: Sequence[str] = (), *,
                 grpc_listen: str = "127.0.0.1:0", core: Optional[int] = None,
                 log: Union[str, int, None] = None, ready_timeout: float = 30,
                 preexec_fn: Optional[Callable[[], None]] = None) -> None:
        os.makedirs(data_dir, exist_ok=True)
        self.command = [binary, "--listen", "127.0.0.1:0", "--grpc-listen", grpc_listen, "--data-dir", data_dir]
        if api_key is not None:
            self.command += ["--api-key", api_key]
        self.command += list(flags)
        self.log_path = log if isinstance(log, str) else None
        self._log_file = open(log, "ab") if isinstance(log, str) else None
        pinned = ["taskset", "-c", str(core)] if core is not None else []
        self.process = subprocess.Popen(pinned + self.command, stdout=subprocess.PIPE,
                                        stderr=self._log_file if self._log_file else log, preexec_fn=preexec_fn)
        self.pid = self.process.pid  # taskset execs the server: the same process
        self.started()
        self.address = self._await_listening(ready_timeout)

    def started(self) -> None:
        """Called once the process exists, before it is awaited."""

    def log_excerpt(self) -> str:
        """The end of the log, for the message of a server that did not start."""
        if self.log_path is None:
            return ""
        with open(self.log_path, "rb") as fh:
            return " / ".join(fh.read()[-2000:].decode(errors="replace").strip().splitlines()[-3:])

    def _await_listening(self, timeout: float) -> str:
        """The address in the readiness line, the first on standard output (plain text: not for
        --log-format json)."""
        stdout = self.process.stdout
        assert stdout is not None
        deadline = time.monotonic() + timeout
        line = b""
        while not line.endswith(b"\n"):
            ready, _, _ = select.select([stdout], [], [], max(deadline - time.monotonic(), 0))
            chunk = os.read(stdout.fileno(), 256) if ready else b""
            if not chunk:
                if ready or self.process.poll() is not None:
                    code = self.process.wait()
                    said = self.log_excerpt()
                    raise RuntimeError("the server exited with %s before listening%s" % (code, ": " + said if said else ""))
                self.kill()
                raise RuntimeError("the server printed no 'listening on' line within %g s" % timeout)
            line += chunk
        stdout.close()  # the server writes nothing more there
        text = line.decode().strip()
        if not text.startswith("listening on "):
            self.kill()
            raise RuntimeError("unexpected first line from the server: %r" % text)
        return text[len("listening on "):]

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def alive(self) -> bool:
        return self.process.poll() is None

    def cpu_seconds(self) -> float:
        return cpu_seconds(self.pid)

    def stop(self, timeout: float = 15) -> Optional[int]:
        """SIGTERM (a graceful drain), then SIGKILL past `timeout` s: the exit code, None if killed."""
        try:
            return stop_process(self.process, timeout)
        finally:
            self._close_log()

    def kill(self) -> None:
        """SIGKILL: no drain, no flush — a crash."""
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._close_log()

    def _close_log(self) -> None:
        if self._log_file is not None:
            self._log_file.close()


if __name__ == "__main__":
    if sys.argv[1:] == ["free-port"]:
        print(free_port())
    else:
        sys.exit("usage: python3 bench/benchkit.py free-port")
