"""Secret ``data``/``stringData`` shapes and cluster-owned Namespaces, validated in the source.

Behaviours covered:
- ``data`` values must be base64 text (line breaks allowed), ``stringData`` values text, both mappings keyed
  by Secret keys (``[-._a-zA-Z0-9]+``, at most 253 characters, not ``.``/``..``); each defect is an error at
  the field's own line;
- no problem ever shows a Secret's value, or a piece of it;
- a valid Secret, an empty ``data`` value, and a key with dots and dashes pass;
- a Namespace object named ``default``, ``kube-system``, ``kube-public`` or ``kube-node-lease`` is an error
  at file:line saying the namespace belongs to the cluster; objects in those namespaces are still placed and
  no Namespace object of them is rendered (neither followed nor explicit).
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from nova_gitops.api import inputs, loading
from nova_gitops.errors import InputError
from nova_gitops.rendering import renders
from nova_gitops.rendering.reports import SourceInfo
from tests.builders import cluster, config_map, namespace, plan, policy

SECRET_VALUE = "hunter2-is-the-password"


def secret(**fields: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "demo"}, **fields}


def problems_of(*documents: dict[str, Any]) -> list[str]:
    text = yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False)
    loaded, load_problems = loading.load_documents("f.yaml", text)
    assert load_problems == []
    try:
        inputs.build_source_set(loaded, texts={"f.yaml": text})
    except InputError as error:
        return [str(problem) for problem in error.problems if problem.is_error]
    return []


def test_a_valid_secret_passes() -> None:
    assert problems_of(secret(data={"tls.crt": "aGVs\nbG8=", "a-b_c": ""}, stringData={"x": "y"})) == []


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        (
            {"data": {"password": SECRET_VALUE}},
            "f.yaml:7: Secret s: data.password: the value is not valid base64",
        ),
        (
            {"data": {"n": 12345}},
            "f.yaml:7: Secret s: data.n: the value must be text, got a number (value not shown)",
        ),
        (
            {"stringData": {"x": [SECRET_VALUE]}},
            "f.yaml:7: Secret s: stringData.x: the value must be text, got a list",
        ),
        ({"data": {"bad key": "aGk="}}, "f.yaml:7: Secret s: data[bad key]: invalid Secret key 'bad key'"),
        ({"data": {"..": "aGk="}}, "f.yaml:7: Secret s: data[..]: invalid Secret key '..': must not be"),
        ({"data": {"k" * 254: "aGk="}}, "a Secret key must be at most 253 characters, this one has 254"),
        ({"data": {7: "aGk="}}, "f.yaml:7: Secret s: data[7]: a Secret key must be text, got a number"),
        ({"data": SECRET_VALUE}, "f.yaml:6: Secret s: data: must be a mapping of key to value, got str"),
        (
            {"stringData": [SECRET_VALUE]},
            "f.yaml:6: Secret s: stringData: must be a mapping of key to value, got a",
        ),
    ],
)
def test_each_defect_is_an_error_that_never_shows_the_value(fields: dict[str, Any], expected: str) -> None:
    [problem] = problems_of(secret(**fields))
    assert expected in problem
    assert SECRET_VALUE not in problem and "12345" not in problem


@pytest.mark.parametrize("name", ["default", "kube-system", "kube-public", "kube-node-lease"])
def test_a_cluster_owned_namespace_in_the_source_is_an_error(name: str) -> None:
    assert problems_of(namespace(name)) == [
        f"f.yaml:4: Namespace {name}: metadata.name: namespace {name!r} belongs to the cluster: nova-gitops "
        "never applies or deletes it, so the source must not define it (remove this Namespace; "
        "a policy's namespaceSelector "
        f"sees it with only the label kubernetes.io/metadata.name={name})"
    ]


def test_objects_in_cluster_owned_namespaces_are_placed_without_their_namespace() -> None:
    result = plan(
        cluster("c1"),
        policy("p"),
        config_map("in-default", namespace="default"),
        config_map("in-system", namespace="kube-system"),
    )
    files = renders.render(result, SourceInfo("src", None)).files
    placed = sorted(path for path in files if path.startswith("clusters/c1/") and path.endswith(".yaml"))
    assert "clusters/c1/default/configmap-in-default.yaml" in placed
    assert "clusters/c1/kube-system/configmap-in-system.yaml" in placed
    assert not [path for path in placed if "/namespace-" in path], placed
