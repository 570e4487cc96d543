"""``metadata.ownerReferences`` and ``metadata.finalizers`` are never rendered (issue 21 item 1,
docs/design.md §4).

An owner reference names its owner by uid: a relation between two objects of one cluster, which on any other
cluster (or once that owner is gone) makes the garbage collector delete the object; a finalizer holds every
deletion until a controller that may not exist removes it. Both come into sources with manifests copied from
``kubectl get -o yaml``. Behaviours covered:

- the rendered object has neither field, and the source body is not mutated;
- a render whose source sets them says so in ONE warning, not one per object: how many objects, the first
  few by name, pointed at the first one's field (file:line); a source without them has no such warning;
- a policy's override cannot put them back (``metadata.ownerReferences``, or a whole ``metadata``): the
  object's render fails naming the field, as any override that cannot be applied.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from nova_gitops.api import fieldpaths, objects
from nova_gitops.api.objects import Manifest
from nova_gitops.api.policies import FieldOverride
from nova_gitops.api.problems import Severity, SourceLocation
from nova_gitops.rendering import manifests
from nova_gitops.scheduling.planparts import ClusterCopy
from nova_gitops.scheduling.plans import PlanSettings
from nova_gitops.workflows import rendering
from tests.builders import cluster, deployment, policy

OWNER = {
    "apiVersion": "apps/v1",
    "kind": "ReplicaSet",
    "name": "web-5d4f",
    "uid": "0c1e-dead",
    "controller": True,
}


def _with_relations(body: dict[str, Any], *, finalizers: bool = True) -> dict[str, Any]:
    body["metadata"]["ownerReferences"] = [dict(OWNER)]
    if finalizers:
        body["metadata"]["finalizers"] = ["example.com/never-released"]
    return body


def _render(tmp_path: Path, *documents: dict[str, Any]) -> rendering.DirectoryRender:
    source = tmp_path / "src"
    source.mkdir()
    text = yaml.dump_all(documents, Dumper=yaml.CSafeDumper, sort_keys=False)
    (source / "source.yaml").write_text(text, encoding="utf-8")
    return rendering.render_to_directory(source, tmp_path / "out", settings=PlanSettings())


def _relation_warnings(result: rendering.DirectoryRender) -> list[str]:
    return [
        str(problem)
        for problem in result.source_warnings
        if "ownerReferences" in problem.message or "finalizers" in problem.message
    ]


def test_strip_server_fields_drops_owner_references_and_finalizers_without_mutating() -> None:
    body = _with_relations(deployment("web"))
    before = copy.deepcopy(body)
    stripped = objects.strip_server_fields(body)
    assert "ownerReferences" not in stripped["metadata"] and "finalizers" not in stripped["metadata"]
    assert stripped["metadata"]["name"] == "web" and stripped["spec"] == body["spec"]
    assert body == before


def test_a_render_drops_them_and_says_so_once(tmp_path: Path) -> None:
    related = [_with_relations(deployment(f"web-{i}"), finalizers=i % 2 == 0) for i in range(7)]
    result = _render(tmp_path, cluster("c1"), policy("p"), deployment("plain"), *related)
    for i in range(7):
        rendered = yaml.safe_load((tmp_path / f"out/clusters/c1/demo/deployment-web-{i}.yaml").read_text())
        assert "ownerReferences" not in rendered["metadata"] and "finalizers" not in rendered["metadata"]
    [warning] = _relation_warnings(result)
    [problem] = [p for p in result.source_warnings if str(p) == warning]
    assert problem.severity is Severity.WARNING
    assert problem.location.file == "source.yaml" and problem.field == "metadata.ownerReferences"
    assert "7 objects" in warning and "not rendered" in warning
    assert "Deployment.apps/demo/web-0" in warning and "and 2 more" in warning
    first_field = next(
        number
        for number, line in enumerate((tmp_path / "src/source.yaml").read_text().splitlines(), 1)
        if "ownerReferences" in line
    )
    assert problem.location.line == first_field


def test_a_source_without_them_has_no_such_warning(tmp_path: Path) -> None:
    result = _render(tmp_path, cluster("c1"), policy("p"), deployment("plain"))
    assert _relation_warnings(result) == []


@pytest.mark.parametrize(
    ("path", "value", "field"),
    [
        ("metadata.ownerReferences", [OWNER], "metadata.ownerReferences"),
        ("metadata.finalizers", ["example.com/never-released"], "metadata.finalizers"),
        (
            "metadata",
            {"name": "web", "namespace": "demo", "ownerReferences": [OWNER]},
            "metadata.ownerReferences",
        ),
    ],
)
def test_an_override_cannot_set_them_either(path: str, value: Any, field: str) -> None:
    body = deployment("web")
    source = Manifest(body, SourceLocation("source.yaml", 1), "apps/v1", "Deployment", "web", "demo", True)
    copy_ = ClusterCopy("c1", overrides=(FieldOverride(fieldpaths.parse(path), value),))
    with pytest.raises(manifests.ObjectRenderError) as raised:
        manifests.render_object(source, copy_, None, PlanSettings())
    [failure] = raised.value.failures
    assert failure.field == field and "never rendered" in failure.message
