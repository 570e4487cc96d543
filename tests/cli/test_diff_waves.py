"""``nova-gitops diff --source`` with a RolloutStrategy: the wave plan of the change (docs/rollouts.md).

Behaviours covered (a real git repository; a fleet of canary-1, prod-a..c and dev-1..2, a strategy with
waves canary (bake 30m) and prod (maxParallel 2), and the implicit ``others``):
- a change to a Deployment on canary-1 and prod-a..c shows, in text, Markdown and JSON, canary then prod in
  two batches, others changing nothing, dev-1 and dev-2 not touched, and 35m at the earliest; the rest of
  the output is exactly the output of the same change without a strategy;
- a change that touches no cluster directory (a new unscheduled object) plans nothing through a gate;
- the waves are the head's: a strategy added by the change plans that change;
- without a strategy, and for two render directories (which record no strategy), no plan is shown;
- PLACEMENT.md has the wave column in a render, and an incremental render (publish) gives the same bytes.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from nova_gitops.cli.diff import diff_command
from nova_gitops.rendering import waveplans
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling.plans import PlanSettings, PreviousPlacement
from nova_gitops.workflows import renderers, rendering
from tests.builders import config_map, deployment, policy
from tests.unit.rendering.test_wave_reports import CANARY_AND_PROD, FLEET, NOTHING, STRATEGY

WEB = policy(
    "web",
    resourceSelectors={"labelSelectors": [{"matchLabels": {"app": "web"}}]},
    clusterSelector={"matchExpressions": [{"key": "tier", "operator": "In", "values": ["canary", "prod"]}]},
    spreadConstraints={"spreadMode": "Duplicate", "topologyKey": "kubernetes.io/metadata.name"},
)


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def write(root: Path, *documents: dict[str, Any]) -> None:
    (root / "source.yaml").write_text(yaml.safe_dump_all([*FLEET, WEB, *documents], sort_keys=False))


def repository(root: Path, *documents: dict[str, Any]) -> Path:
    """A source repository whose main holds ``documents`` (and the fleet), with a pinned identity."""
    root.mkdir()
    git("init", "--quiet", "--initial-branch=main", cwd=root)
    git("config", "user.name", "Test", cwd=root)
    git("config", "user.email", "test@example.com", cwd=root)
    write(root, *documents)
    git("add", "-A", cwd=root)
    git("commit", "--quiet", "-m", "base", cwd=root)
    return root


@pytest.fixture(autouse=True)
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))


def diff(root: Path, output: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        diff_command, ["--source", str(root), "--base", "main", "--format", output, "--no-color"]
    )
    return result.exit_code, result.stdout  # stderr may name unscheduled objects (cli.notices)


def text_section(plan: Any) -> str:
    return "Rollout:\n" + "".join(f"  {line}\n" for line in waveplans.text_lines(plan))


@pytest.mark.parametrize("output", ["text", "markdown", "json"])
def test_a_change_in_two_waves_shows_its_plan(tmp_path: Path, output: str) -> None:
    gated = repository(tmp_path / "gated", STRATEGY, deployment("web", labels={"app": "web"}))
    write(gated, STRATEGY, deployment("web", replicas=2, labels={"app": "web"}))
    plain = repository(tmp_path / "plain", deployment("web", labels={"app": "web"}))
    write(plain, deployment("web", replicas=2, labels={"app": "web"}))
    code, shown = diff(gated, output)
    before = diff(plain, output)
    assert code == before[0] == 1, shown
    if output == "json":
        document = json.loads(shown)
        assert document.pop("rollout") == waveplans.json_data(CANARY_AND_PROD)
        assert document == json.loads(before[1]) and "rollout" not in before[1]
        return
    section = text_section(CANARY_AND_PROD) if output == "text" else waveplans.markdown(CANARY_AND_PROD)
    assert section in shown and shown.replace(section, "") == before[1]
    assert "Rollout" not in before[1]
    if output == "text":
        assert (
            "  wave prod: changes prod-a, prod-b, prod-c in 2 batches of 2 (prod-a, prod-b | prod-c)" in shown
        )


def test_a_change_touching_no_cluster_plans_nothing_through_a_gate(tmp_path: Path) -> None:
    root = repository(tmp_path / "fleet", STRATEGY)
    write(root, STRATEGY, config_map("orphan", labels={"app": "nobody"}))
    code, shown = diff(root, "text")
    assert code == 1 and "newly unscheduled: ConfigMap demo/orphan" in shown, shown
    assert shown.endswith(text_section(NOTHING))
    assert "earliest complete: 0s (the change releases nothing through a gate)" in shown
    assert json.loads(diff(root, "json")[1])["rollout"] == waveplans.json_data(NOTHING)


def test_the_waves_are_the_heads(tmp_path: Path) -> None:
    root = repository(tmp_path / "fleet", deployment("web", labels={"app": "web"}))
    write(root, STRATEGY, deployment("web", replicas=2, labels={"app": "web"}))
    assert text_section(CANARY_AND_PROD) in diff(root, "text")[1]


def test_without_a_strategy_or_between_directories_no_plan(tmp_path: Path) -> None:
    root = repository(tmp_path / "fleet", deployment("web", labels={"app": "web"}))
    write(root, deployment("web", replicas=2, labels={"app": "web"}))
    for output in ("text", "markdown", "json"):
        assert "ollout" not in diff(root, output)[1]
    gated = repository(tmp_path / "gated", STRATEGY, deployment("web", labels={"app": "web"}))
    settings = PlanSettings()
    rendering.render_to_directory(gated, tmp_path / "old", settings=settings)
    write(gated, STRATEGY, deployment("web", replicas=2, labels={"app": "web"}))
    rendering.render_to_directory(gated, tmp_path / "new", settings=settings)
    result = CliRunner().invoke(diff_command, [str(tmp_path / "old"), str(tmp_path / "new"), "--no-color"])
    assert result.exit_code == 1 and "replicas Deployment demo/web on prod-a: 1 → 2" in result.output
    assert "Rollout" not in result.output


def test_placement_md_has_the_wave_column_in_full_and_incremental_renders(tmp_path: Path) -> None:
    root = repository(tmp_path / "fleet", STRATEGY, deployment("web", labels={"app": "web"}))
    rendered = rendering.render_to_directory(root, tmp_path / "out", settings=PlanSettings())
    text = (tmp_path / "out" / "PLACEMENT.md").read_text()
    assert "| Cluster | Wave | Groups |" in text and "| `prod-c` | 2. prod | 1 |" in text
    assert "| `dev-2` | 3. others | 0 |" in text
    renderer = renderers.default_render(PlanSettings())
    source = SourceInfo(str(root), None)
    full = renderer(root, source, PreviousPlacement.empty())
    incremental = renderer.render_delta(root, source, PreviousPlacement.empty(), None)
    assert incremental.delta.files["PLACEMENT.md"] == full["PLACEMENT.md"]
    assert [wave.name for wave in rendered.tree.waves] == ["canary", "prod", "others"]
