"""People's requests to a rollout, as changes of ``Requests`` (docs/rollouts.md, "Commands").

Each ``nova-gitops rollout`` command reads the requests, applies one of these functions and writes them
back whole. Each is declarative (applying it twice is applying it once) and tied to the target commit as
read, so a promote or an abort given for one render never acts on the next. Whether a request makes sense
now (something in progress, a wave that exists) is checked against the decision the controller's next step
would take (``refusal``): a refused request commits nothing.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime

from nova_gitops.rollouts.decisions import Decision
from nova_gitops.rollouts.records import Requests, Resume

IN_PROGRESS = ("progressing", "paused")


def paused(requests: Requests, reason: str) -> Requests:
    """Hold every gated and remedial release, across renders, until ``resumed``."""
    return replace(requests, paused=True, paused_reason=reason)


def resumed(requests: Requests, target: str, failed_wave: str | None, now: datetime) -> Requests:
    """Clear a pause by request; with ``failed_wave``, also retry that wave of ``target`` (it failed
    before ``now``)."""
    resume = Resume(target, failed_wave, now) if failed_wave else requests.resume
    return replace(requests, paused=False, paused_reason="", resume=resume)


def promoted(requests: Requests, target: str, wave: str) -> Requests:
    """Pass ``wave`` of ``target`` without its gate; promotes of older targets are dropped (they can never
    act again: a request is tied to the commit it was given for)."""
    kept = {(revision, name) for revision, name in requests.promotes if revision == target}
    return replace(requests, promotes=frozenset({*kept, (target, wave)}))


def aborted(requests: Requests, target: str) -> Requests:
    """Roll back every cluster the rollout of ``target`` released, and stop it."""
    return replace(requests, abort=target)


def failed_wave(decision: Decision) -> str | None:
    """The wave a failure paused (what ``resume`` retries), or None."""
    return next(
        (
            status.name
            for status in decision.waves
            if status.state == "paused" and decision.record.wave(status.name).failed_at is not None
        ),
        None,
    )


def refusal(command: str, decision: Decision | None, requests: Requests, wave: str | None = None) -> str:
    """Why ``command`` (``promote``, ``resume``, ``abort``) has nothing to act on now; "" when it has."""
    if command == "resume":
        if requests.paused or (decision is not None and failed_wave(decision)):
            return ""
        return "nothing to resume: the rollout is not paused by request and no wave failed"
    if decision is None or not decision.record.target:
        return (
            f"nothing to {command}: no rollout (the source has no RolloutStrategy, or nothing is published)"
        )
    target = decision.record.target[:12]
    if decision.record.outcome not in IN_PROGRESS:
        return f"nothing to {command}: the rollout of {target} is {decision.record.outcome}"
    if command == "promote" and wave is not None:
        state = next((status.state for status in decision.waves if status.name == wave), "")
        if state == "passed":
            return f"nothing to promote: wave {wave} of {target} has passed already"
    return ""
