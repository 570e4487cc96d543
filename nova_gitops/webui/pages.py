"""The fleet's pages as HTML (issue 27): the controller's read-only web view and ``nova-gitops report``'s one
self-contained file, from the same templates and the same view model (``rendering.fleetmodel``).

Built from well-kept parts: Jinja2 templates with autoescaping on for every template (``autoescape=True``:
every value is escaped for HTML text and attribute values; URLs of ours are built with ``quote``, so no data
chooses a scheme), an undefined name is an error (``StrictUndefined``), plain CSS and one small script of
ours, no CDN and no network. Data never reaches a script: the script reads the page's text; the only
``| safe`` values are our own CSS and script, inlined into the report. The view model already made every text
from data one visible line (control and bidi characters as ``\\uXXXX``).

The server's pages link ``/static/ui.css`` and ``/static/ui.js`` under a Content-Security-Policy that allows
scripts and styles from ``'self'`` only (``SERVER_CSP``); the report carries its CSS and script inline, each
allowed by its SHA-256 in a ``<meta>`` policy (``report_policy``), and nothing else: no inline script from
data runs in either. Pages that could grow with the fleet are bounded: the groups table is paged
(``PAGE_SIZE``), the fleet table shows at most ``MAX_CLUSTER_ROWS`` rows.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Final
from urllib.parse import quote, urlencode

import jinja2

from nova_gitops.rendering.activityviews import ReconcileRow
from nova_gitops.rendering.fleetmodel import FleetModel
from nova_gitops.rendering.fleetviews import shown
from nova_gitops.rendering.groupviews import GroupRow

PAGES: Final = (("/", "Fleet"), ("/groups", "Groups"), ("/rollout", "Rollout"), ("/reconciles", "Reconciles"))
REPORT_NAV: Final = (
    ("#fleet", "Fleet"),
    ("#groups-heading", "Groups"),
    ("#rollout", "Rollout"),
    ("#details", "Group details"),
)
PAGE_SIZE: Final = 250
"""Groups a page of the groups table shows (7,500 groups at K=5 are 30 pages; a search narrows them)."""
MAX_CLUSTER_ROWS: Final = 2000
"""Clusters the fleet table shows; more are counted (the filter finds them in the report)."""
MAX_REPORT_DETAILS: Final = 100
"""Groups the report details (its group pages); the others are in its groups table."""
MAX_QUERY: Final = 200
SERVER_CSP: Final = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)


@cache
def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("nova_gitops.webui", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )


def warm() -> None:
    """Compile every template now (a server calls it at start: the first page a person opens should not
    pay for it)."""
    environment = _environment()
    for name in environment.list_templates(extensions=["j2"]):
        environment.get_template(name)


@cache
def static(name: str) -> bytes:
    """Our own CSS or script (``ui.css``, ``ui.js``), as shipped in the package."""
    if name not in ("ui.css", "ui.js"):
        raise KeyError(name)
    return resources.files("nova_gitops.webui").joinpath("static", name).read_bytes()


def _digest(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def report_policy(css: str, js: str) -> str:
    """The report's Content-Security-Policy: its own inline style and script by hash, nothing else."""
    return (
        f"default-src 'none'; style-src {_digest(css)}; script-src {_digest(js)}; img-src data:; "
        "form-action 'none'; base-uri 'none'"
    )


def group_href(name: str) -> str:
    return "/groups/" + quote(name, safe="")


def _render(template: str, **context: Any) -> str:
    return _environment().get_template(template).render(**context)


def _common(model: FleetModel, heading: str, stamp: str, version: int) -> dict[str, Any]:
    return {
        "title": shown(model.facts.title or "fleet"),
        "heading": heading,
        "nav": PAGES,
        "stamp": stamp,
        "report": False,
        "live": True,
        "version": version,
        "model": model,
    }


def waiting_page(title: str, *, stamp: str, version: int, reconciles: Sequence[ReconcileRow] = ()) -> str:
    """Before the first reconcile: a page that loads itself again once there is a fleet to show, listing
    ``reconciles`` (the failed ones so far: why there is no fleet yet)."""
    return _render(
        "waiting.html.j2",
        title=shown(title or "fleet"),
        heading="Fleet",
        nav=PAGES,
        stamp=stamp,
        report=False,
        live=True,
        version=version,
        waiting=True,
        reconciles=reconciles,
    )


def fleet_page(model: FleetModel, *, stamp: str, version: int) -> str:
    rows = model.clusters
    return _render(
        "fleet.html.j2",
        **_common(model, "Fleet", stamp, version),
        rows=rows[:MAX_CLUSTER_ROWS],
        more=max(0, len(rows) - MAX_CLUSTER_ROWS),
    )


def matching(rows: Sequence[GroupRow], query: str) -> list[GroupRow]:
    """The groups whose name, policy, mode, status or clusters hold every word of ``query`` (any case)."""
    terms = query.lower().split()
    if not terms:
        return list(rows)
    found = []
    for row in rows:
        text = " ".join((row.name, row.policy, row.mode, row.status, *row.clusters)).lower()
        if all(term in text for term in terms):
            found.append(row)
    return found


@dataclass(frozen=True, slots=True)
class GroupsQuery:
    query: str = ""
    page: int = 1

    @classmethod
    def of(cls, query: str, page: str) -> GroupsQuery:
        number = int(page) if page.isascii() and page.isdigit() and len(page) < 7 else 1
        return cls(query[:MAX_QUERY], max(1, number))


def groups_page(model: FleetModel, asked: GroupsQuery, *, stamp: str, version: int) -> str:
    found = matching(model.groups, asked.query)
    pages = max(1, math.ceil(len(found) / PAGE_SIZE))
    page = min(asked.page, pages)

    def page_href(number: int) -> str:
        return "/groups?" + urlencode({"q": asked.query, "page": number})

    return _render(
        "groups.html.j2",
        **_common(model, "Groups", stamp, version),
        rows=found[(page - 1) * PAGE_SIZE : page * PAGE_SIZE],
        total=len(found),
        query=asked.query,
        page=page,
        pages=pages,
        page_size=PAGE_SIZE,
        page_href=page_href,
        group_href=group_href,
    )


def group_page(
    model: FleetModel,
    name: str,
    *,
    stamp: str,
    version: int,
    history: Sequence[tuple[str, str, str]] | None = None,
) -> tuple[int, str]:
    """A group's page; ``history``: its commits from the rendered repository's log (None: the moves the
    reconciles this view saw said)."""
    found = model.group(name)
    if found is not None and history is not None:
        found = dataclasses.replace(found, history=tuple(history))
    html = _render("group.html.j2", **_common(model, "Groups", stamp, version), group=found)
    return (200 if found is not None else 404), html


def rollout_page(model: FleetModel, *, stamp: str, version: int) -> str:
    return _render("rollout.html.j2", **_common(model, "Rollout", stamp, version), rollout=model.rollout)


def reconciles_page(model: FleetModel, *, stamp: str, version: int) -> str:
    return _render(
        "reconciles.html.j2", **_common(model, "Reconciles", stamp, version), rows=model.reconciles
    )


def _detailed(model: FleetModel) -> list[str]:
    """The groups the report details: unschedulable, then warned, then the rest, in name order."""
    plan = model.facts.plan
    ranked = sorted(
        plan.groups, key=lambda group: (group.status != "unschedulable", not group.warnings, group.name)
    )
    return [group.name for group in ranked[:MAX_REPORT_DETAILS]]


def report(model: FleetModel, *, stamp: str) -> str:
    """One self-contained HTML file: CSS and script inline under a hash policy, no reference outside it."""
    css, js = static("ui.css").decode(), static("ui.js").decode()
    names = sorted(_detailed(model))
    anchors = {shown(name): f"group-{index}" for index, name in enumerate(names)}
    details = [(f"group-{index}", model.group(name)) for index, name in enumerate(names)]
    return _render(
        "report.html.j2",
        title=shown(model.facts.title or "fleet"),
        heading="Report",
        nav=REPORT_NAV,
        stamp=stamp,
        report=True,
        live=False,
        version=0,
        model=model,
        css=css,
        js=js,
        csp=report_policy(css, js),
        details=details,
        group_href=lambda name: "#" + anchors[name] if name in anchors else "",
    )
