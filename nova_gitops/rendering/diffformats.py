"""A ``RenderDiff`` as text for a terminal, Markdown for a pull-request comment, or JSON for tools.

Every format puts placement first (groups that moved, replicas per cluster, objects that became
unscheduled, new warnings) because that is what a reviewer must decide on; the manifest diff follows. The
Markdown is sized for a GitHub comment (65,536 characters at most): the full diff is folded in
``<details>`` and cut at ``MARKDOWN_DIFF_BUDGET`` with a pointer to the local command.

Every name, reason and manifest line here is data (a rendered repository, an agent's report): the text
forms show its hidden characters as escapes (``api.texts.one_line`` for a field inside our line,
``visible`` for a manifest diff), before any colour is added; the Markdown puts names in code spans
and escapes reasons (``api.texts.md_code``, ``md_text``), so a comment pings no one, shows no image and
links nothing the data chose; the JSON writes them as JSON escapes and reads back the same.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from nova_gitops.api import texts
from nova_gitops.rendering import headroomdiffs, waveplans
from nova_gitops.rendering.diffs import GroupChange, ObjectChange, RecordChange, RenderDiff, ReplicaChange

MARKDOWN_DIFF_BUDGET = 50_000
MARKDOWN_LIST_LIMIT = 30
BACKTICKS = re.compile(r"`+")
RESET, BOLD, RED, GREEN, CYAN, YELLOW = "\x1b[0m", "\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[36m", "\x1b[33m"


def headline(diff: RenderDiff) -> str:
    """``+A ~C -D objects, N groups moved`` — the commit subject's counts."""
    return f"+{diff.added} ~{diff.changed} -{diff.deleted} objects, {len(diff.moved)} groups moved"


def clusters_text(clusters: tuple[str, ...] | None) -> str:
    return ", ".join(texts.one_line(cluster) for cluster in clusters) if clusters else "(none)"


def group_line(group: GroupChange) -> str:
    name = texts.one_line(group.name)
    if group.before is None:
        return f"group {name} placed on {clusters_text(group.after)} (new)"
    if group.after is None:
        return f"group {name} removed (was on {clusters_text(group.before)})"
    return f"group {name} moved {clusters_text(group.before)} → {clusters_text(group.after)}"


def count_text(value: int | None) -> str:
    return "–" if value is None else str(value)


def replica_line(change: ReplicaChange) -> str:
    counts = f"{count_text(change.before)} → {count_text(change.after)}"
    return f"replicas {texts.one_line(change.title)} on {texts.one_line(change.cluster)}: {counts}"


def placement_lines(diff: RenderDiff) -> list[str]:
    """The placement section, one plain line per decision that changed."""
    lines = [group_line(group) for group in diff.groups]
    lines += [replica_line(change) for change in diff.replicas]
    lines += [f"newly unscheduled: {texts.one_line(item)}" for item in diff.newly_unscheduled]
    lines += [f"now scheduled: {texts.one_line(item)}" for item in diff.newly_scheduled]
    lines += [f"warning: {texts.one_line(warning)}" for warning in diff.new_warnings]
    lines += [f"warning cleared: {texts.one_line(warning)}" for warning in diff.cleared_warnings]
    lines += [record_line(record) for record in diff.records_changed]
    return lines


def record_line(record: RecordChange) -> str:
    """A group that stays where it was whose recorded decision changed otherwise (its reason, requests)."""
    return (
        f"group {texts.one_line(record.name)} decided anew, same clusters: {', '.join(record.fields)} changed"
    )


def hidden_note(change: ObjectChange) -> str:
    return f"(hidden: {change.hidden_keys} keys changed)"


def colour_patch(patch: str) -> str:
    """A unified diff in colour; its text already ``visible`` (only newlines cut lines)."""
    coloured: list[str] = []
    for line in patch.split("\n"):
        if not line:
            continue
        line += "\n"
        if line.startswith(("+++", "---")):
            coloured.append(f"{BOLD}{line.rstrip(chr(10))}{RESET}\n")
        elif line.startswith("+"):
            coloured.append(f"{GREEN}{line.rstrip(chr(10))}{RESET}\n")
        elif line.startswith("-"):
            coloured.append(f"{RED}{line.rstrip(chr(10))}{RESET}\n")
        elif line.startswith("@@"):
            coloured.append(f"{CYAN}{line.rstrip(chr(10))}{RESET}\n")
        else:
            coloured.append(line)
    return "".join(coloured)


def to_text(diff: RenderDiff, *, colour: bool = False) -> str:
    heading = (lambda text: f"{BOLD}{text}{RESET}") if colour else (lambda text: text)
    if diff.is_empty:  # a capacity change alone renders nothing new, and may still change headroom
        return "No changes.\n" + "".join(headroom_text(diff, heading) if headroom_changed(diff) else [])
    out = [heading("Placement changes:") + "\n"]
    out += [f"  {line}\n" for line in placement_lines(diff)] or ["  (none)\n"]
    out.append(heading(f"Objects: {headline(diff)}") + "\n")
    out += [f"  {texts.one_line(c.cluster)}: +{c.added} ~{c.changed} -{c.deleted}\n" for c in diff.clusters]
    out += [f"  {texts.one_line(change.path)}: {change.change}\n" for change in diff.other_files]
    if diff.rollout is not None:
        out.append(heading("Rollout:") + "\n")
        out += [f"  {line}\n" for line in waveplans.text_lines(diff.rollout)]
    out += headroom_text(diff, heading)
    if diff.objects:
        out.append("\n")
    for change in diff.objects:
        if change.hidden_keys:
            note = f"# {texts.one_line(change.path)}: Secret {hidden_note(change)}\n"
            out.append(f"{YELLOW}{note}{RESET}" if colour else note)
        patch = texts.visible(change.patch)
        out.append(colour_patch(patch) if colour else patch)
    return "".join(out)


def headroom_changed(diff: RenderDiff) -> bool:
    return diff.headroom is not None and bool(diff.headroom.changes)


def headroom_text(diff: RenderDiff, heading: Callable[[str], str]) -> list[str]:
    """``diff --headroom``'s section for a terminal (none without the flag)."""
    if diff.headroom is None:
        return []
    return [
        heading("Failover headroom:") + "\n",
        *(f"  {line}\n" for line in headroomdiffs.text_lines(diff.headroom)),
    ]


def md_escape(text: str) -> str:
    """Data as Markdown prose (``api.texts.md_text``)."""
    return texts.md_text(text)


def limited(lines: list[str], limit: int = MARKDOWN_LIST_LIMIT) -> list[str]:
    if len(lines) <= limit:
        return lines
    return [*lines[:limit], f"- … and {len(lines) - limit} more"]


def to_markdown(diff: RenderDiff, *, title: str = "nova-gitops placement diff") -> str:
    if diff.is_empty:
        told = f"### {title}\n\nNo changes to placement or rendered manifests.\n"
        return told + (
            "\n" + headroomdiffs.markdown(diff.headroom) if diff.headroom and headroom_changed(diff) else ""
        )
    out = [f"### {title}\n\n**{headline(diff)}**\n\n"]
    if diff.clusters:
        out.append("| cluster | added | changed | deleted |\n|---|---:|---:|---:|\n")
        out += [
            f"| {texts.md_code(c.cluster, table=True)} | {c.added} | {c.changed} | {c.deleted} |\n"
            for c in diff.clusters
        ]
        out.append("\n")
    sections: list[tuple[str, list[str]]] = [
        (
            "Groups moved",
            [
                f"- {texts.md_code(g.name)}: **{md_escape(clusters_text(g.before))} → "
                f"{md_escape(clusters_text(g.after))}**"
                for g in diff.moved
            ],
        ),
        ("Groups placed or removed", [f"- {md_escape(group_line(g))}" for g in diff.groups if not g.moved]),
        (
            "Deletions",
            [
                f"- :warning: {texts.md_code(c.cluster)}: {md_escape(c.title)}"
                for c in diff.objects
                if c.change == "deleted"
            ],
        ),
        ("Replica changes", [f"- {md_escape(replica_line(change))}" for change in diff.replicas]),
        ("Newly unscheduled", [f"- :x: {md_escape(item)}" for item in diff.newly_unscheduled]),
        ("Now scheduled", [f"- {md_escape(item)}" for item in diff.newly_scheduled]),
        ("Warnings", [f"- :warning: {md_escape(item)}" for item in diff.new_warnings]),
        ("Warnings cleared", [f"- {md_escape(item)}" for item in diff.cleared_warnings]),
        (
            "Decisions recorded anew",
            [f"- {md_escape(record_line(record))}" for record in diff.records_changed],
        ),
        ("Secrets", [f"- {texts.md_code(c.path)}: {hidden_note(c)}" for c in diff.objects if c.hidden_keys]),
    ]
    for name, lines in sections:
        if lines:
            out.append(f"#### {name}\n\n" + "\n".join(limited(lines)) + "\n\n")
    if diff.rollout is not None:
        out.append(waveplans.markdown(diff.rollout))
    if diff.headroom is not None:
        out.append(headroomdiffs.markdown(diff.headroom))
    out.append(details(diff))
    return "".join(out)


def details(diff: RenderDiff) -> str:
    """The manifest diff in a fenced block (fenced with more backticks than any line holds, so no line
    of the data ends it), folded in ``<details>``."""
    patches = [texts.visible(change.patch) for change in diff.objects if change.patch]
    if not patches:
        return ""
    body: list[str] = []
    used = 0
    for patch in patches:
        if used + len(patch) > MARKDOWN_DIFF_BUDGET:
            body.append(
                f"# … diff cut here ({len(patches) - len(body)} more files): run `nova-gitops diff` locally\n"
            )
            break
        body.append(patch)
        used += len(patch)
    longest = max((len(run) for patch in body for run in BACKTICKS.findall(patch)), default=0)
    fence = "`" * max(3, longest + 1)
    return (
        f"<details><summary>Full manifest diff ({len(patches)} files)</summary>\n\n"
        f"{fence}diff\n{''.join(body)}{fence}\n\n</details>\n"
    )


def to_json(diff: RenderDiff) -> str:
    document: dict[str, Any] = {
        "summary": {
            "added": diff.added,
            "changed": diff.changed,
            "deleted": diff.deleted,
            "groupsMoved": len(diff.moved),
            "changes": not diff.is_empty,
        },
        "clusters": [
            {"cluster": c.cluster, "added": c.added, "changed": c.changed, "deleted": c.deleted}
            for c in diff.clusters
        ],
        "groups": [
            {"name": g.name, "before": g.before, "after": g.after, "moved": g.moved} for g in diff.groups
        ],
        "replicas": [
            {"group": r.group, "object": r.title, "cluster": r.cluster, "before": r.before, "after": r.after}
            for r in diff.replicas
        ],
        "newlyUnscheduled": list(diff.newly_unscheduled),
        "newlyScheduled": list(diff.newly_scheduled),
        "newWarnings": list(diff.new_warnings),
        "clearedWarnings": list(diff.cleared_warnings),
        "groupsRecordedAnew": [{"name": r.name, "fields": list(r.fields)} for r in diff.records_changed],
        "files": [
            {
                "path": c.path,
                "cluster": c.cluster,
                "change": c.change,
                "object": c.title,
                "hiddenKeys": c.hidden_keys,
                "patch": c.patch,
            }
            for c in diff.objects
        ]
        + [{"path": f.path, "cluster": None, "change": f.change} for f in diff.other_files],
    }
    if diff.rollout is not None:
        document["rollout"] = waveplans.json_data(diff.rollout)
    if diff.headroom is not None:
        document["headroom"] = headroomdiffs.json_data(diff.headroom)
    return texts.visible(json.dumps(document, indent=2, ensure_ascii=False), keep="\n") + "\n"


FORMATTERS = {"text": to_text, "markdown": to_markdown, "json": to_json}
