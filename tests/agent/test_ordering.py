"""Apply order: CRDs first, then Namespaces, cluster RBAC, ServiceAccounts, Secrets/ConfigMaps, Services,
workloads and unknown kinds, admission webhooks last; deletes in exactly the reverse order; the order is total
and does not depend on the input order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from nova_agent import ordering
from nova_agent.resources import ObjectRef

KINDS_IN_ORDER = [
    ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
    ("v1", "Namespace"),
    ("rbac.authorization.k8s.io/v1", "ClusterRole"),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"),
    ("v1", "ServiceAccount"),
    ("v1", "ConfigMap"),
    ("v1", "Service"),
    ("apps/v1", "Deployment"),
    ("admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration"),
]


def test_apply_order_follows_the_dependency_table() -> None:
    refs = [ObjectRef(api_version, kind, "", "x") for api_version, kind in reversed(KINDS_IN_ORDER)]
    assert [ref.kind for ref in ordering.apply_order(refs)] == [kind for _, kind in KINDS_IN_ORDER]


def test_custom_resources_rank_with_workloads_after_services() -> None:
    widget = ObjectRef("example.com/v1", "Widget", "ns", "w")
    service = ObjectRef("v1", "Service", "ns", "s")
    webhook = ObjectRef("admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration", "", "h")
    assert ordering.apply_order([webhook, widget, service]) == [service, widget, webhook]


refs_strategy = st.lists(
    st.builds(
        ObjectRef,
        st.sampled_from([v for v, _ in KINDS_IN_ORDER] + ["example.com/v1"]),
        st.sampled_from([k for _, k in KINDS_IN_ORDER] + ["Widget", "Secret", "Job"]),
        st.sampled_from(["", "a", "b"]),
        st.sampled_from(["x", "y", "z"]),
    ),
    unique=True,
    max_size=30,
)


@settings(max_examples=100)
@given(refs_strategy, st.randoms())
def test_order_is_total_and_deletes_reverse_it(refs: list[ObjectRef], random: object) -> None:
    shuffled = list(refs)
    random.shuffle(shuffled)  # type: ignore[attr-defined]
    order = ordering.apply_order(refs)
    assert ordering.apply_order(shuffled) == order
    assert ordering.delete_order(shuffled) == list(reversed(order))
    ranks = [ordering.rank_of(ref.kind) for ref in order]
    assert ranks == sorted(ranks)
