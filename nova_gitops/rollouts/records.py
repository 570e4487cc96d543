"""The rollout's memory and the people's requests, as data kept in git (docs/rollouts.md, "State").

``Record`` is what the controller writes to ``rollout/record.yaml`` on ``nova/rollout``: the target
commit, each wave's timestamps (released, waiting since, healthy since, passed, failed), and for every
cluster released through a gate the commit it had before (what a rollback returns to). ``Requests`` is
what ``nova-gitops rollout pause|resume|promote|abort`` commits to ``rollout/requests.yaml``: declarative
and tied to a target commit, so reading them twice is reading them once, and a promote given for one render
never promotes the next.

Both convert to and from plain mappings (``record_to_data``/``record_from_data``,
``requests_to_data``/``requests_from_data``)
so the controller's git code only moves YAML; times are RFC 3339 UTC text.

The two are read in opposite ways, each in its safe direction. A record that does not read is the empty
record (the rollout starts over at wave 1: gates are checked again). The requests are read strictly
(``read_requests``): a file that does not parse, a field of the wrong type (``paused: "true"``), an unknown
field or a malformed request is not ignored but makes the whole file a **pause** (``Requests.unreadable``
says why, with the file and line), because what the file meant may have been a pause, and a pause must never
be lifted by a typo or a merge-conflict marker. Nothing in such a file is promoted, resumed or aborted.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Literal

from nova_gitops.api import fieldlines, loading
from nova_gitops.api.names import suggestion
from nova_gitops.api.problems import excerpt
from nova_gitops.api.times import parse_rfc3339, rfc3339

API_VERSION: Final = "gitops.nova.elotl.co/v1alpha1"
RECORD_PATH: Final = "rollout/record.yaml"
REQUESTS_PATH: Final = "rollout/requests.yaml"

Outcome = Literal["", "progressing", "paused", "complete", "rolled-back", "aborted"]
OUTCOMES: Final[tuple[Outcome, ...]] = ("", "progressing", "paused", "complete", "rolled-back", "aborted")


@dataclass(frozen=True, slots=True)
class WaveRecord:
    name: str
    released_at: datetime | None = None  # its last batch
    waiting_since: datetime | None = None  # the health timeout counts from here
    healthy_since: datetime | None = None  # the bake counts from here
    passed_at: datetime | None = None
    failed_at: datetime | None = None
    failure: str = ""
    promoted: bool = False
    held_since: datetime | None = None
    """A wave that passed and is not healthy now holds the later ones from here; ``healthTimeout`` after it,
    the rollout fails (``stepping``). None while it is healthy."""


@dataclass(frozen=True, slots=True)
class Record:
    """``released_from``: each cluster this rollout released through a gate → the commit its branch held
    before (None: it had none). ``rolled_back``: the clusters a rollback holds at those commits.
    ``members``: each cluster → the wave it was in at the last step (carried from rollout to rollout), so a
    cluster whose report goes missing or is refused stays in its wave and holds it, rather than leaving the
    wave empty and letting it pass unverified. The record is read as a claim (``rollouts.trust``)."""

    target: str = ""
    started_at: datetime | None = None
    outcome: Outcome = ""
    waves: tuple[WaveRecord, ...] = ()
    released_from: Mapping[str, str | None] = field(default_factory=dict)
    rolled_back: tuple[str, ...] = ()
    members: Mapping[str, str] = field(default_factory=dict)
    verify: tuple[str, ...] = ()
    """Clusters that run the target though this record did not say it released them through a gate (it
    was not one this controller wrote: after a restart, or by hand; ``rollouts.trust``): judged like the
    clusters a wave released, never rolled back (what they ran before is not known)."""

    def wave(self, name: str) -> WaveRecord:
        return next((wave for wave in self.waves if wave.name == name), WaveRecord(name))


@dataclass(frozen=True, slots=True)
class Resume:
    revision: str
    wave: str
    at: datetime


@dataclass(frozen=True, slots=True)
class Requests:
    """``paused``: hold every gated release (``rollout pause``) until ``rollout resume`` clears it.
    ``resume``: retry a wave that failed at ``revision`` before ``at``. ``promotes``: (revision, wave)
    pairs to pass without their gate. ``abort``: the revision whose rollout is rolled back."""

    paused: bool = False
    paused_reason: str = ""
    resume: Resume | None = None
    promotes: frozenset[tuple[str, str]] = frozenset()
    abort: str = ""
    unreadable: str = ""
    """Why ``rollout/requests.yaml`` did not read (``file:line: …``); then ``paused`` is true and nothing
    else is requested (``read_requests``). Never written back: the next command writes a clean file."""


def format_time(moment: datetime | None) -> str | None:
    return None if moment is None else rfc3339(moment)


def parse_time(text: object) -> datetime | None:
    """RFC 3339 text → an aware datetime; None for anything else (a record is read, never trusted)."""
    return parse_rfc3339(text)


_WAVE_TIMES: Final = ("released_at", "waiting_since", "healthy_since", "passed_at", "failed_at", "held_since")
_WAVE_KEYS: Final = ("releasedAt", "waitingSince", "healthySince", "passedAt", "failedAt", "heldSince")


def record_to_data(record: Record) -> dict[str, Any]:
    """The record as ``rollout/record.yaml`` holds it (keys sorted where order carries no meaning)."""
    waves: list[dict[str, Any]] = []
    for wave in record.waves:
        entry: dict[str, Any] = {"name": wave.name}
        for attribute, key in zip(_WAVE_TIMES, _WAVE_KEYS, strict=True):
            if (moment := getattr(wave, attribute)) is not None:
                entry[key] = format_time(moment)
        if wave.failure:
            entry["failure"] = wave.failure
        if wave.promoted:
            entry["promoted"] = True
        waves.append(entry)
    return {
        "apiVersion": API_VERSION,
        "kind": "RolloutRecord",
        "target": record.target,
        "startedAt": format_time(record.started_at),
        "outcome": record.outcome,
        "waves": waves,
        "releasedFrom": {name: record.released_from[name] for name in sorted(record.released_from)},
        "rolledBack": sorted(record.rolled_back),
        "members": {name: record.members[name] for name in sorted(record.members)},
        **({"verify": sorted(record.verify)} if record.verify else {}),
    }


def record_from_data(data: object) -> Record:
    """A record read back; anything unreadable reads as the empty record (the rollout then starts over at
    wave 1, the safe direction: gates are checked again, nothing is skipped)."""
    if not isinstance(data, Mapping) or data.get("kind") != "RolloutRecord":
        return Record()
    waves: list[WaveRecord] = []
    for entry in _list(data.get("waves")):
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            continue
        times = {
            attribute: parse_time(entry.get(key))
            for attribute, key in zip(_WAVE_TIMES, _WAVE_KEYS, strict=True)
        }
        failure = entry.get("failure")
        waves.append(
            WaveRecord(
                entry["name"],
                **times,
                failure=failure if isinstance(failure, str) else "",
                promoted=entry.get("promoted") is True,
            )
        )
    raw_from = data.get("releasedFrom")
    released_from = {
        str(name): commit if isinstance(commit, str) else None
        for name, commit in (raw_from.items() if isinstance(raw_from, Mapping) else ())
    }
    raw_members = data.get("members")
    members = {
        name: wave
        for name, wave in (raw_members.items() if isinstance(raw_members, Mapping) else ())
        if isinstance(name, str) and isinstance(wave, str)
    }
    outcome = data.get("outcome")
    target = data.get("target")
    rolled_back = data.get("rolledBack")
    verify = data.get("verify")
    return Record(
        target=target if isinstance(target, str) else "",
        started_at=parse_time(data.get("startedAt")),
        outcome=next((known for known in OUTCOMES if known == outcome), ""),
        waves=tuple(waves),
        released_from=released_from,
        rolled_back=tuple(str(name) for name in rolled_back) if isinstance(rolled_back, list) else (),
        members=members,
        verify=tuple(str(name) for name in verify) if isinstance(verify, list) else (),
    )


def read_requests(text: bytes | str | None) -> Requests:
    """``rollout/requests.yaml`` as the controller and the commands act on it: no file (or an empty one) is
    no request; a file that does not read strictly (``requests_problems``) is a pause that says why."""
    if text is None:
        return Requests()
    try:
        decoded = text.decode("utf-8") if isinstance(text, bytes) else text
    except UnicodeDecodeError as error:
        return unreadable_requests(f"{REQUESTS_PATH}: not UTF-8 text (byte {error.start})")
    marker = next(
        (number for number, line in enumerate(decoded.splitlines(), 1) if line.startswith(_CONFLICT_MARKERS)),
        None,
    )
    if marker is not None:
        return unreadable_requests(f"{REQUESTS_PATH}:{marker}: a merge-conflict marker: resolve the conflict")
    documents, problems = loading.load_documents(REQUESTS_PATH, decoded)
    if problems:
        return unreadable_requests(_first(str(problems[0]), len(problems)))
    if not documents:
        return Requests()
    if len(documents) > 1:
        return unreadable_requests(f"{documents[1].location}: one document expected, found {len(documents)}")
    document = documents[0]
    found = requests_problems(document.body)
    if found:
        field, message = found[0]
        line = fieldlines.locate_field(decoded, document.location.line, field)
        return unreadable_requests(_first(f"{REQUESTS_PATH}:{line}: {field}: {message}", len(found)))
    return requests_from_data(document.body)


def unreadable_requests(why: str) -> Requests:
    """The requests of a file that did not read: a pause (the file may have meant one), and nothing else."""
    reason = f"the requests do not read: {why} (fix the file, or `nova-gitops rollout resume` rewrites it)"
    return Requests(paused=True, paused_reason=reason, unreadable=why)


def _first(problem: str, count: int) -> str:
    more = count - 1
    return problem if not more else f"{problem} (and {more} more problem{'s' if more > 1 else ''})"


_CONFLICT_MARKERS: Final = ("<<<<<<< ", "=======", ">>>>>>> ", "||||||| ")
_REQUEST_FIELDS: Final = ("apiVersion", "kind", "paused", "pausedReason", "resume", "promote", "abort")
_COMMIT_ID: Final = re.compile(r"^([0-9a-f]{40}|[0-9a-f]{64})$")


def requests_problems(data: object) -> list[tuple[str, str]]:
    """(field, problem) for everything in ``data`` that is not a request as ``requests_to_data`` writes it:
    an unknown field, a value of another type, a revision that is not a full commit id, a time that is not
    RFC 3339. Empty when the file is a clean set of requests."""
    if not isinstance(data, Mapping):
        return [("", f"must be a mapping, not {_type_of(data)}")]
    problems: list[tuple[str, str]] = []
    for key in data:
        if key not in _REQUEST_FIELDS:
            problems.append((str(key), f"unknown field{suggestion(str(key), _REQUEST_FIELDS)}"))
    if data.get("kind") != "RolloutRequests":
        problems.append(("kind", f"must be RolloutRequests, not {_shown(data.get('kind'))}"))
    if data.get("apiVersion") != API_VERSION:
        given = _shown(data["apiVersion"]) if "apiVersion" in data else "given"
        problems.append(("apiVersion", f"must be {API_VERSION}, not {given}"))
    if "paused" in data and not isinstance(data["paused"], bool):
        problems.append(("paused", f"must be true or false, not {_shown(data['paused'])}"))
    if "pausedReason" in data and not isinstance(data["pausedReason"], str):
        problems.append(("pausedReason", f"must be a string, not {_shown(data['pausedReason'])}"))
    if "resume" in data:
        problems += _entry_problems("resume", data["resume"], ("revision", "wave", "at"))
    if "promote" in data:
        promote = data["promote"]
        if not isinstance(promote, list):
            problems.append(("promote", f"must be a list of {{revision, wave}}, not {_shown(promote)}"))
        else:
            for index, entry in enumerate(promote):
                problems += _entry_problems(f"promote[{index}]", entry, ("revision", "wave"))
    if "abort" in data:
        problems += _entry_problems("abort", data["abort"], ("revision",))
    return problems


def _entry_problems(field: str, entry: object, keys: tuple[str, ...]) -> list[tuple[str, str]]:
    if not isinstance(entry, Mapping):
        return [(field, f"must be a mapping of {', '.join(keys)}, not {_shown(entry)}")]
    problems = [
        (f"{field}.{key}", f"unknown field{suggestion(str(key), keys)}") for key in entry if key not in keys
    ]
    for key in keys:
        value = entry.get(key)
        where = f"{field}.{key}"
        if key not in entry:
            problems.append((field, f"{key} is required"))
        elif key == "revision" and not (isinstance(value, str) and _COMMIT_ID.match(value)):
            problems.append((where, f"must be a full commit id (40 or 64 hex digits), not {_shown(value)}"))
        elif key == "wave" and not (isinstance(value, str) and value):
            problems.append((where, f"must be a wave's name, not {_shown(value)}"))
        elif key == "at" and parse_time(value) is None:
            problems.append((where, f"must be an RFC 3339 time, not {_shown(value)}"))
    return problems


def _shown(value: object) -> str:
    """How a wrong value is named in a problem: ``the string 'true'``, ``the number 3``, ``a list``."""
    if isinstance(value, str):
        return f"the string {excerpt(value)}"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, int | float):
        return f"the number {excerpt(value)}"
    return _type_of(value)


def _type_of(value: object) -> str:
    if value is None:
        return "nothing (null)"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "a mapping"
    return _shown(value) if isinstance(value, str | bool | int | float) else type(value).__name__


def requests_from_data(data: object) -> Requests:
    """The requests of a mapping ``requests_problems`` found clean (values of another type are skipped,
    never trusted: check first)."""
    if not isinstance(data, Mapping):
        return Requests()
    resume: Resume | None = None
    raw_resume = data.get("resume")
    if isinstance(raw_resume, Mapping):
        at = parse_time(raw_resume.get("at"))
        revision, wave = raw_resume.get("revision"), raw_resume.get("wave")
        if at is not None and isinstance(revision, str) and isinstance(wave, str):
            resume = Resume(revision, wave, at)
    promotes = frozenset(
        (entry["revision"], entry["wave"])
        for entry in _list(data.get("promote"))
        if isinstance(entry, Mapping)
        and isinstance(entry.get("revision"), str)
        and isinstance(entry.get("wave"), str)
    )
    abort = data.get("abort")
    abort_revision = abort.get("revision") if isinstance(abort, Mapping) else None
    reason = data.get("pausedReason")
    return Requests(
        paused=data.get("paused") is True,
        paused_reason=reason if isinstance(reason, str) else "",
        resume=resume,
        promotes=promotes,
        abort=abort_revision if isinstance(abort_revision, str) else "",
    )


def requests_to_data(requests: Requests) -> dict[str, Any]:
    """The requests as ``rollout/requests.yaml`` holds them (``requests_from_data`` reads them back equal);
    what ``nova-gitops rollout`` writes, so a file it rewrote is always one the controller reads."""
    data: dict[str, Any] = {"apiVersion": API_VERSION, "kind": "RolloutRequests", "paused": requests.paused}
    if requests.paused_reason:
        data["pausedReason"] = requests.paused_reason
    if requests.resume is not None:
        resume = requests.resume
        data["resume"] = {"revision": resume.revision, "wave": resume.wave, "at": format_time(resume.at)}
    if requests.promotes:
        data["promote"] = [{"revision": rev, "wave": wave} for rev, wave in sorted(requests.promotes)]
    if requests.abort:
        data["abort"] = {"revision": requests.abort}
    return data


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []
