"""Commit messages, pull-request bodies and the rendered repository's README, from templates.

Text that comes from data (group names, reasons an agent reported, the controller's notes quoting them) is
written with ``api.texts.one_line``: a control, bidi or invisible character, or a newline, is shown as its
``\\uXXXX`` escape, so ``git log`` without a pager is not driven by it and no line or trailer is forged.

The wording lives in ``publishing/templates/*.tmpl`` (``string.Template``: ``${name}``) so that a team can
read and review it like any other text. The subject line is a contract (docs/design.md §5): tools grep for
``render <sha7>: +A ~C -D objects, N groups moved``, and agents read the trailers ``Nova-Source-Repo:``,
``Nova-Source-Revision:`` and, when a mass deletion was allowed, ``Nova-Allow-Mass-Prune: true``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from importlib import resources

from nova_gitops.api import texts
from nova_gitops.rendering import diffformats
from nova_gitops.rendering.diffs import RenderDiff

BODY_LINE_LIMIT = 100
ALLOW_MASS_PRUNE_TRAILER = "Nova-Allow-Mass-Prune"
REMEDIAL_TRAILER = "Nova-Remedial"
"""A commit whose every move was made by rescheduling (docs/rollouts.md): released at once, not gated."""
SOURCE_REVISION_TRAILER = "Nova-Source-Revision"
TRAILER = re.compile(r"^([A-Za-z0-9-]+): (.*)$")
LAYOUT_NOTE = (
    "converts the rendered repository to one file per ScheduleGroup (placement/<policy>/<group>.yaml) and a "
    "small placement.yaml index, from one placement.yaml for the whole fleet (docs/publishing.md)"
)
"""The note of the commit that converts a repository to the per-group layout (docs/design.md §4)."""


def template(name: str) -> string.Template:
    text = resources.files("nova_gitops.publishing").joinpath("templates", name).read_text(encoding="utf-8")
    return string.Template(text)


def short_revision(revision: str | None) -> str:
    """The ``<source-sha7>`` of subjects and branch names; ``local`` for a directory without a revision."""
    return revision[:7] if revision else "local"


def body_lines(diff: RenderDiff) -> list[str]:
    """One line per decision that changed: each group moved, placed anew or removed (what a reviewer of
    the rendered repository's log asks first), each replica count, each object newly unscheduled, each
    warning cleared, each group decided anew; the subject counts only the moves (``headline``)."""
    lines = [f"- {diffformats.group_line(group)}" for group in diff.groups]
    lines += [f"- {diffformats.replica_line(change)}" for change in diff.replicas]
    lines += [f"- newly unscheduled: {texts.one_line(item)}" for item in diff.newly_unscheduled]
    lines += [f"- warning cleared: {texts.one_line(item)}" for item in diff.cleared_warnings]
    lines += [f"- {diffformats.record_line(record)}" for record in diff.records_changed]
    if len(lines) > BODY_LINE_LIMIT:
        lines = [*lines[:BODY_LINE_LIMIT], f"- … and {len(lines) - BODY_LINE_LIMIT} more (see PLACEMENT.md)"]
    return lines or ["No group moved and no replica count changed."]


def commit_message(
    diff: RenderDiff,
    *,
    source_repo: str,
    source_revision: str | None,
    allow_mass_prune: bool = False,
    notes: Sequence[str] = (),
    remedial: bool = False,
) -> str:
    """The commit message; ``notes`` are extra body lines saying why (the controller's reschedules, with
    the agent's reason quoted, and failbacks). ``remedial``: every move was a reschedule and the source did
    not change, so a rollout releases it at once (the ``Nova-Remedial: true`` trailer)."""
    extra = "\n".join(
        line
        for line, wanted in (
            (f"{ALLOW_MASS_PRUNE_TRAILER}: true", allow_mass_prune),
            (f"{REMEDIAL_TRAILER}: true", remedial),
        )
        if wanted
    )
    lines = body_lines(diff) + [f"- {one_line(note)}" for note in notes]
    text = template("commit-message.txt.tmpl").substitute(
        source_sha7=short_revision(source_revision),
        headline=diffformats.headline(diff),
        body="\n".join(lines),
        source_repo=one_line(source_repo),
        source_revision=source_revision or "none",
        extra_trailers=extra,
    )
    return text.rstrip("\n") + "\n"


def pull_request_body(diff: RenderDiff, *, source_repo: str, source_revision: str | None, branch: str) -> str:
    return template("pull-request.md.tmpl").substitute(
        source_repo=source_repo,
        source_sha7=short_revision(source_revision),
        source_revision=source_revision or "none (a local directory)",
        branch=branch,
        diff=diffformats.to_markdown(diff, title="Placement changes").rstrip("\n"),
    )


def unchanged_pull_request_body(*, source_repo: str, source_revision: str | None, branch: str) -> str:
    """The body when the render changes nothing: written all the same, so that a CI step reading it works."""
    return template("pull-request-unchanged.md.tmpl").substitute(
        source_repo=source_repo,
        source_sha7=short_revision(source_revision),
        source_revision=source_revision or "none (a local directory)",
        branch=branch,
    )


def readme(source_repo: str) -> bytes:
    return template("readme.md.tmpl").substitute(source_repo=source_repo).encode()


def pull_request_branch(source_revision: str | None) -> str:
    return f"nova/render-{short_revision(source_revision)}"


def trailers(message: str) -> dict[str, str]:
    """The trailers of a commit message (its last paragraph of ``Key: value`` lines)."""
    paragraphs = [part for part in message.strip().split("\n\n") if part.strip()]
    if not paragraphs:
        return {}
    found: dict[str, str] = {}
    for line in paragraphs[-1].splitlines():
        match = TRAILER.match(line.strip())
        if match is None:
            return {}
        found[match.group(1)] = match.group(2)
    return found


def one_line(text: str) -> str:
    """``text`` on one line as data is shown (``texts.one_line``): a line break, tab, control, bidi or
    invisible character is its ``\\uXXXX`` escape. (It used to fold whitespace and leave the rest raw.)"""
    return texts.one_line(text)
