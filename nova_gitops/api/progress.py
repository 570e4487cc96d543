"""The port through which long work says which phase it is in, so that a terminal can show it.

The workflows (render, publish, diff) and the agent's sync call ``progress.phase(...)`` as each phase
begins; what, if anything, is shown is the caller's business. The command line passes a rich display on a
terminal (``nova_gitops.cli.terminal``) and ``NO_PROGRESS`` everywhere else, and so does everything that is
not a command line (the controller, tests): the work and its output are the same either way. Nothing here
does I/O, so the pure core and the agent may both name the port; only the CLI layers import rich.
"""

from __future__ import annotations

from typing import Final, Protocol

LOAD: Final = "load"  # read and validate the source
PLAN: Final = "plan"  # match, group, place, spread
RENDER: Final = "render"  # turn the plan into manifests in memory
WRITE: Final = "write"  # write files, or a commit
GIT: Final = "git"  # fetch, check out, push
DIFF: Final = "diff"  # compare two renders
APPLY: Final = "apply"  # nova-agent: server-side apply what changed or drifted
PRUNE: Final = "prune"  # nova-agent: delete what git no longer has
REPORT: Final = "report"  # nova-agent: observe health and capacity, push the status report


class Progress(Protocol):
    def phase(self, name: str, detail: str = "") -> None:
        """Phase ``name`` (``LOAD``, ``PLAN``, … or an agent's ``apply``) begins, and the one before ends.
        ``detail`` says what it works on (``fetching main``); it is shown, never parsed."""
        ...


class NoProgress:
    """Shows nothing: the default wherever no one is watching."""

    def phase(self, name: str, detail: str = "") -> None:
        return None


NO_PROGRESS: Final[Progress] = NoProgress()


class Recorded:
    """Remembers the phases reported, in order (for tests, and for callers that summarise them)."""

    def __init__(self) -> None:
        self.phases: list[tuple[str, str]] = []

    def phase(self, name: str, detail: str = "") -> None:
        self.phases.append((name, detail))

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.phases]
