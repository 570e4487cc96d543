"""Behaviours of the YAML emitter: what is dumped loads back equal."""

from __future__ import annotations

import yaml

from nova_gitops.rendering import emitting


def test_round_trip_of_a_small_manifest() -> None:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "true", "b": "x\ny\n"}}
    assert yaml.load(emitting.dump(obj), Loader=yaml.CSafeLoader) == obj
