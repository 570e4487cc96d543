"""Progress and tables on a terminal, and nothing of them anywhere else (issue 13, item 2).

Behaviours covered (``NOVA_GITOPS_FORCE_TERMINAL=1`` stands for a terminal; click's runner is not one):
- the workflows report their phases in order through ``api.progress``: render load → plan → render →
  write; publish git → load → plan → render → write → git; diff --source git → load/plan/render twice → diff;
- on a terminal, `render`, `publish` and `diff` show those phases on stderr, and stdout and the files
  written are byte for byte what they are without a terminal;
- `get` and `rollout status`-style tables and `explain` are rich on a terminal; `-o json|yaml` never is;
- `--quiet`, `NOVA_GITOPS_QUIET`, `NO_COLOR` and `TERM=dumb` each give exactly the plain output, on both
  streams.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from nova_gitops.api import progress as phases
from nova_gitops.cli.main import cli
from nova_gitops.clients import terminals
from nova_gitops.scheduling.plans import PlanSettings
from nova_gitops.workflows import diffing, publishing, renderers, rendering

ROOT = Path(__file__).resolve().parents[2]
SOURCE = ROOT / "examples" / "repo-layout" / "source"
GROUP_REFERENCE = "deployment/shop/blue-frontend"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
TERMINAL = {terminals.FORCE_TERMINAL: "1"}


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env or {}, catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def plain(text: str) -> str:
    return ANSI.sub("", text)


def tree(root: Path) -> dict[str, bytes]:
    return {
        str(path.relative_to(root)): path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file()
    }


def git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout.strip()


@pytest.fixture
def source_repo(tmp_path: Path) -> Path:
    """The example source as a git repository with two commits (the second changes one Deployment)."""
    root = tmp_path / "source"
    shutil.copytree(SOURCE, root)
    git("init", "--quiet", "--initial-branch=main", cwd=root)
    git("add", "-A", cwd=root)
    git("commit", "--quiet", "-m", "base", cwd=root)
    blue = root / "apps" / "shop" / "blue.yaml"
    blue.write_text(blue.read_text().replace("replicas: 3", "replicas: 2", 1))
    git("commit", "--quiet", "-am", "two replicas", cwd=root)
    return root


def collapsed(names: list[str]) -> list[str]:
    """The phases in order, a phase reported again in a row (git's progress within ``git``) counted once."""
    return [name for index, name in enumerate(names) if index == 0 or names[index - 1] != name]


def test_a_directory_render_reports_its_phases_in_order(tmp_path: Path) -> None:
    recorded = phases.Recorded()
    rendering.render_to_directory(SOURCE, tmp_path / "out", settings=PlanSettings(), progress=recorded)
    assert recorded.names == [phases.LOAD, phases.PLAN, phases.RENDER, phases.WRITE]


def test_publish_and_diff_report_their_phases_in_order(tmp_path: Path, source_repo: Path) -> None:
    remote = tmp_path / "rendered.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote), cwd=tmp_path)
    recorded = phases.Recorded()
    publishing.publish(
        f"file://{source_repo}@main",
        f"file://{remote}",
        render=renderers.default_render(PlanSettings(), cache_dir=tmp_path / "cache", progress=recorded),
        cache_dir=tmp_path / "cache",
        progress=recorded,
    )
    load, plan, render, write, git_ = phases.LOAD, phases.PLAN, phases.RENDER, phases.WRITE, phases.GIT
    assert collapsed(recorded.names) == [git_, load, plan, render, write, git_]
    pushed = recorded.names.index(write) + 1
    assert recorded.phases[pushed] == (git_, "pushing main")
    transfers = [detail for name, detail in recorded.phases[pushed + 1 :] if name == git_]
    assert any(": writing " in detail for detail in transfers), transfers  # git's own push progress
    recorded = phases.Recorded()
    diffing.diff_revisions(
        str(source_repo),
        "HEAD~1",
        "HEAD",
        render=renderers.default_render(PlanSettings(), progress=recorded),
        cache_dir=tmp_path / "cache",
        progress=recorded,
    )
    assert collapsed(recorded.names) == [git_, load, plan, render, load, plan, render, phases.DIFF]


def test_render_shows_progress_on_a_terminal_and_writes_the_same_bytes(tmp_path: Path) -> None:
    code, out, err = run("render", str(SOURCE), "-o", str(tmp_path / "plain"))
    assert code == 0
    code, shown_out, shown_err = run("render", str(SOURCE), "-o", str(tmp_path / "shown"), env=TERMINAL)
    assert code == 0
    assert tree(tmp_path / "plain") == tree(tmp_path / "shown")
    assert shown_out == out == ""
    text = plain(shown_err)
    for phase in ("load", "plan", "render", "write"):
        assert re.search(rf"✓ {phase}\b", text), text
    assert "\x1b[" in shown_err  # drawn for a terminal
    assert text.splitlines()[-1] == err.splitlines()[-1].replace("plain", "shown")  # the summary, as ever


@pytest.mark.parametrize(
    ("flag", "env"),
    [
        ("--quiet", {}),
        ("", {"NOVA_GITOPS_QUIET": "1"}),
        ("", {"NO_COLOR": "1"}),
        ("", {"TERM": "dumb"}),
    ],
)
def test_quiet_and_no_color_give_exactly_the_plain_output(
    tmp_path: Path, flag: str, env: dict[str, str]
) -> None:
    outputs = []
    for name, environment in (("plain", {}), ("shown", {**TERMINAL, **env})):
        args = ["render", str(SOURCE), "-o", str(tmp_path / name), *([flag] if flag else [])]
        code, out, err = run(*args, env=environment)
        outputs.append((code, out, err.replace(str(tmp_path / name), "OUT")))
    assert outputs[0] == outputs[1]
    explain = ["explain", str(SOURCE), GROUP_REFERENCE, *([flag] if flag else [])]
    assert run(*explain, env={**TERMINAL, **env}) == run(*explain)
    get = ["get", "schedulegroups", str(SOURCE), *([flag] if flag else [])]
    assert run(*get, env={**TERMINAL, **env}) == run(*get)


def test_publish_and_diff_show_progress_on_stderr_only(tmp_path: Path, source_repo: Path) -> None:
    remote = tmp_path / "rendered.git"
    git("init", "--quiet", "--bare", "--initial-branch=main", str(remote), cwd=tmp_path)
    code, out, err = run(
        "publish",
        f"file://{source_repo}@main",
        "--repo",
        f"file://{remote}",
        "--cache-dir",
        str(tmp_path / "cache"),
        env=TERMINAL,
    )
    assert code == 0 and out == ""
    text = plain(err)
    for phase in ("git", "load", "plan", "render", "write"):
        assert re.search(rf"✓ {phase}\b", text), text
    assert "pushing main" in text and text.splitlines()[-1].startswith("published ")
    diff = ["diff", "--source", str(source_repo), "--base", "HEAD~1", "--cache-dir", str(tmp_path / "cache")]
    code, out, err = run(*diff)
    shown = run(*diff, env=TERMINAL)
    assert code == shown[0] == 1
    assert shown[1] == out  # the diff itself is never decorated by progress
    assert re.search(r"✓ diff\b", plain(shown[2])) and "✓" not in err
    # what diff tells of the head's plan (cli.notices) is the same text on either, after the progress
    assert err.endswith("the work tree: 0 unscheduled, 1 warnings\n") and plain(shown[2]).endswith(err)


def test_tables_are_rich_on_a_terminal_and_json_never_is() -> None:
    _, out, _ = run("get", "schedulegroups", str(SOURCE))
    _, shown, _ = run("get", "schedulegroups", str(SOURCE), env=TERMINAL)
    assert shown != out and "─" in shown
    first_row = out.splitlines()[1].split()
    assert re.search(r"\s+".join(map(re.escape, first_row)), plain(shown))  # the same cells
    for output in ("json", "yaml"):
        args = ("get", "placements", str(SOURCE), "-o", output)
        assert run(*args, env=TERMINAL) == run(*args)
        args = ("explain", str(SOURCE), GROUP_REFERENCE, "-o", output)
        assert run(*args, env=TERMINAL) == run(*args)
    _, text, _ = run("explain", str(SOURCE), GROUP_REFERENCE)
    _, shown, _ = run("explain", str(SOURCE), GROUP_REFERENCE, env=TERMINAL)
    assert "PLACED BY THIS RENDER" in plain(shown) and "PLACED BY" not in text
    assert plain(shown).splitlines()[0] == text.splitlines()[0]


def test_decoration_needs_a_terminal() -> None:
    class Stream:
        def __init__(self, tty: bool) -> None:
            self.tty = tty

        def isatty(self) -> bool:
            return self.tty

    tty, pipe = Stream(True), Stream(False)
    assert terminals.decorated(tty, environ={})  # type: ignore[arg-type]
    assert not terminals.decorated(pipe, environ={})  # type: ignore[arg-type]
    assert not terminals.decorated(tty, quiet=True, environ={})  # type: ignore[arg-type]
    assert not terminals.decorated(tty, environ={"NO_COLOR": "1"})  # type: ignore[arg-type]
    assert terminals.decorated(pipe, environ={terminals.FORCE_TERMINAL: "1"})  # type: ignore[arg-type]
    assert not terminals.decorated(pipe, environ={terminals.FORCE_TERMINAL: "0"})  # type: ignore[arg-type]
