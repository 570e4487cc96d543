"""``-n NS`` as ``kubectl apply -n``: the namespace of namespaced objects that name none (issue 10).

Behaviours covered:
- a namespaced object without ``metadata.namespace`` lives in NS; an explicit namespace always wins;
- cluster-scoped kinds (built-in, CRD-declared) are untouched by NS;
- a custom resource of a kind with no CRD in the source and no namespace: namespaced in NS when ``-n`` is
  given; without ``-n`` namespaced in ``default`` unless its group serves only cluster-scoped kinds; the
  manifest says which was assumed (``scope_note``, shown by ``explain``);
- the rendered copy carries the resolved namespace;
- an invalid NS is refused before anything is read.
"""

from __future__ import annotations

from typing import Any

import pytest

from nova_gitops.api import inputs, kinds
from nova_gitops.api.objects import Document
from nova_gitops.api.problems import SourceLocation
from tests.builders import cluster, policy


def document(body: dict[str, Any], line: int = 1) -> Document:
    return Document(body, SourceLocation("source.yaml", line))


def obj(api_version: str, kind: str, name: str, namespace: str | None = None) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata}


def built(*bodies: dict[str, Any], namespace: str | None = None) -> dict[str, tuple[str, bool, str | None]]:
    source = inputs.build_source_set([document(b, i) for i, b in enumerate(bodies, 1)], namespace=namespace)
    return {m.name: (m.namespace, m.namespaced, m.scope_note) for m in source.workloads}


def test_objects_without_a_namespace_go_to_the_given_one_and_explicit_namespaces_win() -> None:
    found = built(
        obj("apps/v1", "Deployment", "web"),
        obj("v1", "ConfigMap", "settings", namespace="other"),
        namespace="shop",
    )
    assert found["web"] == ("shop", True, None)
    assert found["settings"] == ("other", True, None)


def test_without_a_namespace_option_the_default_namespace_is_default() -> None:
    assert built(obj("apps/v1", "Deployment", "web"))["web"][0] == "default"


def test_cluster_scoped_kinds_are_untouched() -> None:
    crd = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "names": {"kind": "Gadget", "plural": "gadgets"},
            "scope": "Cluster",
        },
    }
    found = built(
        obj("rbac.authorization.k8s.io/v1", "ClusterRole", "reader"),
        obj("v1", "Namespace", "shop"),
        obj("example.com/v1", "Gadget", "g"),
        crd,
        namespace="shop",
    )
    assert found["reader"] == ("", False, None)
    assert found["shop"] == ("", False, None)
    assert found["g"] == ("", False, None)


def test_a_custom_resource_of_unknown_kind_is_namespaced_in_the_given_namespace() -> None:
    namespace, namespaced, note = built(obj("example.com/v1", "Widget", "w"), namespace="shop")["w"]
    assert (namespace, namespaced) == ("shop", True)
    assert note is not None and "namespaced assumed" in note and "--namespace" in note


def test_a_custom_resource_of_unknown_kind_without_n_is_namespaced_unless_its_group_is_cluster_scoped() -> (
    None
):
    found = built(
        obj("example.com/v1", "Widget", "w"),
        obj("constraints.gatekeeper.sh/v1beta1", "K8sRequiredLabels", "must-have-owner"),
    )
    assert found["w"][:2] == ("default", True)
    assert found["must-have-owner"][:2] == ("", False)
    note = found["must-have-owner"][2]
    assert note is not None and "cluster-scoped assumed" in note


def test_well_known_cluster_scoped_custom_kinds_stay_cluster_scoped_with_n() -> None:
    found = built(obj("cert-manager.io/v1", "ClusterIssuer", "letsencrypt"), namespace="shop")
    assert found["letsencrypt"] == ("", False, None)


@pytest.mark.parametrize(
    ("has_namespace", "given", "group", "expected"),
    [
        (True, False, "example.com", kinds.Scope(True, "namespace")),
        (False, True, "example.com", kinds.Scope(True, "-n")),
        (False, False, "example.com", kinds.Scope(True, "assumed")),
        (False, False, "templates.gatekeeper.sh", kinds.Scope(False, "group")),
    ],
)
def test_scope_of_an_unknown_kind(
    has_namespace: bool, given: bool, group: str, expected: kinds.Scope
) -> None:
    assert kinds.scope_of(group, "Thing", has_namespace, {}, namespace_given=given) == expected


def test_the_rendered_copy_names_the_given_namespace() -> None:
    from nova_gitops.rendering import renders
    from nova_gitops.rendering.reports import SourceInfo
    from nova_gitops.scheduling import planning
    from nova_gitops.scheduling.plans import PlanSettings

    bodies = [cluster("c1"), policy("all", resourceSelectors={}), obj("v1", "ConfigMap", "settings")]
    source = inputs.build_source_set([document(b, i) for i, b in enumerate(bodies, 1)], namespace="shop")
    plan = planning.plan(source, settings=PlanSettings(namespace="shop"))
    tree = renders.render(plan, SourceInfo("src", None))
    assert "clusters/c1/shop/configmap-settings.yaml" in tree.files
    assert b"namespace: shop" in tree.files["clusters/c1/shop/configmap-settings.yaml"]
    assert "clusters/c1/_cluster/namespace-shop.yaml" in tree.files


def test_an_invalid_namespace_is_refused() -> None:
    with pytest.raises(ValueError, match="DNS-1123"):
        inputs.build_source_set([], namespace="Not_A_Label")
