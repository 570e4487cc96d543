"""How a change reaches the fleet: the ``RolloutStrategy`` document (docs/rollouts.md).

A source may hold one. It orders clusters into waves by label selectors over the Clusters' labels (the
selectors SchedulePolicies use); clusters no wave selects form a last implicit wave, ``others``. It is read
strictly, like a SchedulePolicy: a misspelt ``bakeTime`` that silently fell back to the default would
release production five minutes after the canary instead of the hour that was asked for::

    apiVersion: gitops.nova.elotl.co/v1alpha1
    kind: RolloutStrategy
    metadata: {name: fleet}
    spec:
      waves:
      - name: canary
        clusterSelector: {matchLabels: {tier: canary}}
        maxParallel: 1                 # optional, overrides spec.maxParallel for this wave
        bakeTime: 30m                  # optional, overrides spec.bakeTime for this wave
      - name: prod
        clusterSelector: {matchExpressions: [{key: tier, operator: In, values: [prod]}]}
      maxParallel: 2                   # optional: clusters of a wave released at once (default: all)
      bakeTime: 5m                     # healthy this long before the next wave (default 5m)
      healthTimeout: 15m               # not healthy by then = failed (default 15m)
      onFailure: pause                 # pause | rollback (default pause)

The document is never rendered into a cluster. This module only parses; what the strategy does is
``nova_gitops.rollouts``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import Any, Final, Literal

from nova_gitops.api import durations, names, selectors
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import UNKNOWN_FIELD_REJECTED, Problem, SourceLocation, described, excerpt

API_GROUP: Final = "gitops.nova.elotl.co"
KIND: Final = "RolloutStrategy"
IMPLICIT_WAVE: Final = "others"
"""The name of the last wave, of the clusters no wave selects (reserved: no wave may take it)."""

DEFAULT_BAKE_TIME: Final = timedelta(minutes=5)
DEFAULT_HEALTH_TIMEOUT: Final = timedelta(minutes=15)
MAX_DURATION: Final = timedelta(days=30)

OnFailure = Literal["pause", "rollback"]
ON_FAILURE: Final[tuple[OnFailure, ...]] = ("pause", "rollback")

_TOP_FIELDS = ("apiVersion", "kind", "metadata", "spec")
_SPEC_FIELDS = ("waves", "maxParallel", "bakeTime", "healthTimeout", "onFailure")
_WAVE_FIELDS = ("name", "clusterSelector", "maxParallel", "bakeTime")
_UNKNOWN = "unknown field (a RolloutStrategy is read strictly: a misspelt field would fall back to a default)"
_DURATION = re.compile(r"(?:(\d{1,6})h)?(?:(\d{1,6})m)?(?:(\d{1,6})s)?")


@dataclass(frozen=True, slots=True)
class WaveSpec:
    """One wave as written: ``max_parallel``/``bake_time`` None means the strategy's."""

    name: str
    cluster_selector: selectors.LabelSelector
    max_parallel: int | None = None
    bake_time: timedelta | None = None


@dataclass(frozen=True, slots=True)
class RolloutStrategy:
    name: str
    waves: tuple[WaveSpec, ...] = ()
    max_parallel: int | None = None  # None: every changed cluster of a wave at once
    bake_time: timedelta = DEFAULT_BAKE_TIME
    health_timeout: timedelta = DEFAULT_HEALTH_TIMEOUT
    on_failure: OnFailure = "pause"
    location: SourceLocation | None = None


def is_strategy_document(group: str, kind: str) -> bool:
    return group == API_GROUP and kind == KIND


def parse_duration(text: str) -> timedelta | None:
    """``5m``, ``30s``, ``1h30m`` (Go's units h, m, s, in that order, whole numbers) → timedelta; None when
    ``text`` is not one. Fractions and days are refused: a duration is read by people reviewing a PR."""
    match = _DURATION.fullmatch(text)
    if match is None or not text:
        return None
    hours, minutes, seconds = (int(part) if part else 0 for part in match.groups())
    return timedelta(hours=hours, minutes=minutes, seconds=seconds)


def format_duration(duration: timedelta) -> str:
    """The inverse of ``parse_duration`` for whole seconds: ``1h30m``, ``5m``, ``0s`` (the flags' format,
    ``durations.format_seconds``, which writes whole seconds alike)."""
    return durations.format_seconds(int(duration.total_seconds()))


def parse_strategy(document: Document, problems: list[Problem]) -> RolloutStrategy | None:
    """Validate a RolloutStrategy document. Every problem is appended naming ``RolloutStrategy <name>`` and
    its field (``build_source_set`` points it at the field's line); None when the strategy cannot be used."""
    mark = len(problems)
    head = names.read_own_document(document, problems, _TOP_FIELDS, _SPEC_FIELDS)
    check, name, spec = head.check, head.name, head.spec
    waves = _waves(spec, check)
    max_parallel = _max_parallel(spec, "spec.maxParallel", check)
    bake_time = _duration(spec, "bakeTime", "spec", check, allow_zero=True)
    health_timeout = _duration(spec, "healthTimeout", "spec", check, allow_zero=False)
    on_failure = spec.get("onFailure", "pause")
    if on_failure not in ON_FAILURE:
        hint = names.suggestion(str(on_failure), ON_FAILURE)
        check.error("spec.onFailure", f"must be pause or rollback, got {described(on_failure)}{hint}")
    subject = f"{KIND} {name}" if name else KIND
    problems[mark:] = [  # our own kind: no CRD of Nova's to invoke
        replace(problem, subject=subject, message=problem.message.replace(UNKNOWN_FIELD_REJECTED, _UNKNOWN))
        for problem in problems[mark:]
    ]
    if not check.ok or name is None:
        return None
    return RolloutStrategy(
        name,
        waves,
        max_parallel,
        DEFAULT_BAKE_TIME if bake_time is None else bake_time,
        DEFAULT_HEALTH_TIMEOUT if health_timeout is None else health_timeout,
        "rollback" if on_failure == "rollback" else "pause",
        document.location,
    )


def _waves(spec: dict[Any, Any], check: names.Fields) -> tuple[WaveSpec, ...]:
    found: list[WaveSpec] = []
    seen: dict[str, int] = {}
    for index, raw in enumerate(check.sequence(spec.get("waves"), "spec.waves", "waves")):
        field = f"spec.waves[{index}]"
        item = check.mapping(raw, field, required=True)
        if item is None:
            continue
        check.unknown(item, field, _WAVE_FIELDS)
        name = check.text(item.get("name"), f"{field}.name", required=True)
        if name is not None:
            if not selectors.is_dns1123_label(name):
                check.error(
                    f"{field}.name", f"{excerpt(name)} is not a wave name: {names.DNS1123_LABEL_RULE}"
                )
            elif name == IMPLICIT_WAVE:
                check.error(
                    f"{field}.name", f"{IMPLICIT_WAVE!r} is the implicit last wave (clusters no wave selects)"
                )
            elif name in seen:
                check.error(f"{field}.name", f"duplicate wave {name!r}: also spec.waves[{seen[name]}]")
            else:
                seen[name] = index
        if "clusterSelector" not in item or item["clusterSelector"] is None:
            check.error(f"{field}.clusterSelector", "required: a label selector ({} selects every cluster)")
        selector = check.selector(item.get("clusterSelector"), f"{field}.clusterSelector")
        max_parallel = _max_parallel(item, f"{field}.maxParallel", check)
        bake_time = _duration(item, "bakeTime", field, check, allow_zero=True)
        if name is not None and selector is not None:
            found.append(WaveSpec(name, selector, max_parallel, bake_time))
    return tuple(found)


def _max_parallel(raw: dict[Any, Any], field: str, check: names.Fields) -> int | None:
    value = raw.get("maxParallel")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        check.error(field, f"must be a whole number of 1 or more, got {described(value)}")
        return None
    return value


def _duration(
    raw: dict[Any, Any], key: str, at: str, check: names.Fields, *, allow_zero: bool
) -> timedelta | None:
    value = raw.get(key)
    if value is None:
        return None
    field = f"{at}.{key}"
    duration = parse_duration(value) if isinstance(value, str) else None
    if duration is None:
        check.error(field, f"must be a duration such as 30s, 5m or 1h30m, got {described(value)}")
        return None
    if duration > MAX_DURATION or (not allow_zero and not duration):
        bound = "at most 720h" if duration > MAX_DURATION else "more than 0s"
        check.error(field, f"must be {bound}, got {value}")
        return None
    return duration
