"""The Matcher a plan uses decides as the plain ``match`` does, though it evaluates policies once per kind of
object rather than once per object.

Behaviours covered:
- objects alike in kind, namespace and the labels selectors look at get the same policy, and each its own
  overlap warning naming it;
- objects that differ only in a label some selector names are matched apart;
- property: over generated policies (label, namespace and kind selectors, priorities) and objects, the
  Matcher's choice and warning equal ``match``'s for every object.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.scheduling import matching
from tests.builders import config_map, deployment, namespace, policy, source_set


def matcher_and_workloads(*documents: dict[str, Any]) -> tuple[matching.Matcher, list[Any], list[Any]]:
    sources = source_set(*documents)
    policies = sorted(sources.policies, key=matching.precedence)
    return matching.Matcher(policies, sources.namespace_labels), list(sources.workloads), policies


def test_alike_objects_share_a_policy_and_each_gets_its_own_overlap_warning() -> None:
    matcher, workloads, _ = matcher_and_workloads(
        policy("a", resourceSelectors={"labelSelectors": [{"matchLabels": {"team": "x"}}]}),
        policy("b", resourceSelectors={"labelSelectors": [{"matchLabels": {"team": "x"}}]}),
        deployment("one", labels={"team": "x", "app": "one"}),
        deployment("two", labels={"team": "x", "app": "two"}),
    )
    found = {manifest.name: matcher.match(manifest) for manifest in workloads}
    assert {name: match.policy.name for name, match in found.items() if match.policy} == {
        "one": "a",
        "two": "a",
    }
    assert "Deployment.apps/demo/one matches several" in (found["one"].overlap_warning or "")
    assert "Deployment.apps/demo/two matches several" in (found["two"].overlap_warning or "")


def test_objects_differing_in_a_selected_label_are_matched_apart() -> None:
    matcher, workloads, _ = matcher_and_workloads(
        policy("gold", resourceSelectors={"labelSelectors": [{"matchLabels": {"tier": "gold"}}]}),
        policy(
            "any",
            resourceSelectors={
                "labelSelectors": [{"matchExpressions": [{"key": "tier", "operator": "Exists"}]}]
            },
        ),
        deployment("first", labels={"tier": "gold"}),
        deployment("second", labels={"tier": "silver"}),
        deployment("third", labels={"other": "gold"}),
    )
    chosen = {manifest.name: matcher.match(manifest).policy for manifest in workloads}
    assert {name: found.name if found else None for name, found in chosen.items()} == {
        "first": "any",
        "second": "any",
        "third": None,
    }


LABELS = st.dictionaries(st.sampled_from(["app", "team", "tier"]), st.sampled_from(["x", "y"]), max_size=3)


@st.composite
def sources(draw: st.DrawFn) -> list[dict[str, Any]]:
    documents: list[dict[str, Any]] = [namespace("ns1", {"env": "prod"}), namespace("ns2")]
    for index in range(draw(st.integers(1, 5))):
        spec: dict[str, Any] = {
            "priority": draw(st.integers(0, 2)),
            "resourceSelectors": {
                "labelSelectors": [{"matchLabels": labels} for labels in draw(st.lists(LABELS, max_size=2))]
            },
        }
        if draw(st.booleans()):
            spec["resourceSelectors"]["kinds"] = [{"group": "apps", "version": "v1", "kind": "Deployment"}]
        if draw(st.booleans()):
            spec["namespaceSelector"] = {"matchLabels": {"env": "prod"}}
        documents.append(policy(f"p{index}", **spec))
    for index in range(draw(st.integers(1, 10))):
        labels = draw(LABELS)
        where = draw(st.sampled_from(["ns1", "ns2", "ns3"]))
        maker = draw(st.sampled_from([deployment, config_map]))
        documents.append(maker(f"w{index}", namespace=where, labels=labels or {"none": "x"}))
    return documents


@settings(max_examples=100, deadline=None)
@given(sources())
def test_the_matcher_decides_as_match_does(documents: list[dict[str, Any]]) -> None:
    sources_ = source_set(*documents)
    policies = sorted(sources_.policies, key=matching.precedence)
    matcher = matching.Matcher(policies, sources_.namespace_labels)
    for manifest in sources_.workloads:
        assert matcher.match(manifest) == matching.match(manifest, policies, sources_.namespace_labels)
