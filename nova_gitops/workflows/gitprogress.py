"""git's own progress (a fetch or a push advancing) shown through the progress port's ``git`` phase."""

from __future__ import annotations

from nova_gitops.api import progress as phases
from nova_gitops.clients import gitrunning


def git_progress(progress: phases.Progress, doing: str) -> gitrunning.ProgressHook | None:
    """A fetch's or push's progress (GitPython's, as git prints it) shown as the detail of the ``git``
    phase — ``fetching main: receiving 40/100 1.2 MiB`` — or None when no one is watching (git then runs
    without ``--progress``)."""
    if progress is phases.NO_PROGRESS:
        return None

    def report(step: gitrunning.Progress) -> None:
        counted = f"{step.done}/{step.total}" if step.total else str(step.done)
        progress.phase(phases.GIT, " ".join(filter(None, (f"{doing}: {step.stage}", counted, step.message))))

    return report
