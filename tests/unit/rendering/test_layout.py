"""Layout of the rendered repository (docs/design.md §4).

Behaviours covered:
- namespaced objects go to ``clusters/<c>/<ns>/<kind>-<name>.yaml``, cluster-scoped ones to ``_cluster/``;
  kinds are lower-cased;
- a clash of kind+name between API groups in one directory adds the group to the non-core file names, and
  only inside that directory;
- names that could escape the output directory ('..', '/', NUL, empty) raise ValueError;
- file names longer than the file system allows are shortened deterministically and stay distinct; a
  group's file keeps 16 hex digits of the SHA-256 of the whole group name;
- the kustomization lists every file below the cluster directory, relative, sorted, never itself.
"""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.rendering import layout
from nova_gitops.scheduling import grouping


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("wlc-1", "Deployment", "apps", "web", "api", False), "clusters/wlc-1/web/deployment-api.yaml"),
        (
            ("wlc-1", "ClusterRole", "rbac.authorization.k8s.io", "", "view", False),
            "clusters/wlc-1/_cluster/clusterrole-view.yaml",
        ),
        (
            ("wlc-1", "Event", "events.k8s.io", "ns", "e", True),
            "clusters/wlc-1/ns/event.events.k8s.io-e.yaml",
        ),
        (("wlc-1", "Event", "", "ns", "e", True), "clusters/wlc-1/ns/event-e.yaml"),
        (("c", "ConfigMap", "", "ns", "system:x", False), "clusters/c/ns/configmap-system:x.yaml"),
    ],
)
def test_object_path(args: tuple[str, str, str, str, str, bool], expected: str) -> None:
    assert layout.object_path(*args) == expected


@pytest.mark.parametrize(
    "args",
    [
        ("..", "Deployment", "apps", "ns", "web"),
        ("c/d", "Deployment", "apps", "ns", "web"),
        ("c", "Deployment", "apps", "..", "web"),
        ("c", "Deployment", "apps", "ns", "a/b"),
        ("c", "Deployment", "apps", "ns", "a\x00b"),
        ("c", "Deployment", "apps", "ns", ""),
        ("", "Deployment", "apps", "ns", "web"),
        ("c", "", "apps", "ns", "web"),
        ("c", "Dep/loyment", "apps", "ns", "web"),
        ("c", "Deployment", "apps", "ns", "."),
    ],
)
def test_unsafe_segments_are_refused(args: tuple[str, str, str, str, str]) -> None:
    with pytest.raises(ValueError, match="file path"):
        layout.object_path(*args, clash=False)


def test_unsafe_group_is_refused_when_it_becomes_part_of_a_name() -> None:
    with pytest.raises(ValueError, match="API group"):
        layout.object_path("c", "Event", "x/../y", "ns", "e", clash=True)


def test_clashes_are_per_directory_and_ignore_kind_case() -> None:
    entries = [
        ("ns", "Event", "", "e"),
        ("ns", "Event", "events.k8s.io", "e"),
        ("other", "Event", "events.k8s.io", "e"),  # alone in its directory: no clash
        ("ns", "Widget", "a.example.com", "w"),
        ("ns", "widget", "b.example.com", "w"),
        ("ns", "Widget", "a.example.com", "v"),
    ]
    assert layout.clashing_groups(entries) == {
        ("ns", "Event", "", "e"),
        ("ns", "Event", "events.k8s.io", "e"),
        ("ns", "Widget", "a.example.com", "w"),
        ("ns", "widget", "b.example.com", "w"),
    }


def test_long_names_are_shortened_with_a_hash_and_stay_distinct() -> None:
    long_a = "a" * 250 + "x"
    long_b = "a" * 250 + "y"
    path_a = layout.object_path("c", "ClusterRoleBinding", "rbac.authorization.k8s.io", "", long_a, True)
    path_b = layout.object_path("c", "ClusterRoleBinding", "rbac.authorization.k8s.io", "", long_b, True)
    name_a = path_a.rsplit("/", 1)[1]
    assert len(name_a.encode()) <= 255
    assert name_a.endswith(".yaml")
    assert path_a != path_b
    assert path_a == layout.object_path(
        "c", "ClusterRoleBinding", "rbac.authorization.k8s.io", "", long_a, True
    )


def test_kustomization_lists_files_sorted_and_relative() -> None:
    document = layout.kustomization(
        ["web/service-b.yaml", "_cluster/namespace-web.yaml", "kustomization.yaml"]
    )
    assert document == {
        "apiVersion": "kustomize.config.k8s.io/v1beta1",
        "kind": "Kustomization",
        "resources": ["_cluster/namespace-web.yaml", "web/service-b.yaml"],
    }
    assert layout.kustomization([])["resources"] == []


_DNS = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?", fullmatch=True)


@settings(max_examples=100)
@given(
    cluster=_DNS,
    namespace=st.one_of(st.just(""), _DNS),
    kind=st.from_regex(r"[A-Z][a-zA-Z]{0,15}", fullmatch=True),
    name=_DNS,
)
def test_paths_stay_inside_the_cluster_directory(cluster: str, namespace: str, kind: str, name: str) -> None:
    path = layout.object_path(cluster, kind, "example.com", namespace, name, clash=False)
    parts = path.split("/")
    assert parts[:2] == ["clusters", cluster]
    assert len(parts) == 4
    assert ".." not in parts
    assert parts[2] == (namespace or "_cluster")
    assert parts[3] == f"{kind.lower()}-{name}.yaml"


LONGEST_POLICY = ("p" * 63 + ".") * 3 + "q" * 61  # 253 characters, the longest a Kubernetes name may be


def test_a_long_group_name_keeps_a_digest_of_the_whole_name() -> None:
    group = f"{LONGEST_POLICY}-0a1b2c3d"
    file_name = layout.group_file_name(group)
    assert len(file_name.encode()) == 255
    assert file_name == f"{group[:233]}-{hashlib.sha256(group.encode()).hexdigest()[:16]}.yaml"
    assert layout.group_file_name("p-0a1b2c3d") == "p-0a1b2c3d.yaml"  # a name that fits is kept whole


def test_groups_of_a_longest_policy_name_get_files_of_their_own() -> None:
    # Two label values whose groups' files shared one name when 32 bits told them apart (found by search).
    first, second = (f"{LONGEST_POLICY}-{grouping.fnv1_32(value)}" for value in ("v51707", "v132617"))
    assert layout.group_file(LONGEST_POLICY, first) != layout.group_file(LONGEST_POLICY, second)
