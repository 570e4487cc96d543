"""Agents' status reports as the cluster inventory: ``status/<cluster>.yaml`` on the status branch.

Status is untrusted input (docs/design.md §7): any agent can write its file, so each file is read only as the
report
of the cluster its name says (``status/wlc-1.yaml`` must describe ``wlc-1``), is size-bounded, loaded with the
safe loader (aliases bounded), and validated with the same Cluster parser the source uses. A refused report
is a problem the controller logs; it never stops the reconcile of the other clusters (the source's own
Cluster of that name, if any, is used instead).

Whatever a report holds, it is either used or refused naming its cluster (issue 9, item 4):
- Before the YAML composer sees it, what it holds is bounded (``REPORT_BOUNDS``, ``loading.bounds_problem``,
  on libyaml's events): nesting, since libyaml composes nested collections by C recursion, so ``[[[[…`` or
  ``- - - …`` a hundred thousand deep (200 KB, well under the size limit) overflows the C stack and kills
  the process (no exception handler can catch a segfault; an agent's report is 6 levels deep); and how
  much it holds (issue 21 item 9): 1.3 million empty ``workloads`` entries in 3.9 MB took seconds to compose
  and construct, on every reconcile and ``rollout status``, before the 20,000-entry cap cut the list. Now
  a list or mapping of more than 20,000 items, or more than 400,000 values in all, is refused at the line
  where it passes the bound, after reading only that far: a refusal costs at most the events up to the
  bound; a used report costs what a legitimate one of its size does.
- Each report's interpretation is guarded (``parse_report``, ``report_from_document``): an exception from
  any parser on hostile values (an unhashable condition status, a 5,000-digit integer, mixed-type keys)
  becomes a refusal of that report, logged with its traceback, never a failed reconcile.
- What the controller later reads from a used report is plain data of known types: reschedule requests
  are bounded strings, ``syncedRevision`` a string, ``workloads`` mappings (write-back reads their counts
  defensively) whose ``revision`` — the rendered commit the object reflects; ``healthy`` is for
  ``syncedRevision`` only — is a bounded string when present (an unusable one reads as ``""``, unknown;
  reports of agents older than the field have none and are read as before).

The branch is read at one commit, fetched into a bare cache of its own (never the rendered repo's cache, whose
lock the publisher holds). A read whose branch head has not moved since the last one returns the last
snapshot after one ``git ls-remote`` (no fetch, no parse), and a report file whose blob is unchanged is not
parsed again: a poll with nothing new costs one round trip.

``plan_fingerprint`` digests what planning can read from a report: everything but the fields an agent
rewrites without the cluster changing (``heartbeat``, ``lastUpdateTime``, ``workloads``' health, ...), so a
heartbeat does not make the controller plan again (``controller.skipping``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from nova_gitops.api import clusters, loading, statusreports
from nova_gitops.api import labels as nova_labels
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import Problem, SourceLocation
from nova_gitops.controller.ports import ClusterReport, StatusSnapshot
from nova_gitops.publishing import gitwriting

STATUS_DIRECTORY = "status"
MAX_REPORT_BYTES = statusreports.MAX_REPORT_BYTES  # the report's format and bounds: ``api.statusreports``
MAX_REPORTS = 5000
REPORT_PATH = re.compile(r"^status/([a-z0-9]([-a-z0-9.]*[a-z0-9])?)\.yaml$")
REPORT_BOUNDS = statusreports.REPORT_BOUNDS
MAX_WORKLOADS_PER_REPORT = REPORT_BOUNDS.items  # a control plane's Cluster CR, read by the API, is cut to it
MAX_REPORT_VALUES = REPORT_BOUNDS.values
MAX_REVISION_CHARS = 256
MAX_FLOW_DEPTH = REPORT_BOUNDS.depth  # nested collections (a report has 6: `status.nodeTaints.<n>[].<key>`)
MAX_LINE_PREFIX = REPORT_BOUNDS.line_prefix  # indentation and leading `- `/`? `/`: ` of a line (a report ~12)
UNREADABLE = "report refused: it could not be interpreted"
UNPLANNED_FIELDS = statusreports.UNPLANNED_FIELDS
"""Left out of ``plan_fingerprint``, top level and ``status`` alike: health, heartbeats, errors."""
log = logging.getLogger(__name__)


def plan_fingerprint(body: Mapping[str, Any]) -> str:
    """A digest of a report's Cluster document without ``UNPLANNED_FIELDS``: equal for two reports that
    planning cannot tell apart. Conservative: key order and any field not listed there count."""
    kept = {key: value for key, value in body.items() if key not in UNPLANNED_FIELDS}
    status = kept.get("status")
    if isinstance(status, Mapping):
        kept["status"] = {key: value for key, value in status.items() if key not in UNPLANNED_FIELDS}
    return hashlib.sha256(repr(kept).encode()).hexdigest()  # repr keeps 1 and "1" apart; JSON would not


def capacity_fingerprint(status: Mapping[str, Any]) -> str:
    """What "the cluster's reported capacity" is: per-node allocatable (``capacityResources``). Nodes added,
    removed or resized change it; pods coming and going (``availableResources``) do not, so a cool-down is
    not cut short by ordinary churn."""
    capacity = status.get("capacityResources")
    try:
        text = json.dumps(capacity if isinstance(capacity, Mapping) else {}, sort_keys=True, default=str)
    except (TypeError, ValueError):  # keys of mixed types cannot be sorted: the order as written
        text = repr(capacity)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def parse_report(path: str, data: bytes) -> tuple[ClusterReport | None, list[Problem]]:
    """Validate one status file; (None, problems) when it cannot be used as its cluster's report.

    Never raises for any content: an unexpected exception is a refusal naming the cluster (and logged)."""
    try:
        return _parse_report(path, data)
    except Exception as error:  # hostile content must not fail the reconcile of every other cluster
        match = REPORT_PATH.match(path)
        return None, [_unreadable(SourceLocation(path, 1), match.group(1) if match else path, error)]


def _unreadable(where: SourceLocation, cluster: str, error: BaseException) -> Problem:
    log.warning("status report of cluster %s could not be interpreted", cluster, exc_info=error)
    detail = " ".join(str(error).split())[:200]
    return Problem(where, f"cluster {cluster}: {UNREADABLE} ({type(error).__name__}: {detail})")


def _parse_report(path: str, data: bytes) -> tuple[ClusterReport | None, list[Problem]]:
    where = SourceLocation(path, 1)
    match = REPORT_PATH.match(path)
    if match is None:
        return None, [Problem(where, "not status/<cluster>.yaml with a valid cluster name; ignored")]
    expected = match.group(1)
    if len(data) > MAX_REPORT_BYTES:
        return None, [Problem(where, f"report is {len(data)} bytes, over the {MAX_REPORT_BYTES} limit")]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        return None, [Problem(where, f"not UTF-8 text: {error.reason}")]
    documents, problems = loading.load_documents(path, text, bounds=REPORT_BOUNDS)
    if problems:
        subject = f"cluster {expected}"
        return None, [
            problem if problem.subject else replace(problem, subject=subject) for problem in problems
        ]
    if len(documents) != 1:
        return None, [Problem(where, f"holds {len(documents)} documents; a report is one Cluster")]
    document = documents[0]
    body = document.body
    metadata = body.get("metadata")
    name = metadata.get("name") if isinstance(metadata, Mapping) else None
    if name != expected:
        message = f"describes cluster {name!r}; {path} may only report cluster {expected!r}; ignored"
        return None, [Problem(document.location, message, "metadata.name")]
    return report_from_document(document, text)


def report_from_document(document: Document, text: str = "") -> tuple[ClusterReport | None, list[Problem]]:
    """A Cluster document (a status file, or a Cluster CR of a control plane whose status agents write)
    as a report; (None, problems) when it is not a usable Cluster. Never raises (see ``parse_report``)."""
    try:
        return _report_from_document(document, text)
    except Exception as error:
        metadata = document.body.get("metadata") if isinstance(document.body, dict) else None
        name = metadata.get("name") if isinstance(metadata, dict) else None
        shown = name if isinstance(name, str) else document.location.file
        return None, [_unreadable(document.location, shown[:253], error)]


def _report_from_document(document: Document, text: str) -> tuple[ClusterReport | None, list[Problem]]:
    body: Mapping[str, Any] = document.body if isinstance(document.body, dict) else {}
    if body.get("kind") != "Cluster" or body.get("apiVersion") != nova_labels.CLUSTER_API_VERSION:
        return None, [Problem(document.location, f"is not a {nova_labels.CLUSTER_API_VERSION} Cluster")]
    found: list[Problem] = []
    cluster = clusters.parse_cluster(document, found)
    blocking = [problem for problem in found if problem.is_error]
    if cluster is None or blocking:
        return None, blocking or found
    raw_status = body.get("status")
    status: Mapping[str, Any] = raw_status if isinstance(raw_status, Mapping) else {}
    raw_requests = status.get(statusreports.RESCHEDULE_REQUESTS)
    requests, request_problems = statusreports.read_requests(cluster.name, raw_requests, document.location)
    workloads = status.get("workloads")
    if isinstance(workloads, list) and len(workloads) > MAX_WORKLOADS_PER_REPORT:
        message = f"more than {MAX_WORKLOADS_PER_REPORT} entries; the rest ignored"
        request_problems.append(Problem(document.location, message, "status.workloads"))
        workloads = workloads[:MAX_WORKLOADS_PER_REPORT]
    revision = status.get("syncedRevision")
    return (
        ClusterReport(
            cluster=cluster,
            document=document,
            text=text,
            capacity=capacity_fingerprint(status),
            workloads=tuple(_workload(item) for item in workloads if isinstance(item, Mapping))
            if isinstance(workloads, list)
            else (),
            reschedule_requests=requests,
            synced_revision=revision[:MAX_REVISION_CHARS] if isinstance(revision, str) else "",
            plan_digest=plan_fingerprint(body),
        ),
        request_problems,
    )


def _workload(entry: Mapping[str, Any]) -> Mapping[str, Any]:
    """A health entry as reported, with a ``revision`` that is not a bounded string read as unknown."""
    revision = entry.get("revision")
    if revision is None or (isinstance(revision, str) and len(revision) <= MAX_REVISION_CHARS):
        return entry
    return {**entry, "revision": ""}


def has_report_fields(document: Document) -> bool:
    """Whether a source's Cluster carries what agents report (a control plane's Cluster CRs do)."""
    body = document.body if isinstance(document.body, dict) else {}
    status = body.get("status")
    return isinstance(status, Mapping) and ("rescheduleRequests" in status or "workloads" in status)


Parsed = tuple[ClusterReport | None, list[Problem]]


def snapshot_of(
    files: Mapping[str, bytes],
    revision: str | None = None,
    *,
    parse: Callable[[str, bytes], Parsed] | None = None,  # None: parse_report
) -> StatusSnapshot:
    """Reports from ``path → bytes`` of the status tree (paths outside ``status/`` are ignored)."""
    reports: dict[str, ClusterReport] = {}
    problems: list[Problem] = []
    for path in sorted(files):
        if not path.startswith(f"{STATUS_DIRECTORY}/"):
            continue
        if len(reports) >= MAX_REPORTS:
            problems.append(Problem(SourceLocation(path, 1), f"more than {MAX_REPORTS} reports; ignored"))
            continue
        report, found = (parse or parse_report)(path, files[path])
        problems += found
        if report is not None:
            reports[report.name] = report
    return StatusSnapshot(reports, tuple(problems), revision)


class GitStatusReader:
    """The status branch of a repository (the rendered repo's ``nova-status``, or ``--status-repo``)."""

    def __init__(self, url: str, branch: str, *, cache_dir: Path, timeout: float = 120.0) -> None:
        self.url = url
        self.branch = branch
        self.repo = gitwriting.RenderedRepo(
            gitwriting.cache_path(cache_dir / "status", url), url, timeout=timeout
        )
        self._last: StatusSnapshot | None = None  # the last snapshot read, at its ``revision``
        self._parsed: dict[tuple[str, str], Parsed] = {}  # (path, blob id) → parse_report of those bytes

    def read(self) -> StatusSnapshot:
        last = self._last
        remote = self.head()
        if remote is None:  # no agent has reported yet
            self._last = None
            return StatusSnapshot()
        if last is not None and remote == last.revision:
            return last  # the branch has not moved: same commit, same reports (one ls-remote, no fetch)
        head = self.repo.fetch(self.branch)
        if head is None:  # no agent has reported yet
            self._last = None
            return StatusSnapshot()
        self._last = snapshot = self._read_at(head)
        return snapshot

    def _read_at(self, head: str) -> StatusSnapshot:
        listing = self.repo.listing(head)
        paths = sorted(path for path in listing if path.startswith(f"{STATUS_DIRECTORY}/"))[: MAX_REPORTS + 1]
        sizes = self._sizes([listing[path] for path in paths])
        problems: list[Problem] = []
        wanted: list[str] = []
        for path in paths:
            size = sizes.get(listing[path], 0)
            if size > MAX_REPORT_BYTES:
                message = f"report is {size} bytes, over the {MAX_REPORT_BYTES} limit"
                problems.append(Problem(SourceLocation(path, 1), message))
            else:
                wanted.append(path)
        parsed = {
            (path, listing[path]): self._parsed[path, listing[path]]
            for path in wanted
            if (path, listing[path]) in self._parsed
        }
        unparsed = [path for path in wanted if (path, listing[path]) not in parsed]
        blobs = self.repo.read_blobs(sorted({listing[path] for path in unparsed}))

        def parse(path: str, data: bytes) -> Parsed:
            key = (path, listing[path])
            if key not in parsed:
                parsed[key] = parse_report(path, data)
            return parsed[key]

        files = {path: blobs.get(listing[path], b"") for path in wanted}
        snapshot = snapshot_of(files, head, parse=parse)
        self._parsed = parsed  # only the reports of this commit: bounded by the number of clusters
        return StatusSnapshot(snapshot.reports, (*problems, *snapshot.problems), head)

    def head(self) -> str | None:
        return self.repo.remote_head(self.branch)

    def _sizes(self, blob_ids: list[str]) -> dict[str, int]:
        """Blob sizes without reading the blobs (``cat-file --batch-check``): an oversized report is
        refused before it is loaded into memory."""
        if not blob_ids:
            return {}
        output = self.repo.git.run(
            "cat-file", "--batch-check", stdin="".join(f"{sha}\n" for sha in blob_ids).encode()
        ).stdout.decode()
        sizes: dict[str, int] = {}
        for line in output.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[2].isdigit():
                sizes[parts[0]] = int(parts[2])
        return sizes


class NoStatus:
    """No status branch: the source's Cluster objects are the whole inventory."""

    def read(self) -> StatusSnapshot:
        return StatusSnapshot()

    def head(self) -> str | None:
        return None
