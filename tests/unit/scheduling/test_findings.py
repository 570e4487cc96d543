"""``scheduling.findings``: which ``-n NAMESPACE`` would let a policy select unscheduled objects (issue 22).

Behaviours covered (a table): a hint names the namespaces a policy's namespace selector names
(``kubernetes.io/metadata.name`` by matchLabels or ``In``) or the source defines with matching labels, for
objects that name no namespace and that its resource selectors select; none for an object naming its own
namespace, a cluster-scoped one, one no resource selector picks, one a policy without a namespace selector
would have matched, or one unscheduled for want of room; the first policy by precedence gives it; at most
``MAX_HINT_NAMESPACES`` are named. ``Findings.warnings`` counts as ``validate`` does.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from nova_gitops.api import inputs, loading
from nova_gitops.api.objects import ObjectKey
from nova_gitops.scheduling import findings, planning
from nova_gitops.scheduling.plans import PlanSettings
from tests.builders import cluster, config_map, deployment, namespace, policy, source_set

Doc = dict[str, Any]


def untagged(name: str = "web", labels: dict[str, str] | None = None) -> Doc:
    document = config_map(name, labels=labels or {"app": "demo"})
    del document["metadata"]["namespace"]
    return document


def by_name(*names: str) -> Doc:
    return {
        "matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "In", "values": list(names)}]
    }


def hints(
    *documents: Doc, namespace_given: str | None = None
) -> list[tuple[str, tuple[str, ...], list[str]]]:
    source = source_set(cluster("c1"), *documents)
    if namespace_given is not None:  # -n: given to the load, as the commands give it
        text = yaml.dump_all([cluster("c1"), *documents], Dumper=yaml.CSafeDumper, sort_keys=False)
        loaded, _ = loading.load_documents("source.yaml", text)
        source = inputs.build_source_set(loaded, namespace=namespace_given)
    plan = planning.plan(source, settings=PlanSettings(namespace=namespace_given))
    told = findings.findings_of(source, plan)
    assert told.warnings == len(source.warnings) + len(plan.warnings) + len(plan.unscheduled)
    return [
        (hint.policy, hint.namespaces, [str(key) for key in hint.objects]) for hint in told.namespace_hints
    ]


WEB = ["ConfigMap/default/web"]


@pytest.mark.parametrize(
    ("documents", "expected"),
    [
        pytest.param(
            [
                policy("p", namespaceSelector={"matchLabels": {"kubernetes.io/metadata.name": "shop"}}),
                untagged(),
            ],
            [("p", ("shop",), WEB)],
            id="matchLabels-names-the-namespace",
        ),
        pytest.param(
            [policy("p", namespaceSelector=by_name("b", "a")), untagged()],
            [("p", ("a", "b"), WEB)],
            id="In-names-two",
        ),
        pytest.param(
            [
                policy("p", namespaceSelector={"matchLabels": {"team": "a"}}),
                namespace("shop", {"team": "a"}),
                namespace("other", {"team": "b"}),
                untagged(),
            ],
            [("p", ("shop",), WEB)],
            id="a-namespace-the-source-defines-with-its-labels",
        ),
        pytest.param(
            [policy("p", namespaceSelector=by_name("shop")), config_map("web", namespace="mine")],
            [],
            id="an-object-naming-its-namespace",
        ),
        pytest.param(
            [policy("p", namespaceSelector=by_name("shop")), untagged(labels={"app": "other"})],
            [],
            id="no-resource-selector-picks-it",
        ),
        pytest.param(
            [policy("p", namespaceSelector=by_name("shop")), {**namespace("cluster-wide", {"app": "x"})}],
            [],
            id="cluster-scoped",
        ),
        pytest.param(
            [
                policy("later", namespaceSelector=by_name("z"), priority=0),
                policy("first", namespaceSelector=by_name("a"), priority=5),
                untagged(),
            ],
            [("first", ("a",), WEB)],
            id="the-first-policy-by-precedence",
        ),
        pytest.param(
            [policy("p", namespaceSelector=by_name(*(f"ns-{n}" for n in range(8)))), untagged()],
            [("p", tuple(f"ns-{n}" for n in range(findings.MAX_HINT_NAMESPACES)), WEB)],
            id="at-most-five-named",
        ),
        pytest.param(
            [
                policy("p", namespaceSelector=by_name("default")),
                {**deployment("big", namespace="default", cpu="64", labels={"app": "demo"})},
            ],
            [],
            id="unscheduled-for-room-not-for-its-namespace",
        ),
    ],
)
def test_namespace_hints(documents: list[Doc], expected: list[Any]) -> None:
    assert hints(*documents) == expected


def test_a_wrong_n_still_gets_the_hint() -> None:
    documents = [policy("p", namespaceSelector=by_name("shop")), untagged()]
    assert hints(*documents, namespace_given="web") == [("p", ("shop",), ["ConfigMap/web/web"])]


def test_objects_alike_share_one_hint_sorted() -> None:
    documents = [policy("p", namespaceSelector=by_name("shop")), untagged("b"), untagged("a")]
    [(_, _, objects)] = hints(*documents)
    assert objects == ["ConfigMap/default/a", "ConfigMap/default/b"]
    assert ObjectKey("", "ConfigMap", "default", "a") < ObjectKey("", "ConfigMap", "default", "b")
