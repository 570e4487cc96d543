"""Running a long-lived command as a user does, and stopping it with Ctrl-C (SIGINT), for the tests of
``nova-gitops controller`` and ``nova-agent run``."""

from __future__ import annotations

import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field


@dataclass
class Running:
    """A started process whose stderr is collected line by line while it runs."""

    process: subprocess.Popen[str]
    lines: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None

    @classmethod
    def start(cls, command: Sequence[str]) -> Running:
        process = subprocess.Popen(
            list(command),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ),
            start_new_session=True,  # its own process group, as a terminal's foreground job has
        )
        running = cls(process)
        running.reader = threading.Thread(target=running._read, daemon=True)
        running.reader.start()
        return running

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    def wait_for(self, ready: Callable[[], bool], timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not ready():
            if self.process.poll() is not None:
                raise AssertionError("exited early:\n" + "\n".join(self.lines))
            if time.monotonic() > deadline:
                raise AssertionError("not ready in time:\n" + "\n".join(self.lines))
            time.sleep(0.05)

    def said(self, text: str) -> bool:
        return any(text in line for line in list(self.lines))

    def ctrl_c(self, *, whole_group: bool = False) -> int:
        """SIGINT to the process, or to its whole group as a terminal's Ctrl-C does (git children too);
        the exit code."""
        if whole_group:
            os.killpg(self.process.pid, signal.SIGINT)
        else:
            self.process.send_signal(signal.SIGINT)
        return self.wait()

    def wait(self, timeout: float = 60.0) -> int:
        try:
            code = self.process.wait(timeout=timeout)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()
        if self.reader is not None:
            self.reader.join(timeout=10)
        if self.process.stderr is not None:
            self.process.stderr.close()
        return code

    def output(self) -> str:
        return "\n".join(self.lines)
