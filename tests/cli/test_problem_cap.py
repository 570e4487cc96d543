"""How many problems the CLI prints (``cli.errors``), and that collecting many stays cheap.

Behaviours covered:
- an invalid source with more than 100 problems prints the first 100 (in file:line order), then
  ``… and K more problems``, then the summary counting every error; exit 2;
- ``--debug`` prints every problem;
- 100 or fewer problems print in full, with no "more" line;
- each problem whose column is known prints as a compiler prints it: ``file:line:column: message``, the
  offending line, and a caret under the column;
- an ``InputError`` builds its full text only when asked (``str``), so a million problems cost no 72 MB
  string up front.
"""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from nova_gitops.api.problems import Problem, SourceLocation
from nova_gitops.cli import errors as cli_errors
from nova_gitops.cli.main import cli
from nova_gitops.errors import InputError


def broken_source(root: Path, count: int) -> Path:
    root.mkdir()
    document = "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: Bad_{}}}\n"
    text = "".join(document.format(index) for index in range(count))
    (root / "source.yaml").write_text(text, encoding="utf-8")
    return root


def validate(*args: str) -> tuple[int, list[str]]:
    """The exit code and the lines printed, each problem's quoted line and caret left out (see below)."""
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    lines = result.stderr.splitlines()
    return result.exit_code, [line for line in lines if not line.startswith("    ")]


def test_a_problem_points_at_its_line_and_column_with_a_caret(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["validate", str(broken_source(tmp_path / "src", 1))])
    assert result.exit_code == 2
    first, quoted, caret = result.stderr.splitlines()[:3]
    assert first.startswith("source.yaml:4:12: ConfigMap Bad_0: metadata.name: 'Bad_0' is not a valid")
    assert quoted == "    metadata: {name: Bad_0}"
    assert caret == "    " + " " * 11 + "^"


def test_the_first_hundred_problems_then_how_many_more(tmp_path: Path) -> None:
    code, lines = validate("validate", str(broken_source(tmp_path / "src", 250)))
    assert code == 2
    assert len(lines) == 102
    assert lines[0].startswith("source.yaml:4:12: ConfigMap Bad_0: metadata.name: 'Bad_0' is not a valid")
    assert lines[99].startswith("source.yaml:400:12: ConfigMap Bad_99: metadata.name: 'Bad_99'")
    assert lines[100] == "… and 150 more problems (run with --debug to list them all)"
    assert lines[101] == "error: the source is invalid (250 problems); nothing was written"


def test_debug_prints_every_problem(tmp_path: Path) -> None:
    code, lines = validate("--debug", "validate", str(broken_source(tmp_path / "src", 150)))
    assert code == 2
    assert len(lines) == 151
    assert not any(line.startswith("…") for line in lines)


def test_a_hundred_problems_print_in_full(tmp_path: Path) -> None:
    code, lines = validate("validate", str(broken_source(tmp_path / "src", 100)))
    assert code == 2
    assert len(lines) == 101
    assert lines[-1] == "error: the source is invalid (100 problems); nothing was written"


def test_an_input_error_of_a_million_problems_is_cheap_until_printed() -> None:
    problems = [Problem(SourceLocation("f.yaml", line), "invalid") for line in range(1, 1_000_001)]
    error = InputError(problems)
    assert error.args == ("1000000 problems",)
    assert str(InputError(problems[:2])) == "f.yaml:1: invalid\nf.yaml:2: invalid"
    assert cli_errors.MAX_PRINTED_PROBLEMS == 100
