"""What a change does to failover headroom, for ``diff --headroom``: the losses whose outcome differs
between the base and the head, and one line for the rest.

A reviewer approving a change wants to know whether it leaves the fleet less able to lose a cluster: "after
this change, losing wlc-gpu strands gpu-training-36755b20: needs 4 nvidia.com/gpu, 0 free elsewhere", and
"… no longer strands …" for a change that helps. Each side is ``failover.outcomes`` of that side's
``headroom`` (each loss planned against that side's own plan); a loss is compared by name, a group by
name, and what a group needs is compared too (a group still stranded that now needs more is a change).
A loss that exists on one side only (a cluster the change adds or removes) is compared with nothing.

Pure: outcomes in, a ``HeadroomDiff`` out; ``text_lines``, ``markdown`` and ``json_data`` are the three
forms ``diffformats`` places after the rollout plan. Names are data: the text shows their hidden characters
as escapes, the Markdown puts them in code spans (``failovers``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from nova_gitops.rendering import failovers, headroomformats
from nova_gitops.rendering.failovers import Style
from nova_gitops.scheduling.plans import LossOutcome, StrandedGroup

Side = Literal["both", "base", "head"]
MARKDOWN_LIMIT: Final = 30
"""Losses that changed listed in a comment; the rest are counted (a 500-cluster fleet's comment stays
within GitHub's size limit)."""
MARKDOWN_GROUPS: Final = 5
"""Groups named per loss in a comment; the rest are counted."""
DOWN: Final = "unschedulable with this change"
"""Said of a group no loss strands on the head because the head places it nowhere."""
MARKDOWN_BUDGET: Final = 12_000
"""Characters of the section in a comment at most, beside the diff's own 50,000 of manifests."""


@dataclass(frozen=True, slots=True)
class LossChange:
    """One loss whose outcome the change alters: the groups it now strands (or strands with other
    needs), those it no longer strands, those it no longer strands because the head places them nowhere
    (``down``: no rescue), and ``side``: "head" for a loss the change adds (a new cluster), "base" for one
    it removes."""

    lost: str
    strands: tuple[StrandedGroup, ...] = ()
    freed: tuple[StrandedGroup, ...] = ()
    side: Side = "both"
    down: tuple[StrandedGroup, ...] = ()

    @property
    def worse(self) -> bool:
        return bool(self.strands or self.down)


@dataclass(frozen=True, slots=True)
class HeadroomDiff:
    """Every loss whose outcome changed (worse first, then by name), and the count of the others with how
    many of them strand something on both sides (the same groups, with the same needs)."""

    changes: tuple[LossChange, ...] = ()
    unchanged: int = 0
    unchanged_stranding: tuple[str, ...] = ()

    @property
    def worse(self) -> bool:
        return any(change.worse for change in self.changes)


def compare(
    base: Sequence[LossOutcome], head: Sequence[LossOutcome], *, down: Collection[str] = ()
) -> HeadroomDiff:
    """The losses whose outcome differs between ``base`` and ``head`` (see the module docstring).
    ``down``: the groups the head places nowhere (unschedulable in its plan) — a loss no longer strands
    them, but not because the change rescued them."""
    before = {outcome.lost: outcome for outcome in base}
    after = {outcome.lost: outcome for outcome in head}
    changes: list[LossChange] = []
    unchanged: list[LossOutcome] = []
    for lost in sorted(before.keys() | after.keys()):
        was, now = before.get(lost), after.get(lost)
        old = {item.group: item for item in was.stranded} if was else {}
        new = {item.group: item for item in now.stranded} if now else {}
        strands = tuple(item for name, item in sorted(new.items()) if not same(old.get(name), item))
        gone = [item for name, item in sorted(old.items()) if name not in new]
        freed = tuple(item for item in gone if item.group not in down)
        lost_groups = tuple(item for item in gone if item.group in down)
        side: Side = "both" if was and now else ("head" if now else "base")
        if strands or gone or (side != "both" and (old or new)):
            changes.append(LossChange(lost, strands, freed, side, lost_groups))
        elif now is not None:
            unchanged.append(now)
    changes.sort(key=lambda change: (not change.worse, change.lost))
    stranding = tuple(outcome.lost for outcome in unchanged if outcome.stranded)
    return HeadroomDiff(tuple(changes), len(unchanged), stranding)


def same(was: StrandedGroup | None, now: StrandedGroup) -> bool:
    """A group stranded on both sides for the same reason with the same request: not a change (how much
    room is free elsewhere moves with every workload, and would make every such group a change)."""
    return was is not None and (was.why, was.requests, was.pinned_to) == (
        now.why,
        now.requests,
        now.pinned_to,
    )


def change_lines(change: LossChange, style: Style = failovers.TEXT, limit: int | None = None) -> list[str]:
    """The sentences of one changed loss: one per group it now strands (at most ``limit``, the rest
    counted), one for those it no longer does."""
    lost = style.name(change.lost)
    if change.side == "base":
        was = [named(change.freed, style, limit)] if change.freed else []
        was += [f"{named(change.down, style, limit)}, {DOWN}"] if change.down else []
        return [f"{lost} is gone with this change: losing it stranded {'; '.join(was)}"]
    start = f"after this change, losing {lost}" + (_new(change.lost, style) if change.side == "head" else "")
    shown = change.strands if limit is None else change.strands[:limit]
    lines = [f"{start} strands {failovers.stranded_words(item, style)}" for item in shown]
    if len(change.strands) > len(shown):
        lines.append(f"{start} strands {len(change.strands) - len(shown)} more groups")
    if change.freed:
        lines.append(f"{start} no longer strands {named(change.freed, style, limit)}")
    if change.down:
        lines.append(f"{start} no longer strands {named(change.down, style, limit)}: {DOWN}")
    return lines


def _new(lost: str, style: Style) -> str:
    """What a loss only the head has is: a new cluster, or with a domain (``LABEL=VALUE``: no cluster's
    name has ``=``) a new value of the label."""
    label, sign, _ = lost.partition("=")
    return f" (a new value of {style.name(label)})" if sign else " (a new cluster)"


def named(items: Sequence[StrandedGroup], style: Style, limit: int | None) -> str:
    """The groups' names, at most ``limit`` of them and the rest counted."""
    shown = items if limit is None else items[:limit]
    words = ", ".join(style.name(item.group) for item in shown)
    return words + (f" and {len(items) - len(shown)} more" if len(items) > len(shown) else "")


def unchanged_line(diff: HeadroomDiff, style: Style = failovers.TEXT) -> str:
    """``4 other losses unchanged (1 still strands the same groups: wlc-aws-east-1)``."""
    if not diff.unchanged:
        return ""
    noun = "loss" if diff.unchanged == 1 else "losses"
    words = f"{diff.unchanged} {'other ' if diff.changes else ''}{noun} unchanged"
    if diff.unchanged_stranding:
        named = ", ".join(style.name(name) for name in diff.unchanged_stranding[:MARKDOWN_LIMIT])
        more = len(diff.unchanged_stranding) - MARKDOWN_LIMIT
        named += f" and {more} more" if more > 0 else ""
        verb = "strands" if len(diff.unchanged_stranding) == 1 else "strand"
        words += f" ({len(diff.unchanged_stranding)} still {verb} the same groups: {named})"
    return words


def text_lines(diff: HeadroomDiff) -> list[str]:
    """The section's lines for a terminal (without the heading)."""
    lines = [line for change in diff.changes for line in change_lines(change)]
    tail = unchanged_line(diff)
    return [*lines, tail] if tail else lines or ["no cluster to lose"]


def markdown(diff: HeadroomDiff) -> str:
    """The section for a pull-request comment: at most ``MARKDOWN_LIMIT`` losses, ``MARKDOWN_GROUPS``
    groups each, and ``MARKDOWN_BUDGET`` characters (a comment holds 65,536, the manifest diff included)."""
    lines: list[str] = []
    used = 0
    for told, change in enumerate(diff.changes[:MARKDOWN_LIMIT]):
        mark = ":x:" if change.worse else ":white_check_mark:"
        more = [f"- {mark} {line}" for line in change_lines(change, failovers.MARKDOWN, MARKDOWN_GROUPS)]
        if used + sum(len(line) + 1 for line in more) > MARKDOWN_BUDGET:
            lines.append(
                f"- … and {len(diff.changes) - told} more losses changed: run `nova-gitops diff --headroom`"
            )
            break
        lines += more
        used += sum(len(line) + 1 for line in more)
    else:
        if len(diff.changes) > MARKDOWN_LIMIT:
            lines.append(f"- … and {len(diff.changes) - MARKDOWN_LIMIT} more losses changed")
    tail = unchanged_line(diff, failovers.MARKDOWN)
    if tail:
        lines.append(f"- {tail}")
    body = "\n".join(lines) or "No cluster to lose."
    return f"#### Failover headroom\n\n{body}\n\n"


def json_data(diff: HeadroomDiff) -> dict[str, Any]:
    """The section for tools: each changed loss with its groups, and the unchanged count."""
    return {
        "worse": diff.worse,
        "changes": [
            {
                "lost": change.lost,
                "side": change.side,
                "strands": [group_data(item) for item in change.strands],
                "noLongerStrands": [item.group for item in change.freed],
                "unschedulableNow": [item.group for item in change.down],
            }
            for change in diff.changes
        ],
        "unchanged": diff.unchanged,
        "unchangedStranding": list(diff.unchanged_stranding),
    }


def group_data(item: StrandedGroup) -> dict[str, Any]:
    return {
        "group": item.group,
        "why": item.why,
        "requests": headroomformats.quantities_data(item.requests),
        "freeElsewhere": headroomformats.quantities_data(item.scarce),
        "words": failovers.needs(item),
    }
