"""Desired state from a commit's files: kustomization.yaml and non-manifest files are skipped; every problem
(invalid YAML with its line, missing fields, an object labelled for another cluster, a duplicate) is reported;
objects without the target-cluster label get it; multi-document files work; YAML alias expansion is bounded
(a "billion laughs" file, or more aliases than the renderer allows, is a problem naming the file and line, and
a pass over such a render is refused without applying anything)."""

from __future__ import annotations

import pytest

from nova_agent.desired import load_desired
from nova_agent.gitrepos import TreeFile
from nova_agent.running import EXIT_REFUSED
from nova_gitops.api import labels as nova_labels
from tests.agent.conftest import AgentFactory
from tests.agent.gitrepos_helpers import RenderedRepo

HEADER = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: bomb, namespace: ns}\n"


def billion_laughs(levels: int = 9) -> str:
    """The classic alias bomb: each level holds nine aliases of the one before (9**levels strings)."""
    lines = ['l0: &l0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for level in range(1, levels + 1):
        lines.append(f"l{level}: &l{level} [" + ",".join([f"*l{level - 1}"] * 9) + "]")
    return HEADER + "data:\n" + "".join(f"  {line}\n" for line in lines)


def many_aliases(count: int) -> str:
    return HEADER + "data:\n  a: &a x\n" + "".join(f"  k{i}: *a\n" for i in range(count))


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
    assert any(p.startswith("clusters/c1/ns/bad.yaml:3: invalid YAML") for p in problems)
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


@pytest.mark.parametrize(
    ("text", "refused"),
    [
        (billion_laughs(), True),
        (many_aliases(65), True),
        (many_aliases(3), False),
    ],
)
def test_alias_expansion_is_bounded(text: str, refused: bool) -> None:
    objects, problems = load_desired([TreeFile("clusters/c1/ns/bomb.yaml", text.encode())], "c1")
    if refused:
        assert objects == [] and len(problems) == 1
        assert problems[0].startswith("clusters/c1/ns/bomb.yaml:1: ") and "YAML aliases" in problems[0]
    else:
        assert problems == [] and objects[0].body["data"]["k2"] == "x"


def test_a_render_with_an_alias_bomb_is_refused(rendered: RenderedRepo, make_agent: AgentFactory) -> None:
    rendered.commit({"clusters/c1/ns/bomb.yaml": billion_laughs()})
    outcome = make_agent(report_enabled=False).pass_once()
    assert outcome.exit_code == EXIT_REFUSED
    assert "is not applied" in outcome.message and "YAML aliases" in outcome.message


def test_owner_references_and_finalizers_are_never_part_of_the_desired_object() -> None:
    plain = b"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a, namespace: ns}\ndata: {v: '1'}\n"
    hostile = (
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  namespace: ns\n"
        b"  ownerReferences: [{apiVersion: v1, kind: ConfigMap, name: gone, uid: 0000-dead}]\n"
        b"  finalizers: [example.com/never-released]\ndata: {v: '1'}\n"
    )
    empty = plain.replace(b"namespace: ns}", b"namespace: ns, finalizers: []}")
    [expected], _ = load_desired([TreeFile("clusters/c1/ns/a.yaml", plain)], "c1")
    [stripped], problems = load_desired([TreeFile("clusters/c1/ns/a.yaml", hostile)], "c1")
    [quiet], _ = load_desired([TreeFile("clusters/c1/ns/a.yaml", empty)], "c1")
    assert problems == []
    assert stripped.stripped == ("metadata.finalizers", "metadata.ownerReferences")
    assert stripped.body == expected.body and stripped.digest == expected.digest  # the same applied object
    assert quiet.stripped == () and quiet.body == expected.body
