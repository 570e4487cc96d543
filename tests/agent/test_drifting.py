"""The pure drift decisions (nova_agent.drifting): what departs from the manifest, what a dry run would
change, and the replicas an autoscaler owns. These are the rules that make an in-sync pass free and a
difference of spelling (a quantity the server normalised) not drift."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from nova_agent.drifting import (
    DRIFT_ANNOTATION,
    MAX_FIELDS_LISTED,
    DriftedObject,
    DriftMode,
    changed_paths,
    comparable_manifest,
    departures,
    mode_for,
    with_live_replicas,
)
from nova_agent.resources import ObjectRef

MANIFEST: dict[str, Any] = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
    "spec": {
        "replicas": 2,
        "template": {"spec": {"containers": [{"name": "app", "ports": [{"containerPort": 80}]}]}},
    },
}


def live_of(manifest: dict[str, Any], **spec: Any) -> dict[str, Any]:
    """The manifest as a server returns it: server metadata, defaults, status, plus ``spec`` changes."""
    live: dict[str, Any] = {
        **manifest,
        "metadata": {**manifest["metadata"], "uid": "u", "resourceVersion": "7", "generation": 3},
        "spec": {**manifest["spec"], "progressDeadlineSeconds": 600, **spec},
        "status": {"replicas": 2},
    }
    live["spec"]["template"] = {
        "spec": {"containers": [{"name": "app", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}
    }
    return live


def test_defaults_server_metadata_and_status_are_not_departures() -> None:
    assert list(departures(MANIFEST, live_of(MANIFEST))) == []


@pytest.mark.parametrize(
    ("live_spec", "expected"),
    [
        ({"replicas": 5}, ["spec.replicas"]),
        ({"replicas": "2"}, ["spec.replicas"]),  # type-strict: the server would answer 2, not "2"
        ({"replicas": True}, ["spec.replicas"]),
    ],
)
def test_a_changed_value_departs_at_its_path(live_spec: dict[str, Any], expected: list[str]) -> None:
    assert list(departures(MANIFEST, live_of(MANIFEST, **live_spec))) == expected


def test_a_list_of_another_length_departs_as_a_whole() -> None:
    live = live_of(MANIFEST)
    live["spec"]["template"]["spec"]["containers"].append({"name": "sidecar"})
    assert list(departures(MANIFEST, live)) == ["spec.template.spec.containers"]


def test_labels_and_annotations_depart_but_other_metadata_does_not() -> None:
    live = live_of(MANIFEST)
    live["metadata"]["labels"] = {"app": "other", "extra": "ok"}
    assert list(departures(MANIFEST, live)) == ["metadata.labels.app"]


def test_a_secrets_string_data_compares_as_the_data_the_server_keeps() -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"k": "hi"}}
    live = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "aGk="}}
    assert list(departures(comparable_manifest(secret), live)) == []
    live["data"]["k"] = "b3RoZXI="
    assert list(departures(comparable_manifest(secret), live)) == ["data.k"]


def test_what_a_dry_run_would_change_leaves_out_server_metadata_and_status() -> None:
    live = live_of(MANIFEST, replicas=5)
    after = live_of(MANIFEST)
    after["metadata"] = {**after["metadata"], "resourceVersion": "8", "generation": 4, "managedFields": []}
    after["status"] = {"replicas": 5}
    assert changed_paths(after, live) == ["spec.replicas"]
    assert changed_paths(live, live) == []


def test_a_long_list_of_changed_fields_is_cut_and_counted() -> None:
    live = {"data": {f"k{index:03}": "a" for index in range(30)}}
    after = {"data": {f"k{index:03}": "b" for index in range(30)}}
    found = changed_paths(after, live)
    assert len(found) == MAX_FIELDS_LISTED + 1 and found[-1] == f"... and {30 - MAX_FIELDS_LISTED} more"


def test_an_autoscaled_object_keeps_its_live_count_and_a_new_one_starts_at_gits() -> None:
    assert with_live_replicas(MANIFEST, live_of(MANIFEST, replicas=7))["spec"]["replicas"] == 7
    assert with_live_replicas(MANIFEST, None) is MANIFEST
    assert MANIFEST["spec"]["replicas"] == 2  # the manifest itself is not changed


@pytest.mark.parametrize(
    ("annotation", "default", "expected"),
    [
        (None, DriftMode.CORRECT, DriftMode.CORRECT),
        ("ignore", DriftMode.CORRECT, DriftMode.OFF),
        ("warn", DriftMode.CORRECT, DriftMode.WARN),
        ("correct", DriftMode.OFF, DriftMode.CORRECT),
        ("nonsense", DriftMode.WARN, DriftMode.WARN),
    ],
)
def test_the_annotation_wins_over_the_agents_mode(
    annotation: str | None, default: DriftMode, expected: DriftMode
) -> None:
    body = {"metadata": {"annotations": {DRIFT_ANNOTATION: annotation}}} if annotation else {}
    assert mode_for(body, default) is expected


def test_a_drifted_object_is_reported_with_its_fields_and_first_sighting() -> None:
    found = DriftedObject(
        ObjectRef("v1", "ConfigMap", "shop", "settings"),
        ("data.v",),
        datetime(2026, 1, 1, tzinfo=UTC),
        DriftMode.CORRECT,
        corrected=True,
    )
    assert found.as_dict() == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "namespace": "shop",
        "name": "settings",
        "fields": ["data.v"],
        "firstSeen": "2026-01-01T00:00:00Z",
        "action": "correct",
        "corrected": True,
    }
