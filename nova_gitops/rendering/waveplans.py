"""The wave plan of a change (``rollouts.plans.ChangePlan``) as ``diff`` shows it: text, Markdown, JSON.

A reviewer approving a change under a RolloutStrategy approves its pace as much as its content: which
clusters go first, which wait for a bake, and how long the whole takes. So each format says, per wave in
order, the clusters the change will release there (in batches when ``maxParallel`` splits them) and the
bake it waits; then the clusters the change does not touch, which advance at once; then the earliest time
to complete, which assumes every cluster is healthy the moment it is released (docs/rollouts.md): health
adds to it, up to ``healthTimeout`` a batch.

The JSON keys are a contract for tools (docs/rollouts.md lists them): durations both as Go durations
(``30m``, as a RolloutStrategy writes them) and as whole seconds.

Wave and cluster names are data: the text shows their hidden characters as escapes (``api.texts.one_line``),
the Markdown puts them in code spans (``api.texts.md_code``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta
from typing import Any, Final

from nova_gitops.api import texts
from nova_gitops.api.rollouts import format_duration
from nova_gitops.rollouts.plans import ChangePlan, WavePlan

MARKDOWN_NAME_LIMIT: Final = 30
"""In Markdown, a cell or line names at most this many clusters, then says how many more (a PR comment
of a 500-cluster fleet stays readable and within GitHub's size limit)."""


HEALTHY_AT_ONCE: Final = "if every cluster is healthy as soon as it is released"
"""What *earliest* assumes (docs/rollouts.md): health adds to it, up to ``healthTimeout`` a batch."""


def earliest_parts(plan: ChangePlan) -> tuple[str, str]:
    """(``35m``, ``last release after 30m, if every cluster is healthy as soon as it is released``): the
    wording of docs/rollouts.md, split so that Markdown can make the time bold."""
    if not plan.changing_waves:
        return "0s", "the change releases nothing through a gate"
    last = format_duration(plan.earliest_last_release)
    return format_duration(plan.earliest), f"last release after {last}, {HEALTHY_AT_ONCE}"


def batches_text(wave: WavePlan) -> str:
    """`` in 2 batches of 2 (wlc-2, wlc-3 | wlc-4)``; empty when one release holds every changed cluster."""
    if wave.batches < 2:
        return ""
    shown = " | ".join(_names(batch) for batch in wave.batched)
    return f" in {wave.batches} batches of {wave.max_parallel} ({shown})"


def _names(names: Sequence[str]) -> str:
    return ", ".join(texts.one_line(name) for name in names)


def wave_line(wave: WavePlan) -> str:
    name = texts.one_line(wave.name)
    if not wave.changed:
        where = "no clusters" if not wave.unchanged else "changes none of its clusters"
        return f"wave {name}: {where} (passes at once)"
    changes = f"changes {_names(wave.changed)}{batches_text(wave)}"
    return f"wave {name}: {changes}; bake {format_duration(wave.bake_time)}"


def text_lines(plan: ChangePlan) -> list[str]:
    """The plan as plain lines, in wave order."""
    lines = [wave_line(wave) for wave in plan.waves]
    lines.append(f"not touched (advanced at once): {_names(plan.untouched) or '(none)'}")
    complete, why = earliest_parts(plan)
    lines.append(f"earliest complete: {complete} ({why})")
    return lines


def md_names(names: Sequence[str], limit: int = MARKDOWN_NAME_LIMIT, *, table: bool = True) -> str:
    shown = ", ".join(texts.md_code(name, table=table) for name in names[:limit])
    return shown + (f", … and {len(names) - limit} more" if len(names) > limit else "")


def markdown(plan: ChangePlan) -> str:
    """A ``#### Rollout`` section: a table of the waves, the untouched clusters, the earliest time."""
    rows = ["| wave | changes | batches | bake |", "|---|---|---|---|"]
    for wave in plan.waves:
        if not wave.changed:
            what = "— (no clusters)" if not wave.unchanged else "—"
            rows.append(f"| {texts.md_code(wave.name, table=True)} | {what} | — | passes at once |")
            continue
        batches = str(wave.batches)
        if wave.batches > 1:
            batches += f" of {wave.max_parallel}: " + " · ".join(md_names(batch) for batch in wave.batched)
        rows.append(
            f"| {texts.md_code(wave.name, table=True)} | {md_names(wave.changed)} | {batches} | "
            f"{format_duration(wave.bake_time)} |"
        )
    untouched = md_names(plan.untouched, table=False) or "(none)"
    complete, why = earliest_parts(plan)
    return (
        "#### Rollout\n\n"
        + "\n".join(rows)
        + f"\n\nNot touched (advanced at once): {untouched}\n\n**Earliest complete: {complete}** ({why})\n\n"
    )


def duration_data(duration: timedelta) -> dict[str, Any]:
    return {"duration": format_duration(duration), "seconds": int(duration.total_seconds())}


def json_data(plan: ChangePlan) -> dict[str, Any]:
    """The ``rollout`` object of ``diff --format json``."""
    return {
        "waves": [
            {
                "name": wave.name,
                "changed": list(wave.changed),
                "unchanged": list(wave.unchanged),
                "maxParallel": wave.max_parallel,
                "batches": [list(batch) for batch in wave.batched],
                "bakeTime": duration_data(wave.bake_time),
            }
            for wave in plan.waves
        ],
        "untouched": list(plan.untouched),
        "earliestComplete": duration_data(plan.earliest),
        "earliestLastRelease": duration_data(plan.earliest_last_release),
    }
