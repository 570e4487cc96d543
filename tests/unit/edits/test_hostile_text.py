"""Edits of YAML text written to trip them (issue 21), on the pure text edits (``nova_gitops.edits``):

- a node an edit writes into or through (the object, its ``metadata``, the labels or annotations mapping,
  the replaced value, the split and its entries) that a YAML alias shares is refused with an ``EditError``
  at the anchor's line, naming the anchor and the lines that alias it; so is a key a merge key (``<<``)
  brings in; an anchor nothing aliases is edited like any node;
- CR-only and CRLF line ends stay what they were, in the lines an edit adds too;
- a comment after the edited block stays where it was: ``unpin`` does not move a comment that follows the
  removed annotations into the labels block, and ``pin`` adds its lines before such a comment, not after;
- the document is read alone: one written at an indentation the rest of its file does not use is edited,
  and a file of many documents changes in the target's lines only.
"""

from __future__ import annotations

import pytest
import yaml

from nova_gitops.edits import changes
from nova_gitops.edits.splicing import EditError

PIN = "nova.elotl.co/cluster"
CORDONED = "nova.elotl.co/cordoned"

SHARED_LABELS = """\
apiVersion: v1
kind: List
items:
- kind: Cluster
  metadata:
    name: c1
    labels: &prod
      env: prod
- kind: Cluster
  metadata:
    name: c2
    labels: *prod
- kind: SchedulePolicy
  metadata:
    name: p
  spec:
    clusterSelector:
      matchLabels: *prod
"""


def test_labels_an_alias_shares_are_not_edited_through_it() -> None:
    for name, line in (("c1", 4), ("c2", 9)):
        with pytest.raises(EditError) as raised:
            changes.set_metadata_entry(
                SHARED_LABELS, changes.DocumentRef("Cluster", name, line), "labels", CORDONED, "true"
            )
        assert raised.value.line == 7
        message = str(raised.value)
        assert "metadata.labels" in message and "&prod" in message
        assert "lines 12 and 18 also use (*prod" in message


def test_an_anchor_nothing_aliases_is_edited() -> None:
    text = SHARED_LABELS.replace("labels: *prod", "labels: {env: prod}").replace(
        "matchLabels: *prod", "matchLabels: {}"
    )
    result = changes.set_metadata_entry(text, changes.DocumentRef("Cluster", "c1", 5), "labels", "a", "b")
    assert result == text.replace("      env: prod\n", "      env: prod\n      a: b\n", 1)


def test_metadata_shared_with_the_pod_template_is_not_edited() -> None:
    text = (
        "kind: Deployment\nmetadata: &meta\n  name: web\n  labels: {app: web}\n"
        "spec:\n  template:\n    metadata: *meta\n"
    )
    with pytest.raises(
        EditError, match=r"metadata is shared through the YAML anchor &meta.*line 7"
    ) as raised:
        changes.set_metadata_entry(text, changes.DocumentRef("Deployment", "web", 1), "annotations", PIN, "c")
    assert raised.value.line == 2


def test_a_replaced_or_removed_value_that_an_alias_uses_is_not_edited() -> None:
    text = (
        "kind: Deployment\nmetadata:\n  name: web\n  annotations:\n    nova.elotl.co/cluster: &where c1\n"
        "spec:\n  template:\n    metadata:\n      labels: {site: *where}\n"
    )
    target = changes.DocumentRef("Deployment", "web", 1)
    for value in ("c2", None):
        with pytest.raises(EditError, match=r"&where.*line 9") as raised:
            changes.set_metadata_entry(text, target, "annotations", PIN, value)
        assert raised.value.line == 5


def test_a_key_a_merge_key_brings_in_is_not_edited_through_it() -> None:
    text = (
        "apiVersion: v1\nkind: List\nitems:\n"
        "- kind: Cluster\n  metadata:\n    name: c1\n    <<: &base {labels: {env: prod}}\n"
        "- kind: Cluster\n  metadata:\n    name: c2\n    <<: *base\n"
    )
    with pytest.raises(EditError, match="&base") as raised:
        changes.set_metadata_entry(text, changes.DocumentRef("Cluster", "c1", 4), "labels", CORDONED, "true")
    assert raised.value.line == 7


def test_a_split_an_alias_shares_is_not_edited() -> None:
    text = (
        "kind: SchedulePolicy\nmetadata:\n  name: p\nspec:\n  spreadConstraints:\n    spreadMode: Divide\n"
        "    percentageSplit: &split\n      east: 60\n      west: 40\n  other: *split\n"
    )
    with pytest.raises(EditError, match=r"spec\.spreadConstraints\.percentageSplit.*&split.*line 10"):
        changes.set_percentage_split(text, changes.DocumentRef("SchedulePolicy", "p", 1), [("east", 100)])


@pytest.mark.parametrize("newline", ["\r", "\r\n", "\n"])
@pytest.mark.parametrize("value", ["c2", None])
def test_line_ends_stay_what_they_were(newline: str, value: str | None) -> None:
    lines = ["kind: Deployment", "metadata:", "  name: web", "  labels:", "    app: web"]
    lines += ["  annotations:", f"    {PIN}: c1", "# the spec", "spec:", "  replicas: 1", ""]
    text = newline.join(lines)
    result = changes.set_metadata_entry(
        text, changes.DocumentRef("Deployment", "web", 1), "annotations", "x", "y"
    )
    assert result == text.replace(f"c1{newline}", f"c1{newline}    x: y{newline}")
    result = changes.set_metadata_entry(
        text, changes.DocumentRef("Deployment", "web", 1), "annotations", PIN, value
    )
    if value is None:
        assert result == text.replace(f"  annotations:{newline}    {PIN}: c1{newline}", "")
    else:
        assert result == text.replace(": c1", ": c2")


@pytest.mark.parametrize("comment", ["# the spec", "  # the end of metadata", "", "\n# after a blank line"])
def test_a_comment_after_the_edited_block_stays_where_it_was(comment: str) -> None:
    bare = "kind: Deployment\nmetadata:\n  name: web\n  labels:\n    app: web\n" + (
        f"{comment}\n" if comment else ""
    )
    bare += "spec:\n  replicas: 1\n"
    pinned = bare.replace("    app: web\n", f"    app: web\n  annotations:\n    {PIN}: c1\n")
    target = changes.DocumentRef("Deployment", "web", 1)
    assert changes.set_metadata_entry(bare, target, "annotations", PIN, "c1") == pinned
    assert changes.set_metadata_entry(pinned, target, "annotations", PIN, None) == bare
    labelled = bare.replace("    app: web\n", "    app: web\n    a: b\n")
    assert changes.set_metadata_entry(bare, target, "labels", "a", "b") == labelled


def test_a_comment_inside_the_removed_block_is_kept() -> None:
    pinned = (
        "kind: Deployment\nmetadata:\n  name: web\n  annotations:\n    team: shop\n"
        f"    {PIN}: c1  # for the migration\n    # more annotations below\nspec: {{}}\n"
    )
    result = changes.set_metadata_entry(
        pinned, changes.DocumentRef("Deployment", "web", 1), "annotations", PIN, None
    )
    assert result == pinned.replace(f"    {PIN}: c1  # for the migration\n", "")


def test_only_the_target_document_is_read() -> None:
    """A document at another indentation than most of its file is re-dumped at its own, so the edit is
    placed; the other documents' lines are untouched whatever they hold."""
    plain = [
        {"kind": "ConfigMap", "metadata": {"name": f"c{index}"}, "data": {"k": "v"}} for index in range(5)
    ]
    odd = {
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"replicas": 1},
    }
    text = (
        yaml.safe_dump_all(plain, sort_keys=False) + "---\n" + yaml.safe_dump(odd, sort_keys=False, indent=4)
    )
    line = text.splitlines().index("kind: Deployment") + 1
    result = changes.set_metadata_entry(
        text, changes.DocumentRef("Deployment", "web", line), "annotations", PIN, "c"
    )
    assert result == text.replace(
        "        app: web\n", f"        app: web\n    annotations:\n        {PIN}: c\n"
    )


def test_a_document_in_the_middle_of_many_is_edited_in_its_lines() -> None:
    documents = [
        {"kind": "ConfigMap", "metadata": {"name": f"c{index}"}, "data": {"k": "v"}} for index in range(300)
    ]
    text = "# many\n" + yaml.safe_dump_all(documents, sort_keys=False, explicit_start=True) + "...\n"
    line = text.splitlines().index("  name: c150") - 1
    result = changes.set_metadata_entry(
        text, changes.DocumentRef("ConfigMap", "c150", line), "labels", "a", "b"
    )
    assert result == text.replace("  name: c150\n", "  name: c150\n  labels:\n    a: b\n")


@pytest.mark.parametrize("key", ["", "    topologyKey: region\n"])
def test_a_new_split_goes_before_the_comment_after_its_block(key: str) -> None:
    text = (
        "kind: SchedulePolicy\nmetadata:\n  name: p\nspec:\n  spreadConstraints:\n    spreadMode: Divide\n"
        f"{key}# the selectors\n  resourceSelectors: {{}}\n"
    )
    result = changes.set_percentage_split(text, changes.DocumentRef("SchedulePolicy", "p", 1), [("a", 100)])
    split = "    percentageSplit:\n" + (
        "    - topologyValue: a\n      percentage: 100\n" if key else "      a: 100\n"
    )
    assert result == text.replace("# the selectors\n", split + "# the selectors\n")
