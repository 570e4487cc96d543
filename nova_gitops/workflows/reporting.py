"""``nova-gitops report SOURCE -o fleet.html``: the fleet's views as one self-contained HTML file (issue 27).

The source is loaded and planned as ``get`` and ``explain`` do (``inspecting.planned``: ``--clusters`` laid
over its Clusters, ``--previous`` for stickiness), and the pages are ``webui.pages.report`` of that plan: no
controller, no network, so a CI job can attach the file to a pull request. The agents' own fields (report
age, synced commit, drift, reschedule requests) are read from the ``--clusters`` reports when they are
agents' ``status/<cluster>.yaml``; a source's Clusters have none, and their columns say ``-``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

from nova_gitops import errors
from nova_gitops.api import loading
from nova_gitops.api.statusreports import MAX_REPORT_BYTES
from nova_gitops.rendering import fleetviews
from nova_gitops.rendering.fleetmodel import FleetFacts, FleetModel
from nova_gitops.scheduling.plans import PlanSettings
from nova_gitops.sources.gitsources import public_url
from nova_gitops.webui import pages
from nova_gitops.workflows import inspecting

MAX_REPORT_FILES = 10_000
"""Cluster reports read for the agents' fields; more are left out (the plan still has them all)."""


def agents_of(clusters_path: Path | None) -> dict[str, fleetviews.AgentFacts]:
    """The agents' fields of every Cluster under ``clusters_path`` (a file, or a directory's ``*.yaml``);
    a file that does not read is skipped here (the load has reported it already)."""
    if clusters_path is None:
        return {}
    files = [clusters_path] if clusters_path.is_file() else sorted(clusters_path.rglob("*.y*ml"))
    found: dict[str, fleetviews.AgentFacts] = {}
    for path in files[:MAX_REPORT_FILES]:
        if not path.is_file() or path.is_symlink() or path.stat().st_size > MAX_REPORT_BYTES:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        documents, _ = loading.load_documents(str(path), text, bounds=loading.REPORT_BOUNDS)
        for document in documents:
            body = document.body
            name = body.get("metadata", {}).get("name") if isinstance(body.get("metadata"), dict) else None
            if body.get("kind") == "Cluster" and isinstance(name, str):
                found[name] = fleetviews.agent_facts(body)
    return found


def report_html(
    source: str,
    *,
    clusters_path: Path | None,
    settings: PlanSettings,
    environ: Mapping[str, str],
    previous: str | None = None,
    now: datetime | None = None,
) -> str:
    """SOURCE planned, as the report's HTML."""
    found = inspecting.planned(
        source, clusters_path=clusters_path, settings=settings, environ=environ, previous=previous
    )
    assert found.plan is not None
    moment = now or datetime.now(UTC)
    shown = public_url(source)  # a CI artifact: a URL's user:token@ stays out of it, as in the view's
    title = Path(shown.rstrip("/")).name
    facts = FleetFacts(
        plan=found.plan,
        source_set=found.source_set,
        agents=agents_of(clusters_path),
        now=moment,
        title=title or shown,
        where=f"--repo REPO --source {shown}",
    )
    return pages.report(FleetModel(facts), stamp=f"rendered {moment:%Y-%m-%d %H:%M} UTC from {title}")


def write_report(html: str, output: Path) -> None:
    """Write the file whole or not at all (a temporary file beside it, renamed over it); a link or what is
    not a regular file (``-o /dev/stdout``, a pipe) is written through, never replaced. UserError when the
    output cannot be written."""
    try:
        if output.is_symlink() or (output.exists() and not output.is_file()):
            with output.open("w", encoding="utf-8") as file:
                file.write(html)
            return
        _replace(html, output)
    except OSError as error:
        raise errors.UserError(f"cannot write {output}: {error.strerror or error}") from None


def _replace(html: str, output: Path) -> None:
    output.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{output.name}.", dir=output.parent)
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            file.write(html)
        os.replace(temporary, output)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
