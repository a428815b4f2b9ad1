"""Starting a private moderation-server for tests that stop or restart it."""

from __future__ import annotations

import os
import select
import signal
import subprocess
import time
from typing import Optional


class PrivateServer:
    """A moderation-server process of the test's own, on ``port`` (0: ephemeral)."""

    def __init__(self, binary: str, data_dir: str, api_key: str, port: int = 0) -> None:
        os.makedirs(data_dir, exist_ok=True)
        self._log = open(os.path.join(data_dir, "..", "server-%d.log" % time.monotonic_ns()), "wb")
        self.process = subprocess.Popen(
            [binary, "--listen", "127.0.0.1:%d" % port, "--data-dir", data_dir, "--api-key", api_key,
             "--shutdown-grace", "2"],
            stdout=subprocess.PIPE, stderr=self._log)
        self.address = self._await_listening()

    def _await_listening(self) -> str:
        assert self.process.stdout is not None
        deadline = time.monotonic() + 10
        line = b""
        while not line.endswith(b"\n"):
            remaining = deadline - time.monotonic()
            ready, _, _ = select.select([self.process.stdout], [], [], max(remaining, 0))
            if not ready:
                self.kill()
                raise AssertionError("the server printed no 'listening on' line within 10 s")
            chunk = os.read(self.process.stdout.fileno(), 256)
            if not chunk:
                raise AssertionError("the server exited before listening (exit code %s)" % self.process.wait())
            line += chunk
        text = line.decode().strip()
        assert text.startswith("listening on "), text
        return text[len("listening on "):]

    @property
    def port(self) -> int:
        return int(self.address.rsplit(":", 1)[1])

    def terminate(self, timeout: float = 10) -> Optional[int]:
        """SIGTERM (graceful drain) and wait; the exit code."""
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout)
        finally:
            self._log.close()

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._log.close()
