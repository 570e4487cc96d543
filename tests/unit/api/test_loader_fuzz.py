"""Structure-aware fuzz of the pure pipeline: a hostile source tree is an InputError, never a crash.

Behaviours covered:
- load → validate → plan → render of a source tree made from realistic documents (the example repository's
  SchedulePolicies, Clusters, Namespaces, Deployments, Jobs and ConfigMaps, plus a Secret), in which random
  nodes are replaced by hostile values (huge integers, lists and mappings where scalars go, null, booleans,
  floats, NaN and infinities, very long and non-ASCII text, negative numbers, duplicate keys, anchors and
  aliases, YAML tags such as ``!!python/object``, ``!!binary``, ``!!set``, timestamps), keys deleted and
  unknown keys added, either succeeds or raises ``errors.InputError`` and nothing else (a crash would exit 3,
  "this is a bug", instead of 2 with file:line);
- every problem of such an InputError names a file of the tree and a line inside it, and quotes no more than a
  short excerpt of any value.

The run is bounded and derandomized (no example database), so CI runs the same examples in well under a
minute. Set ``NOVA_FUZZ_EXAMPLES`` to run more, e.g. 5000 while hunting.
"""

from __future__ import annotations

import copy
import os
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nova_gitops.api import inputs, loading
from nova_gitops.api.problems import Problem, errors
from nova_gitops.errors import InputError
from nova_gitops.rendering import renders
from nova_gitops.rendering.reports import SourceInfo
from nova_gitops.scheduling import planning
from nova_gitops.scheduling.plans import PlanSettings, PreviousPlacement
from tests.fuzzing import NodePath, node_paths

EXAMPLE_SOURCE = Path(__file__).resolve().parents[3] / "examples" / "repo-layout" / "source"
EXAMPLES = int(os.environ.get("NOVA_FUZZ_EXAMPLES", "300"))

_SECRET: dict[str, Any] = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "db-credentials", "namespace": "shop", "labels": {"app": "shop"}},
    "type": "Opaque",
    "data": {"password": "aHVudGVyMg=="},
    "stringData": {"user": "shop"},
}


def _seed_documents() -> list[dict[str, Any]]:
    documents: list[dict[str, Any]] = []
    for path in sorted(EXAMPLE_SOURCE.rglob("*.yaml")):
        for body in yaml.load_all(path.read_text(encoding="utf-8"), Loader=yaml.CSafeLoader):
            if isinstance(body, dict):
                documents.append(body)
    documents.append(_SECRET)
    return documents


SEEDS = _seed_documents()

# Raw YAML put where a node was (flow style, so it fits a block value or a list item alike).
RAW_SNIPPETS = (
    "9" * 5000,
    "-" + "9" * 4400,
    "0x" + "f" * 3000,
    "0" + "7" * 2000,
    "1" + ":59" * 300,
    "1.0e+999",
    "-.inf",
    ".nan",
    "!!binary aGVsbG8=",
    "!!set {a: null, b: null}",
    "!!python/object/apply:os.system [echo pwned]",
    "!!python/name:os.system",
    "!!omap [{a: 1}, {b: 2}]",
    "!!timestamp 2024-01-01",
    "2024-01-01T00:00:00Z",
    "!custom {x: 1}",
    "{replicas: 3, replicas: 0}",
    "{a: {b: 1, b: 2}}",
    "[{name: x, name: y}]",
    "&anchor {x: 1}",
    "&loop [*loop]",
    "{<<: {cpu: 1}, cpu: 2}",
    "{? [a, b] : c}",
    "{? {a: 1} : c}",
    "=",
    "~",
    "''",
    "!!str 5",
    "!!int 5",
    "!!float 5",
    "!!null ''",
    "!!bool yes",
    "!!map {1: 2, true: 3, null: 4}",
    "!!seq []",
    "{1: a, 1.5: b, true: c, null: d}",
)
HOSTILE_VALUES: tuple[Any, ...] = (
    None,
    True,
    False,
    0,
    -1,
    -(2**63),
    2**64,
    10**300,
    1.5,
    -0.0,
    1e308,
    [],
    {},
    [[[["deep"]]]],
    {"a": {"b": {"c": []}}},
    [1, "two", None, {"three": 3}],
    "",
    " ",
    "x" * 100_000,
    "root:x:0:0:root:/root:/bin/bash\n" * 40,
    "Ünïcødé ☃ 𝔘 \u202e",
    "\x00\x01",
    "../../etc/passwd",
    "UPPER_Case.name",
    "-leading",
    "a" * 254,
    "kube-system",
    "default",
    "Deployment",
    "apps/v1",
    "v1",
    "100m",
    "-100m",
    "1e999",
    "9" * 5000,
    "Duplicate",
    "Divide",
    "True",
    "In",
    "spec.replicas",
    "metadata.name[",
    "bm90IGJhc2U2NA",
)
UNKNOWN_KEYS = ("extra", "spec", "metadata", "status", "replicas", "", "a.b/c", "x" * 300)


def _parent(root: Any, path: NodePath) -> Any:
    for step in path[:-1]:
        root = root[step]
    return root


OPERATIONS = ("replace", "replace", "raw", "raw", "delete", "add")


def _mutate(data: st.DataObject, body: dict[str, Any], raws: list[str]) -> Any:
    """``body`` with one node replaced by a hostile value or raw YAML, deleted, or given an unknown key."""
    root: Any = {"document": copy.deepcopy(body)}
    paths = node_paths(root["document"], ("document",))
    leaves = [path for path in paths if not isinstance(_parent(root, path)[path[-1]], dict | list)]
    path = data.draw(st.sampled_from(leaves if leaves and data.draw(st.booleans()) else paths))
    operation = data.draw(st.sampled_from(OPERATIONS))
    parent, last = _parent(root, path), path[-1]
    if operation == "replace":
        parent[last] = copy.deepcopy(data.draw(st.sampled_from(HOSTILE_VALUES)))
    elif operation == "raw":
        raws.append(data.draw(st.sampled_from(RAW_SNIPPETS)))
        parent[last] = f"RAWSNIPPET{len(raws) - 1}X"  # a plain word, replaced in the dumped text
    elif operation == "delete" and len(path) > 1:
        del parent[last]
    elif operation == "add" and isinstance(parent[last], dict):
        key = data.draw(st.sampled_from(UNKNOWN_KEYS))
        parent[last][key] = copy.deepcopy(data.draw(st.sampled_from(HOSTILE_VALUES)))
    return root["document"]


def _source_text(bodies: list[Any], raws: list[str], duplicate_line: int | None) -> str:
    text = yaml.dump_all(bodies, Dumper=yaml.CSafeDumper, sort_keys=False, allow_unicode=True, width=1 << 30)
    for index in range(len(raws)):
        text = text.replace(f"RAWSNIPPET{index}X", raws[index])
    if duplicate_line is not None:  # a block mapping's line written twice: a duplicate key at that depth
        lines = text.split("\n")
        keyed = [
            number for number, line in enumerate(lines) if ": " in line and not line.lstrip().startswith("-")
        ]
        if keyed:
            number = keyed[duplicate_line % len(keyed)]
            lines.insert(number + 1, lines[number])
            text = "\n".join(lines)
    return text


def run_pipeline(files: dict[str, str]) -> None:
    """What ``workflows.rendering.load_source_with_digests`` + ``render_source`` do, in memory."""
    documents = []
    problems: list[Problem] = []
    for name, text in files.items():
        found, found_problems = loading.load_documents(name, text)
        documents += found
        problems += found_problems
    if errors(problems):
        try:
            inputs.build_source_set(documents, texts=files)
        except InputError as more:
            problems += more.problems
        raise InputError(sorted(set(problems), key=lambda problem: (problem.location, problem.message)))
    source_set = inputs.build_source_set(documents, texts=files)
    plan = planning.plan(source_set, previous=PreviousPlacement.empty(), settings=PlanSettings())
    locations = {policy.name: policy.location for policy in source_set.policies}
    renders.render(plan, SourceInfo("fuzz", None), policy_locations=locations)


def _check_problems(error: InputError, files: dict[str, str]) -> None:
    for problem in error.problems:
        text = files.get(problem.location.file)
        assert text is not None, problem
        assert 1 <= problem.location.line <= text.count("\n") + 2, problem
        # No value is quoted whole: the longest hostile text is 100,000 characters.
        assert len(str(problem)) < 2_000, str(problem)[:300]


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_hostile_source_trees_are_input_errors_never_crashes(data: st.DataObject) -> None:
    bodies: list[Any] = list(SEEDS)
    if data.draw(st.booleans()):  # a part of the source only: policies or clusters may be missing
        bodies = data.draw(st.lists(st.sampled_from(SEEDS), min_size=1, max_size=8))
    raws: list[str] = []
    for _ in range(data.draw(st.integers(min_value=1, max_value=6))):
        index = data.draw(st.integers(min_value=0, max_value=len(bodies) - 1))
        bodies[index] = _mutate(data, bodies[index], raws)
    files = data.draw(st.integers(min_value=1, max_value=3))
    duplicate_line = data.draw(st.one_of(st.none(), st.integers(min_value=0, max_value=10_000)))
    tree: dict[str, str] = {}
    for index in range(files):
        chosen = bodies[index::files]
        if chosen:
            tree[f"dir{index}/file.yaml"] = _source_text(chosen, raws, duplicate_line if index == 0 else None)
    try:
        run_pipeline(tree)
    except InputError as error:
        _check_problems(error, tree)


def test_the_unmutated_seeds_render() -> None:
    """The fuzz starts from valid input, so what it finds is what the mutations broke."""
    run_pipeline({"seeds.yaml": _source_text(SEEDS, [], None)})
