"""What a loss would strand, in the words PLACEMENT.md's *Failover headroom* section and ``diff --headroom``
share: "losing wlc-gpu strands gpu-training-36755b20: needs 4 nvidia.com/gpu, 0 free elsewhere".

Names are data (a source, agents' reports): Markdown puts them in code spans (``api.texts.md_code``), the
text shows their hidden characters as escapes (``api.texts.one_line``). Amounts are written as the
``headroom`` command writes them (``headroomformats.amounts``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from nova_gitops.api import texts
from nova_gitops.rendering import headroomformats
from nova_gitops.scheduling.plans import LossOutcome, StrandedGroup

Show = Callable[[str], str]


@dataclass(frozen=True, slots=True)
class Style:
    """How data is shown: a name, and prose that holds data (a resource's name)."""

    name: Show
    prose: Show


TEXT = Style(texts.one_line, texts.one_line)
MARKDOWN = Style(texts.md_code, texts.md_text)
LIST_LIMIT = 10
"""Stranded groups named in one loss's line; the rest are counted."""


def needs(item: StrandedGroup, style: Style = TEXT) -> str:
    """What a stranded group lacks, in words: "needs 4 nvidia.com/gpu, 0 nvidia.com/gpu free elsewhere"
    (each resource no cluster left has enough of, with the most any has free); a pinned group "is pinned to
    wlc-gpu"; one no cluster left may take says so."""
    if item.why == "pinned":
        pinned = ", ".join(style.name(cluster) for cluster in item.pinned_to) or "a lost cluster"
        return f"is pinned to {pinned}"
    words = f"needs {style.prose(scarce_words(item))}"
    if item.why == "no-candidate":
        words = f"no cluster left matches its policy, and it {words}"
    elif item.why == "share":
        words = f"a share no longer fits its cluster ({words})"
    return words


def scarce_words(item: StrandedGroup) -> str:
    """ "2 nvidia.com/gpu, 0 free elsewhere" for one scarce resource; "16000m cpu (10250m free elsewhere),
    2 nvidia.com/gpu (0 free elsewhere)" for more; what it requests when nothing is scarce (it fits no
    node, or no cluster may take it)."""
    if not item.scarce:
        return headroomformats.amounts(item.requests)
    parts = [
        (
            f"{headroomformats.amount(name, item.requests.get(name, 0))} {name}",
            headroomformats.amount(name, free),
        )
        for name, free in ((name, item.scarce[name]) for name in headroomformats.resource_order(item.scarce))
    ]
    if len(parts) == 1:
        return f"{parts[0][0]}, {parts[0][1]} free elsewhere"
    return ", ".join(f"{wanted} ({free} free elsewhere)" for wanted, free in parts)


def stranded_words(item: StrandedGroup, style: Style = TEXT) -> str:
    """``gpu-training-36755b20: needs 4 nvidia.com/gpu, 0 free elsewhere``."""
    return f"{style.name(item.group)}: {needs(item, style)}"


def strands(outcome: LossOutcome, style: Style = TEXT, limit: int = LIST_LIMIT) -> str:
    """What the loss strands: "nothing", "gpu-training-36755b20: needs …", or "2 groups: a: …; b: …"
    (at most ``limit`` named, the rest counted)."""
    stranded = outcome.stranded
    if not stranded:
        return "nothing"
    named = "; ".join(stranded_words(item, style) for item in stranded[:limit])
    if len(stranded) > limit:
        named += f"; and {len(stranded) - limit} more"
    return named if len(stranded) == 1 else f"{len(stranded)} groups: {named}"


def placement_section(found: Sequence[LossOutcome], domain: str | None = None) -> list[str]:
    """PLACEMENT.md's *Failover headroom* section: one line per loss, worst first; with ``domain``, a loss
    is every cluster with one value of that label."""
    each = "each cluster" if domain is None else f"every cluster with each value of {MARKDOWN.name(domain)}"
    lines = [
        "## Failover headroom",
        "",
        f"What losing {each} would strand (planned as `nova-gitops headroom` does; worst first).",
        "",
    ]
    if not found:
        return [*lines, "No cluster to lose."]
    for outcome in found:
        moved = (
            f" and moves {outcome.moved} group{'' if outcome.moved == 1 else 's'}" if outcome.moved else ""
        )
        lines.append(f"- losing {MARKDOWN.name(outcome.lost)} strands {strands(outcome, MARKDOWN)}{moved}")
    return lines
