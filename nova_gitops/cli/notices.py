"""What ``render``, ``publish``, ``diff`` and ``validate`` say on stderr about their plan, alike (issue 22).

A render that leaves objects unscheduled exits 0, and its files say why only in PLACEMENT.md; a Nova user
rendering try-nova's guestbook without ``-n guestbook`` saw ``(6 unscheduled, 0 warnings)`` and nothing else.
Each of these commands now prints its plan's ``scheduling.findings.Findings``: the source's warnings at
``file:line``, the plan's, each unscheduled object with its reason (``validate`` every one, the others the
first ``MAX_UNSCHEDULED_SHOWN`` and how many more), and a hint naming the ``-n NAMESPACE`` under which a
policy would have selected objects that name no namespace. They count warnings as ``validate`` does.

Only stderr: what ``diff`` and ``publish`` print on stdout (a diff, a PR body, JSON) is what scripts read,
and stays as it was. Every line goes through ``click.echo``, under the guard ``cli.main`` installs, so a
reason quoting data cannot act on the terminal.
"""

from __future__ import annotations

import click

from nova_gitops.scheduling.findings import Findings, NamespaceHint
from nova_gitops.scheduling.plans import Unscheduled

MAX_UNSCHEDULED_SHOWN = 20
"""``render``, ``publish`` and ``diff`` name at most this many unscheduled objects; ``validate`` names all."""


def unscheduled_line(entry: Unscheduled) -> str:
    """``warning: Deployment.apps/default/web is not scheduled: no SchedulePolicy matches``."""
    return f"warning: {entry.key} is not scheduled: {entry.reason}"


def hint_line(hint: NamespaceHint) -> str:
    """``hint: 6 unscheduled objects name no namespace; SchedulePolicy app-guestbook would select them in
    namespace guestbook: give -n guestbook (as kubectl apply -n guestbook)``."""
    count = len(hint.objects)
    objects = f"{count} unscheduled objects name" if count != 1 else "1 unscheduled object names"
    them = "them" if count != 1 else "it"
    if len(hint.namespaces) == 1:
        (namespace,) = hint.namespaces
        where = f"in namespace {namespace}: give -n {namespace} (as kubectl apply -n {namespace})"
    else:
        options = " or ".join(f"-n {namespace}" for namespace in hint.namespaces)
        where = f"in namespace {', '.join(hint.namespaces)}: give {options} (as kubectl apply -n)"
    return f"hint: {objects} no namespace; SchedulePolicy {hint.policy} would select {them} {where}"


def show(findings: Findings, *, limit: int | None = MAX_UNSCHEDULED_SHOWN) -> None:
    """Print ``findings`` on stderr: the source's warnings, the plan's, the first ``limit`` unscheduled
    objects (all when None) and how many more, then the namespace hints."""
    for problem in findings.input_warnings:
        click.echo(str(problem), err=True)
    for warning in findings.plan_warnings:
        click.echo(f"warning: {warning}", err=True)
    unscheduled = findings.unscheduled
    shown = unscheduled if limit is None else unscheduled[:limit]
    for entry in shown:
        click.echo(unscheduled_line(entry), err=True)
    if len(unscheduled) > len(shown):
        more = len(unscheduled) - len(shown)
        click.echo(
            f"… and {more} more unscheduled object{'s' if more != 1 else ''} (nova-gitops validate names "
            f"every one, with its reason)",
            err=True,
        )
    for hint in findings.namespace_hints:
        click.echo(hint_line(hint), err=True)


def counted(findings: Findings) -> str:
    """``6 unscheduled, 6 warnings``: as ``render``'s summary and ``validate``'s verdict count them."""
    return f"{len(findings.unscheduled)} unscheduled, {findings.warnings} warnings"
