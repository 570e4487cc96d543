"""``rendering.diffs`` and ``rendering.diffformats``: pure comparisons of two rendered trees.

Behaviours covered:
- identical trees give an empty diff (property, any tree); ``changed_files`` finds exactly the paths whose
  bytes differ, and counts per cluster add up to the object files that differ (property);
- a group moving c2 → c1, replica changes per cluster, newly unscheduled objects and new warnings are read
  from placement.yaml, parsing only entries whose text differs;
- a new source revision alone (placement.yaml ``source``) is no change;
- Secret ``data``/``stringData`` values never appear in text, Markdown or JSON; the change is summarised as
  ``(hidden: N keys changed)``, and an unparseable secret-named file is hidden too;
- Markdown has a per-cluster table, moves and deletions called out, and the full diff in <details>.
"""

from __future__ import annotations

import json

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from nova_gitops.rendering import diffformats, diffs


def placement(
    groups: list[dict[str, object]],
    revision: str = "a" * 40,
    unscheduled: list[object] | None = None,
    warnings: list[str] | None = None,
) -> bytes:
    document = {
        "apiVersion": "gitops.nova.elotl.co/v1alpha1",
        "kind": "Placement",
        "source": {"repo": "src", "revision": revision},
        "groups": groups,
        "unscheduled": unscheduled or [],
        "warnings": warnings or [],
    }
    return yaml.safe_dump(document, sort_keys=False).encode()


def group(name: str, clusters: list[str], replicas: dict[str, int] | None = None) -> dict[str, object]:
    objects = [{"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "shop", "name": name}]
    if replicas is not None:
        objects[0]["replicas"] = replicas  # type: ignore[assignment]
    return {"name": name, "policy": "p", "mode": "single", "clusters": clusters, "objects": objects}


def secret(value: str, extra: dict[str, str] | None = None) -> bytes:
    body = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "db", "namespace": "shop"},
        "data": {"password": value, **(extra or {})},
    }
    return yaml.safe_dump(body, sort_keys=False).encode()


def diff(old: dict[str, bytes], new: dict[str, bytes]) -> diffs.RenderDiff:
    return diffs.diff_renders(diffs.changed_files(old, new))


trees = st.dictionaries(
    st.builds(
        lambda c, n: f"clusters/{c}/shop/{n}.yaml",
        st.sampled_from(["c1", "c2", "c3"]),
        st.text("abc", min_size=1, max_size=4),
    ),
    st.binary(max_size=20),
    max_size=12,
)


@settings(max_examples=100)
@given(trees)
def test_identical_trees_give_an_empty_diff(tree: dict[str, bytes]) -> None:
    assert diff(tree, dict(tree)).is_empty


@settings(max_examples=100)
@given(trees, trees)
def test_counts_add_up_to_the_files_that_differ(old: dict[str, bytes], new: dict[str, bytes]) -> None:
    result = diff(old, new)
    differing = {path for path in old.keys() | new.keys() if old.get(path) != new.get(path)}
    assert {change.path for change in result.objects} == differing
    assert result.added + result.changed + result.deleted == len(differing)
    assert result.added == len(new.keys() - old.keys()) and result.deleted == len(old.keys() - new.keys())


def test_moves_replicas_unscheduled_and_warnings() -> None:
    old = {
        "placement.yaml": placement(
            [group("a", ["c2"]), group("b", ["c1", "c2"], {"c1": 2, "c2": 2}), group("z", ["c1"])]
        )
    }
    new = {
        "placement.yaml": placement(
            [
                group("a", ["c1"]),
                group("b", ["c1", "c2"], {"c1": 3, "c2": 2}),
                group("n", ["c3"]),
                group("z", ["c1"]),
            ],
            unscheduled=[
                {"apiVersion": "v1", "kind": "Pod", "namespace": "shop", "name": "big", "reason": "too big"}
            ],
            warnings=["wlc-2 needs 2500m cpu"],
        )
    }
    result = diff(old, new)
    assert [(g.name, g.before, g.after) for g in result.groups] == [
        ("a", ("c2",), ("c1",)),
        ("n", None, ("c3",)),
    ]
    assert [g.name for g in result.moved] == ["a"]
    assert [(r.title, r.cluster, r.before, r.after) for r in result.replicas] == [
        ("Deployment shop/b", "c1", 2, 3)
    ]
    assert result.newly_unscheduled == ("Pod shop/big: too big",)
    assert result.new_warnings == ("wlc-2 needs 2500m cpu",)
    text = diffformats.to_text(result)
    assert text.index("group a moved c2 → c1") < text.index("Objects:")
    assert "replicas Deployment shop/b on c1: 2 → 3" in text


def test_a_new_source_revision_alone_is_no_change() -> None:
    groups = [group("a", ["c1"])]
    changes = diffs.changed_files(
        {"placement.yaml": placement(groups, "a" * 40)}, {"placement.yaml": placement(groups, "b" * 40)}
    )
    assert diffs.diff_renders(changes).is_empty
    assert diffs.bookkeeping_only(changes)


def test_secret_values_are_never_printed() -> None:
    old = {"clusters/c1/shop/secret-db.yaml": secret("b2xkLXNlY3JldA==")}
    new = {"clusters/c1/shop/secret-db.yaml": secret("bmV3LXNlY3JldA==", {"token": "dG9rZW4tdmFsdWU="})}
    result = diff(old, new)
    outputs = [diffformats.to_text(result), diffformats.to_markdown(result), diffformats.to_json(result)]
    for output in outputs:
        for value in ("b2xkLXNlY3JldA==", "bmV3LXNlY3JldA==", "dG9rZW4tdmFsdWU="):
            assert value not in output
        assert "(hidden: 2 keys changed)" in output or '"hiddenKeys": 2' in output
    assert "+  token: (hidden)" in outputs[0]


def test_unparseable_secret_named_file_is_hidden() -> None:
    result = diff({}, {"clusters/c1/shop/secret-x.yaml": b"data: {password: s3cr3t-value\n"})
    assert "s3cr3t-value" not in diffformats.to_text(result)


def test_markdown_table_moves_deletions_and_details() -> None:
    old = {
        "clusters/c2/shop/deployment-a.yaml": b"kind: Deployment\nmetadata: {name: a, namespace: shop}\n",
        "placement.yaml": placement([group("a", ["c2"])]),
    }
    new = {
        "clusters/c1/shop/deployment-a.yaml": b"kind: Deployment\nmetadata: {name: a, namespace: shop}\n",
        "placement.yaml": placement([group("a", ["c1"])]),
    }
    markdown = diffformats.to_markdown(diff(old, new))
    assert "| `c1` | 1 | 0 | 0 |" in markdown and "| `c2` | 0 | 0 | 1 |" in markdown
    assert "`a`: **c2 → c1**" in markdown
    assert ":warning: `c2`: Deployment shop/a" in markdown
    assert "<details><summary>Full manifest diff (2 files)</summary>" in markdown
    document = json.loads(diffformats.to_json(diff(old, new)))
    assert document["summary"] == {"added": 1, "changed": 0, "deleted": 1, "groupsMoved": 1, "changes": True}


def test_capacity_figures_alone_are_no_change() -> None:
    """Agents report capacity as it moves: that alone must not make a rendered commit every few minutes."""
    base = placement([group("a", ["c1"])], "a" * 40).decode()
    fuller = base + "clusters:\n- name: c1\n  available:\n    cpu: 1500m\n"
    emptier = base + "clusters:\n- name: c1\n  available:\n    cpu: 3500m\n"
    changes = diffs.changed_files(
        {"placement.yaml": fuller.encode(), "PLACEMENT.md": b"cpu 1500m\n"},
        {"placement.yaml": emptier.encode(), "PLACEMENT.md": b"cpu 3500m\n"},
    )
    assert diffs.bookkeeping_only(changes)
    moved = diffs.changed_files(
        {"placement.yaml": fuller.encode()},
        {"placement.yaml": placement([group("a", ["c2"])], "a" * 40) + b"clusters: []\n"},
    )
    assert not diffs.bookkeeping_only(moved)
