"""The packages' imports form no circle, and none is hidden inside a function.

The rule, for ``nova_gitops`` and ``nova_agent``:

- **No circle.** No module imports, directly or through others, a module that imports it back. Every import
  counts: at the top of a module, under ``if TYPE_CHECKING:`` and inside a function alike, so an import
  moved into a function (or under ``TYPE_CHECKING``) to dodge a circle at import time is still found. When
  two modules need each other, what both need belongs in a third that imports neither.
- **Imports at the top.** A module imports the packages' own modules at its top, where a reader (and
  import-linter's layer contracts) sees what it stands on. The one exception is the command line's modules
  (``nova_gitops.cli.*`` and ``nova_agent.cli``): a command imports what it runs on (the scheduler, the
  workflows, GitPython, the kubernetes client) when it runs, so that ``nova-gitops --help`` and every other
  command's start-up stay fast (``python bench/startup.py``, a budget of 0.2 s).
"""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("nova_gitops", "nova_agent")
LAZY_IMPORTS_ALLOWED = ("nova_gitops.cli", "nova_agent.cli")
"""Modules (and packages, with every module below them) that may import the packages' modules inside a
function: the command line's, for start-up time (module docstring)."""


def cycles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    imports = {module: sorted(graph.find_modules_directly_imported_by(module)) for module in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(imports):
        if start in index:
            continue
        work = [(start, 0)]
        while work:
            module, position = work.pop()
            if position == 0:
                index[module] = low[module] = len(index)
                stack.append(module)
                on_stack.add(module)
            following = imports[module]
            if position < len(following):
                work.append((module, position + 1))
                imported = following[position]
                if imported not in index:
                    work.append((imported, 0))
                elif imported in on_stack:
                    low[module] = min(low[module], index[imported])
                continue
            if low[module] == index[module]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == module:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[module])
    return found


def test_the_packages_import_no_module_back() -> None:
    graph = grimp.build_graph(*PACKAGES)
    described = []
    for component in cycles(graph):
        members = set(component)
        lines = [
            f"  {importer} -> {imported} (line {detail['line_number']}: {detail['line_contents']})"
            for importer in component
            for imported in sorted(graph.find_modules_directly_imported_by(importer) & members)
            for detail in graph.get_import_details(importer=importer, imported=imported)
        ]
        described.append("\n".join([" <-> ".join(component), *lines]))
    assert not described, "import circles:\n" + "\n".join(described)


def test_cycles_finds_a_circle_through_three_modules() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "b", "c", "d"):
        graph.add_module(module)
    graph.add_import(importer="a", imported="b")
    graph.add_import(importer="b", imported="c")
    graph.add_import(importer="c", imported="a")
    graph.add_import(importer="c", imported="d")
    assert cycles(graph) == [["a", "b", "c"]]


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _own(node: ast.Import | ast.ImportFrom) -> bool:
    if isinstance(node, ast.ImportFrom):
        return node.level > 0 or (node.module or "").split(".")[0] in PACKAGES
    return any(alias.name.split(".")[0] in PACKAGES for alias in node.names)


def lazy_imports(path: Path) -> list[str]:
    """``line: statement`` for each import of the packages' modules inside a function of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = set()
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom) and _own(node):
                    found.add((node.lineno, ast.unparse(node)))
    return [f"{line}: {statement}" for line, statement in sorted(found)]


def _allowed(module: str) -> bool:
    return any(module == allowed or module.startswith(allowed + ".") for allowed in LAZY_IMPORTS_ALLOWED)


@pytest.mark.parametrize("package", PACKAGES)
def test_modules_import_the_packages_at_their_top(package: str) -> None:
    found = [
        f"{path.relative_to(ROOT)}:{where}"
        for path in sorted((ROOT / package).rglob("*.py"))
        if not _allowed(_module_name(path))
        for where in lazy_imports(path)
    ]
    assert not found, "imports inside functions (module docstring says why not):\n" + "\n".join(found)


def test_lazy_imports_finds_an_import_in_a_method(tmp_path: Path) -> None:
    module = tmp_path / "example.py"
    module.write_text(
        "import os\n\nclass A:\n    def run(self):\n        from nova_gitops.api import texts\n"
        "        import json\n        return texts, json, os\n",
        encoding="utf-8",
    )
    assert lazy_imports(module) == ["5: from nova_gitops.api import texts"]
