"""Modules and functions of a size a person can hold in mind (docs/architecture.md, "Size exceptions"): no
module of the packages over 500 lines, no function over 60 lines (from its ``def`` to its last line,
decorators apart). A piece that grows past that is split along its seams, each file one job; the exceptions
are listed here with the reason, and in docs/architecture.md."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("nova_gitops", "nova_agent")
MODULE_LINES = 500
FUNCTION_LINES = 60
EXCEPTIONS = {
    "nova_gitops/cli/controller.py:controller_command": "30 click options, each into its settings",
}


def modules() -> list[Path]:
    return sorted(path for package in PACKAGES for path in (ROOT / package).rglob("*.py"))


def test_no_module_is_over_500_lines() -> None:
    long = {
        str(path.relative_to(ROOT)): lines
        for path in modules()
        if (lines := path.read_text(encoding="utf-8").count("\n")) > MODULE_LINES
    }
    assert long == {}


def test_no_function_is_over_60_lines_but_the_listed_exceptions() -> None:
    long: dict[str, int] = {}
    for path in modules():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
                lines = node.end_lineno - node.lineno + 1
                if lines > FUNCTION_LINES:
                    long[f"{path.relative_to(ROOT)}:{node.name}"] = lines
    assert set(long) == set(EXCEPTIONS), long
