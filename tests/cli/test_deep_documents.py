"""``render`` of a source document nested 985 levels deep (issue 21, a follow-up of item 4).

A Widget whose ``spec`` nests ``a:`` 985 levels in block style, or a SchedulePolicy override whose
``staticValue`` does, passed the loader and crashed ``nova-gitops render`` with RecursionError (exit 3, "This
is a bug") in the emitter and in ``repr``. The loader now refuses a document deeper than
``loading.MAX_DEPTH`` levels at its file and line, naming the bound: exit 2, nothing written.

Behaviours covered:
- both documents, rendered by a real ``nova-gitops`` process, exit 2 with ``deep.yaml:LINE:`` and the bound;
- a document exactly at the bound renders, even when the stack is already 400 frames deep (far more than
  the controller's loop and publish put under a render): the bound leaves every recursive reader of the
  data (emitter, ``repr``, pickle, ``json``) room within Python's default recursion limit.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nova_gitops.api import loading
from nova_gitops.scheduling.plans import PlanSettings
from nova_gitops.workflows import rendering

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "repo-layout" / "source"
NOVA_GITOPS = Path(sys.executable).parent / "nova-gitops"

WIDGET = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w, namespace: default}\nspec:\n"
POLICY = """---
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata: {name: widgets}
spec:
  namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: default}}
  clusterSelector: {}
  spreadConstraints:
    spreadMode: Duplicate
    topologyKey: kubernetes.io/metadata.name
    overrides:
    - topologyValue: wlc-aws-east-1
      resources:
      - kind: Widget
        apiVersion: example.com/v1
        name: w
        override:
        - fieldPath: spec.deep
          value:
            staticValue:
"""


def nested(levels: int, indent: int) -> str:
    """``a:`` nested ``levels`` times, one more space a line, starting at column ``indent``."""
    lines = [" " * (indent + level) + "a:" for level in range(levels)]
    return "\n".join([*lines, " " * (indent + levels) + "b: 1"]) + "\n"


def source(tmp_path: Path, *, widget_levels: int = 0, static_levels: int = 0) -> Path:
    root = tmp_path / "source"
    shutil.copytree(EXAMPLE, root)
    widget = WIDGET + (nested(widget_levels, 1) if widget_levels else "  x: 1\n")
    policy = POLICY + (nested(static_levels, 14) if static_levels else "              1\n")
    (root / "deep.yaml").write_text(widget + policy, encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("where", "first_line_past"),
    [
        # spec (level 2) is on line 4; its mapping starts on line 5 and each level one line further
        ("widget", 5 + loading.MAX_DEPTH - 1),
        # staticValue (line 25) is the policy's level 10: its mapping (level 11) starts on line 26
        ("static", 26 + loading.MAX_DEPTH - 10),
    ],
)
def test_a_document_985_levels_deep_is_an_error_at_its_line_not_a_crash(
    tmp_path: Path, where: str, first_line_past: int
) -> None:
    levels = {"widget_levels": 985} if where == "widget" else {"static_levels": 985}
    root = source(tmp_path, **levels)
    output = tmp_path / "out"
    command = [str(NOVA_GITOPS), "render", str(root), "-o", str(output)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    assert done.returncode == 2, done.stderr
    assert "This is a bug" not in done.stderr and "RecursionError" not in done.stderr
    assert f"deep.yaml:{first_line_past}:" in done.stderr
    assert f"more than {loading.MAX_DEPTH} levels deep" in done.stderr
    assert not output.exists()


def _at_depth(frames: int, action: object) -> object:
    if frames:
        return _at_depth(frames - 1, action)
    assert callable(action)
    return action()


def test_a_document_at_the_bound_renders_under_a_deep_stack(tmp_path: Path) -> None:
    # the Widget: 2 levels (root, spec) + those of a:; the policy: 11 (to staticValue's mapping) + those of a:
    root = source(tmp_path, widget_levels=loading.MAX_DEPTH - 2, static_levels=loading.MAX_DEPTH - 11)
    assert sys.getrecursionlimit() == 1000  # Python's default: what nova-gitops runs with

    def render() -> object:
        output = tmp_path / "out"
        return rendering.render_to_directory(root, output, settings=PlanSettings(), use_previous=False)

    result: object = _at_depth(400, render)
    assert result is not None
    rendered = (tmp_path / "out" / "clusters" / "wlc-aws-east-1").rglob("*.yaml")
    widget = next(path for path in rendered if "kind: Widget" in path.read_text(encoding="utf-8"))
    text = widget.read_text(encoding="utf-8")
    assert text.count(" a:\n") == loading.MAX_DEPTH - 2 + loading.MAX_DEPTH - 11
