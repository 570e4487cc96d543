"""People's requests to a rollout, as changes of ``Requests`` (docs/rollouts.md, "Commands").

Each ``nova-gitops rollout`` command reads the requests, applies one of these functions and writes them
back whole. Each is declarative (applying it twice is applying it once) and tied to the target commit as
read, so a promote or an abort given for one render never acts on the next. Whether a request makes sense
now (something in progress, a wave that exists) is checked against the decision the controller's next step
would take (``refusal``): a refused request commits nothing. ``promote_effect`` says what a promote does at
that step (a wave that passed and is ``held`` is promoted too: the rollout goes on without it).
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
        if state == "passed":  # not one that passed and holds the rollout (``held``): that one is promoted
            return f"nothing to promote: wave {wave} of {target} has passed already"
    return ""


def promote_effect(decision: Decision, wave: str) -> str:
    """What the controller's next step does with a promote of ``wave`` (``nova-gitops rollout promote``
    says it): pass it without its gate and release the next wave; for a wave that passed and is not healthy
    now, stop holding the rollout on it; past such earlier waves, go on; behind an earlier wave that has not
    passed, nothing yet — a promote passes the wave it names, not the gates before it."""
    names = [status.name for status in decision.waves]
    if wave not in names:
        return f"wave {wave} is not a wave of this rollout"
    states = {status.name: status.state for status in decision.waves}
    index = names.index(wave)
    following = f" and releases wave {names[index + 1]}" if index + 1 < len(names) else ""

    def holds(name: str) -> bool:  # passed, and not healthy now (held, or failed for it)
        return states[name] == "held" or (
            states[name] == "paused" and decision.record.wave(name).passed_at is not None
        )

    held = [name for name in names[:index] if holds(name)]
    blocking = next((name for name in names[:index] if states[name] != "passed" and not holds(name)), None)
    if blocking is not None:
        return (
            f"wave {wave} passes without its gate once wave {blocking} before it has passed (a promote "
            "does not pass an earlier wave's gate)"
        )
    if holds(wave):
        return (
            f"at its next step the controller stops holding the rollout on wave {wave}, which passed but is "
            f"not healthy now, and no longer re-checks it{following}"
        )
    past = f" goes on past wave {', '.join(held)} (passed, not healthy now) and" if held else ""
    return f"at its next step the controller{past} passes wave {wave} without its gate{following}"
