"""Desired state from a commit's files: kustomization.yaml and non-manifest files are skipped; every problem
(invalid YAML with its line, missing fields, an object labelled for another cluster, a duplicate) is reported;
objects without the target-cluster label get it; multi-document files work."""

from __future__ import annotations

from nova_agent.desired import load_desired
from nova_agent.gitrepos import TreeFile
from nova_gitops.api import labels as nova_labels


def test_problems_are_all_collected() -> None:
    files = [
        TreeFile("clusters/c1/kustomization.yaml", b"resources: [a.yaml]\n"),
        TreeFile("clusters/c1/README.md", b"# hi\n"),
        TreeFile("clusters/c1/ns/bad.yaml", b"kind: ConfigMap\nmetadata: {name: [\n"),
        TreeFile("clusters/c1/ns/noname.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {}\n"),
        TreeFile(
            "clusters/c1/ns/other.yaml",
            b"apiVersion: v1\nkind: ConfigMap\n"
            b"metadata: {name: o, labels: {nova.elotl.co/target-cluster: c2}}\n",
        ),
        TreeFile(
            "clusters/c1/ns/a.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\n"
        ),
        TreeFile(
            "clusters/c1/ns/a2.yaml", b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\n"
        ),
    ]
    objects, problems = load_desired(files, "c1")
    assert [o.ref.name for o in objects] == ["a"]
    assert len(problems) == 4
    assert any(p.startswith("clusters/c1/ns/bad.yaml:3: not valid YAML") for p in problems)
    assert any("missing metadata.name" in p for p in problems)
    assert any("labelled for cluster 'c2'" in p for p in problems)
    assert any("also defined in clusters/c1/ns/a.yaml" in p for p in problems)


def test_label_is_added_and_multi_documents_are_read() -> None:
    data = (
        b"apiVersion: v1\nkind: Namespace\nmetadata: {name: a}\n---\n"
        b"apiVersion: v1\nkind: Namespace\nmetadata: {name: b}\n"
    )
    objects, problems = load_desired([TreeFile("clusters/c1/_cluster/ns.yaml", data)], "c1")
    assert problems == [] and [o.ref.name for o in objects] == ["a", "b"]
    assert all(o.body["metadata"]["labels"][nova_labels.TARGET_CLUSTER] == "c1" for o in objects)
