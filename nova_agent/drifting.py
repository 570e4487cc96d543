"""Drift: whether a live object still holds what git wants, decided without writing to the cluster.

An object drifted when applying its manifest again would change it: someone ran ``kubectl edit`` or
``kubectl scale`` on a field the agent applied. Two checks, cheapest first, and the pass only pays for the
second when the first cannot tell:

1. :func:`departures` compares the manifest with the live object (already listed by the pass): every field
   the manifest sets must hold the same value, of the same type, at the same place. Fields the manifest does
   not set (defaults, other managers' fields, status) are not looked at. When nothing departs, applying would
   change nothing: no request is made. This is exact in that direction only — a departure may be a mere
   difference of spelling (``cpu: 0.5`` read back as ``500m``, a list a webhook extended).
2. Where something departs, a server-side apply *dry run* says what the object would become, defaulting,
   normalisation, admission and field ownership included; :func:`changed_paths` between that answer and the
   live object is the drift (as Flux's drift detection does). Nothing is persisted by a dry run.

Fields that are not the agent's to hold are never drift: everything other managers own is left alone by an
apply (the dry run shows it unchanged), and ``spec.replicas`` of an object a HorizontalPodAutoscaler scales
is taken from the live object before both checks (see :func:`with_live_replicas`).
"""

from __future__ import annotations

import base64
import enum
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Final

from nova_agent.resources import Body, ObjectRef, annotations_of
from nova_gitops.api import objects
from nova_gitops.api.times import rfc3339

DRIFT_ANNOTATION: Final = "gitops.nova.elotl.co/drift"
"""Per object: ``correct`` (re-apply), ``warn`` (report only) or ``ignore`` (not even checked)."""

MAX_FIELDS_LISTED: Final = 20
"""A drifted object lists at most this many field paths (an edited ConfigMap can differ in thousands)."""


class DriftMode(enum.Enum):
    CORRECT = "correct"
    WARN = "warn"
    OFF = "off"


@dataclass(frozen=True, slots=True)
class DriftedObject:
    """An object whose live state departs from git's: the fields applying would change, since when, and
    whether this pass put it back (``mode`` correct) or only reports it (``warn``)."""

    ref: ObjectRef
    fields: tuple[str, ...]
    first_seen: datetime
    mode: DriftMode
    corrected: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.ref.as_dict(),
            "fields": list(self.fields),
            "firstSeen": rfc3339(self.first_seen),
            "action": self.mode.value,
            "corrected": self.corrected,
        }


def mode_for(body: Mapping[str, Any], default: DriftMode) -> DriftMode:
    """The object's annotation when it names a mode (``ignore`` is ``off``), else the agent's ``--drift``."""
    value = annotations_of(body).get(DRIFT_ANNOTATION)
    if value == "ignore":
        return DriftMode.OFF
    if value in ("correct", "warn"):
        return DriftMode(value)
    return default


def comparable_manifest(body: Body) -> Body:
    """``body`` as the server stores it where that is known without asking: a Secret's ``stringData`` is
    folded into ``data`` (base64), as kube-apiserver does on write: an unchanged Secret needs no dry run."""
    string_data = body.get("stringData")
    if body.get("kind") != "Secret" or body.get("apiVersion") != "v1" or not isinstance(string_data, dict):
        return body
    data = dict(body.get("data") or {})
    for key, value in string_data.items():
        if not isinstance(value, str):
            return body  # refused before it was ever applied (api.secrets); nothing to fold
        data[key] = base64.b64encode(value.encode()).decode()
    folded = {key: value for key, value in body.items() if key != "stringData"}
    folded["data"] = data
    return folded


Alike = Callable[[str, object, object], bool]
"""Whether two differing values at a path are the same after all (a spelling the server normalises)."""


def departures(desired: object, live: object, path: str = "", alike: Alike | None = None) -> Iterator[str]:
    """Paths of the fields ``desired`` sets whose live value differs (type-strict: ``1`` is not ``"1"`` nor
    ``True``, unless ``alike`` says the pair is the same). Maps are compared by the desired keys; a list must
    have the same length and its items match pairwise. ``metadata`` compares only labels and annotations (the
    rest is the server's)."""
    if isinstance(desired, dict):
        if not isinstance(live, dict):
            yield path or "."
            return
        for key, value in desired.items():
            if not path and key in ("status", "apiVersion", "kind"):
                continue
            if not path and key == "metadata":
                yield from _metadata_departures(value, live.get("metadata"))
                continue
            if key not in live:
                yield _join(path, key)
            else:
                yield from departures(value, live[key], _join(path, key), alike)
    elif isinstance(desired, list):
        if not isinstance(live, list) or len(live) != len(desired):
            yield path or "."
            return
        for index, (item, live_item) in enumerate(zip(desired, live, strict=True)):
            yield from departures(item, live_item, f"{path}[{index}]", alike)
    elif (type(desired) is not type(live) or desired != live) and not (alike and alike(path, desired, live)):
        yield path or "."


def _metadata_departures(desired: object, live: object) -> Iterator[str]:
    if not isinstance(desired, dict):
        return
    live_metadata = live if isinstance(live, dict) else {}
    for key in ("labels", "annotations"):
        if key in desired:
            yield from departures(desired[key], live_metadata.get(key, {}), f"metadata.{key}")


def changed_paths(after: Mapping[str, Any], live: Mapping[str, Any]) -> list[str]:
    """Where ``after`` (the dry run's answer) differs from ``live``, status and server metadata aside: what
    applying the manifest would change. Sorted, at most :data:`MAX_FIELDS_LISTED` (and a count beyond)."""
    found = sorted(set(_differences(_comparable(after), _comparable(live), "")))
    if len(found) > MAX_FIELDS_LISTED:
        return [*found[:MAX_FIELDS_LISTED], f"... and {len(found) - MAX_FIELDS_LISTED} more"]
    return found


def _comparable(body: Mapping[str, Any]) -> dict[str, Any]:
    metadata = body.get("metadata")
    kept = {key: value for key, value in body.items() if key != "status"}
    if isinstance(metadata, dict):
        server = objects.SERVER_METADATA_FIELDS
        kept["metadata"] = {key: value for key, value in metadata.items() if key not in server}
    return kept


def _differences(a: object, b: object, path: str) -> Iterator[str]:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in a.keys() | b.keys():
            if key not in a or key not in b:
                yield _join(path, key)
            else:
                yield from _differences(a[key], b[key], _join(path, key))
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (item_a, item_b) in enumerate(zip(a, b, strict=True)):
            yield from _differences(item_a, item_b, f"{path}[{index}]")
    elif type(a) is not type(b) or a != b:
        yield path or "."


def _join(path: str, key: object) -> str:
    text = str(key)
    if text and all(char.isalnum() or char in "-_" for char in text):
        return f"{path}.{text}" if path else text
    return f"{path}[{text}]"


SCALED_KINDS: Final = frozenset({("apps", "Deployment"), ("apps", "StatefulSet"), ("apps", "ReplicaSet")})


def autoscaled_targets(autoscalers: list[Body]) -> set[tuple[str, str, str]]:
    """(namespace, kind, name) of every object a HorizontalPodAutoscaler scales (its ``scaleTargetRef``)."""
    targets: set[tuple[str, str, str]] = set()
    for hpa in autoscalers:
        metadata, spec = hpa.get("metadata"), hpa.get("spec")
        target = spec.get("scaleTargetRef") if isinstance(spec, dict) else None
        if not isinstance(metadata, dict) or not isinstance(target, dict):
            continue
        namespace, kind, name = metadata.get("namespace"), target.get("kind"), target.get("name")
        if isinstance(namespace, str) and isinstance(kind, str) and isinstance(name, str):
            targets.add((namespace, kind, name))
    return targets


def with_live_replicas(desired: Body, live: Mapping[str, Any] | None) -> Body:
    """``desired`` with ``spec.replicas`` as the live object has it: the autoscaler owns the count, and
    applying git's would scale the workload back at every pass. A new object (no live one) keeps git's count
    as its starting size; a live object without a count keeps the manifest's (nothing to preserve)."""
    live_spec = live.get("spec") if live is not None else None
    spec = desired.get("spec")
    if not isinstance(live_spec, dict) or not isinstance(spec, dict) or "replicas" not in live_spec:
        return desired
    if spec.get("replicas") == live_spec["replicas"] or "replicas" not in spec:
        return desired
    return {**desired, "spec": {**spec, "replicas": live_spec["replicas"]}}
