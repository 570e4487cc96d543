"""A status report as a file: its bytes (``dump_status``), a previous one read back (``load_status``), and
whether a new one is worth a commit (``should_commit``).

Two fields change every pass (``heartbeat``) or on every change (``lastUpdateTime``); :func:`should_commit`
ignores them so that a quiet cluster commits once per heartbeat interval and not once per pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

import yaml

from nova_agent.resources import Body
from nova_gitops.api import loading
from nova_gitops.api.statusreports import VOLATILE_FIELDS
from nova_gitops.api.times import parse_rfc3339


class StatusReport:
    """A report as written: its document, and its bytes (``dump_status``, written when first asked for)."""

    __slots__ = ("_data", "document")

    def __init__(self, document: Body, data: bytes | None = None) -> None:
        self.document = document
        self._data = data

    @property
    def data(self) -> bytes:
        if self._data is None:
            self._data = dump_status(self.document)
        return self._data


def keep_update_time(document: Body, previous: Body | None) -> bool:
    """Give ``document`` the previous report's ``lastUpdateTime`` when nothing else changed; whether that
    changed it."""
    if previous is None or report_changed(previous, document):
        return False
    status = document["status"]
    kept = str((previous.get("status") or {}).get("lastUpdateTime", status["lastUpdateTime"]))
    changed: bool = kept != status["lastUpdateTime"]
    status["lastUpdateTime"] = kept
    return changed


def _without_volatile(document: Mapping[str, Any]) -> dict[str, Any]:
    status = dict(document.get("status") or {})
    for name in VOLATILE_FIELDS:
        status.pop(name, None)
    return {**document, "status": status}


def report_changed(previous: Mapping[str, Any] | None, current: Mapping[str, Any]) -> bool:
    """Whether anything but the heartbeat and update time differs."""
    return previous is None or _without_volatile(previous) != _without_volatile(current)


def should_commit(
    previous: Mapping[str, Any] | None,
    current: Mapping[str, Any],
    now: datetime,
    heartbeat_interval: timedelta,
) -> bool:
    """Commit on change, or when the last heartbeat written is older than the heartbeat interval."""
    if report_changed(previous, current):
        return True
    assert previous is not None
    last_beat = parse_rfc3339((previous.get("status") or {}).get("heartbeat"))
    return last_beat is None or now - last_beat >= heartbeat_interval


def dump_status(document: Mapping[str, Any]) -> bytes:
    """Block-style YAML in document order, with libyaml's C dumper."""
    text: str = yaml.dump(
        document,
        Dumper=yaml.CSafeDumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1000,
    )
    return text.encode()


def load_status(data: bytes) -> Body | None:
    """A previously written report, or None when it is missing or unreadable (then it is simply rewritten).

    The status branch is shared with other agents, so the file is read with the loader's bounds: a hostile
    one (nested deep enough to crash libyaml, a 5,000-digit integer, a million list items) is rewritten,
    never a crash; what it holds is counted while it is read (``loading.REPORT_BOUNDS``, as the controller
    reads it)."""
    try:
        loaded = loading.load_one(data, bounds=loading.REPORT_BOUNDS)
    except loading.YamlRefused:
        return None
    return loaded if isinstance(loaded, dict) else None
