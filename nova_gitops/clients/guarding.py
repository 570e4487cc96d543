"""The last writer before a terminal: every character our commands write to stdout or stderr passes here.

Names, reasons and messages from sources, agents' reports, API servers and git are printed by every command
of ``nova-gitops`` and logged by ``nova-agent``, in problems, warnings, tables, explanations, log lines and
errors; one of them carrying an ESC sequence or a bidi override must not reach the terminal (or a CI log
viewer, or ``kubectl logs`` of the agent's pod, which read colours and links too) as what it is. Sanitising
each message where it is made would miss the next one, so each command line puts a ``GuardedStream`` over
``sys.stdout`` and ``sys.stderr`` for the command's run (``nova_gitops.cli.main``, ``nova_agent.cli``): each
write shows the hidden characters as ``\\uXXXX`` (``api.texts.visible``, newlines and tabs kept). The escape
is JSON's own, so the controller's JSON log lines stay valid and mean the same.

Our own styling — rich progress and tables, a coloured diff — is the one thing that may write escape
sequences: it goes to the stream under the guard (``raw``), and whoever writes there makes the data in it
visible first (``nova_gitops.cli.terminal`` and ``nova_agent.cli`` do for rich, ``rendering.diffformats`` for
a diff). Bytes have no way around: a guarded stream has no ``buffer``.

Here, in the clients both command lines share (the agent imports only ``api`` and ``clients``).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from typing import Any, TextIO, cast

from nova_gitops.api import texts


class GuardedStream:
    """A text stream that writes to ``under`` with every hidden character made visible. Not an ``io`` class
    on purpose: nothing closes the process's stream through it, and it has no ``buffer`` to write bytes."""

    def __init__(self, under: TextIO) -> None:
        self.under = under

    def write(self, text: Any) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        shown = texts.visible(text)
        try:
            self.under.write(shown)
        except UnicodeEncodeError:  # an ASCII locale: what it cannot encode is shown as escapes too
            self.under.write(shown.encode(self.encoding, "backslashreplace").decode(self.encoding))
        return len(text)

    def writelines(self, lines: Iterable[str]) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        if not getattr(self.under, "closed", False):
            self.under.flush()

    def isatty(self) -> bool:
        return self.under.isatty()

    def fileno(self) -> int:
        return self.under.fileno()

    def writable(self) -> bool:
        return True

    def readable(self) -> bool:
        return False

    @property
    def closed(self) -> bool:
        return bool(getattr(self.under, "closed", False))

    @property
    def encoding(self) -> str:
        return getattr(self.under, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str:
        return getattr(self.under, "errors", None) or "strict"

    @property
    def name(self) -> str:
        return str(getattr(self.under, "name", "<guarded>"))


def raw(stream: TextIO) -> TextIO:
    """The stream under a guard (for our own styled output, its data already made visible); any other
    stream as it is."""
    guarded: object = stream
    return guarded.under if isinstance(guarded, GuardedStream) else stream


def install() -> Callable[[], None]:
    """Guard ``sys.stdout`` and ``sys.stderr``; returns the function that puts them back. Guarding twice
    changes nothing."""
    before = sys.stdout, sys.stderr
    if raw(sys.stdout) is sys.stdout:
        sys.stdout = cast(TextIO, GuardedStream(sys.stdout))
    if raw(sys.stderr) is sys.stderr:
        sys.stderr = cast(TextIO, GuardedStream(sys.stderr))

    def restore() -> None:
        sys.stdout, sys.stderr = before

    return restore
