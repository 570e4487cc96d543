"""Only the tests that meet a real cluster, and how many did: CI's second pass (``.ci/run``), against the
control planes of ``../shared/realk8s``.

``python -m pytest -p tests.realclusters tests/`` with ``NOVA_TEST_KUBECONFIG`` set keeps the tests that
use the ``kube`` fixture (directly or through another, such as ``kubelet``) and, when two real clusters are
named (``tests/e2e/conftest.py``), those that use ``demo_clusters``; it deselects the others, which would
only run on the fake API server again. Its last line counts them::

    real clusters: 290 passed, 40 skipped (fake_only), 14 known differences, 0 failed

A ``fake_only`` test is skipped by the ``kube`` fixture, its reason saying which fault it needs; any other
skip is counted apart, so a test that silently stopped meeting the real cluster shows.

``--known-differences FILE`` (``.ci/real-cluster-differences``) lists tests a real server answers
differently from the fake (issue 23, item 4), each line a node id or a prefix of node ids (a file, a test
with all its parameters) and why. They are marked ``xfail`` (not strict: some depend on what earlier tests
left on the shared cluster) and counted apart; one that passes is counted as "passed anyway", so a fixed
difference shows until its line goes.
"""

from __future__ import annotations

import os
from collections import Counter

import pytest

# tests.fakekube.fixtures' variable; that module is not imported here, before pytest can rewrite its asserts
KUBECONFIG_VARIABLE = "NOVA_TEST_KUBECONFIG"
REAL_FIXTURES = frozenset({"kube", "kube_pair", "kubelet"})
DEMO_FIXTURE = "demo_clusters"

_outcomes: Counter[str] = Counter()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--known-differences",
        metavar="FILE",
        help="tests a real server answers differently from the fake: a node id (or prefix) and why a line",
    )


def known_differences(text: str) -> dict[str, str]:
    """Node id (or prefix) → why, from the file's lines (``#`` comments and blank lines skipped)."""
    found = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            node, _, why = line.strip().partition(" ")
            found[node] = why.strip()
    return found


def difference_of(nodeid: str, known: dict[str, str]) -> str | None:
    for prefix, why in known.items():
        if nodeid == prefix or nodeid.startswith((f"{prefix}::", f"{prefix}[")):
            return why
    return None


def pytest_configure(config: pytest.Config) -> None:
    if not os.environ.get(KUBECONFIG_VARIABLE):
        raise pytest.UsageError(
            f"tests.realclusters runs the tests against a real cluster: set {KUBECONFIG_VARIABLE} "
            "(source DIR/env after ../shared/realk8s/up DIR 2)"
        )


def meets_real_cluster(item: pytest.Item, demo_on_real: bool) -> bool:
    names = set(getattr(item, "fixturenames", ()))
    return bool(names & REAL_FIXTURES) or (demo_on_real and DEMO_FIXTURE in names)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    from tests.e2e.democlusters import demo_clusters_from

    demo_on_real = demo_clusters_from(os.environ).real
    kept = [item for item in items if meets_real_cluster(item, demo_on_real)]
    dropped = [item for item in items if not meets_real_cluster(item, demo_on_real)]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = kept
    listed = config.getoption("known_differences")
    if listed:
        with open(listed, encoding="utf-8") as lines:
            known = known_differences(lines.read())
        for item in kept:
            why = difference_of(item.nodeid, known)
            if why is not None:
                item.add_marker(pytest.mark.xfail(reason=f"known difference: {why}", strict=False))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if hasattr(report, "wasxfail"):
        if report.skipped:
            _outcomes["known"] += 1
        elif report.passed and report.when == "call":
            _outcomes["known passed"] += 1
    elif report.when == "call" and report.passed:
        _outcomes["passed"] += 1
    elif report.failed:
        _outcomes["failed"] += 1  # in setup, call or teardown: once per phase that failed
    elif report.skipped:
        reason = str(report.longrepr[2]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _outcomes["fake_only" if "fake_only" in reason else "other"] += 1


def summary() -> str:
    parts = [f"{_outcomes['passed']} passed", f"{_outcomes['fake_only']} skipped (fake_only)"]
    if _outcomes["known"]:
        parts.append(f"{_outcomes['known']} known differences")
    parts.append(f"{_outcomes['failed']} failed")
    if _outcomes["other"]:
        parts.append(f"{_outcomes['other']} skipped for another reason")
    if _outcomes["known passed"]:
        parts.append(f"{_outcomes['known passed']} known differences passed anyway")
    return "real clusters: " + ", ".join(parts)


def pytest_unconfigure(config: pytest.Config) -> None:
    """After pytest's own summary: the count, as the last line."""
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line(summary())
