"""``api.placeholders``: a problem a ``${VAR}`` template variable caused says so first (issue 22, item 3).

Behaviours covered: a problem whose message or quoted line holds ``${NAME}`` (or envsubst's
``${NAME:-default}``) starts by naming the variable and envsubst, the original message after it; ``$NAME``
and a ``$`` alone are not variables here; a problem is noted once; others are untouched; the search is
bounded on hostile text.
"""

from __future__ import annotations

import pytest

from nova_gitops.api import placeholders
from nova_gitops.api.problems import Problem, SourceLocation

AT = SourceLocation("policy.yaml", 21)


@pytest.mark.parametrize(
    ("message", "quoted", "variable"),
    [
        ("invalid label value '${NOVA_WORKLOAD_CLUSTER_1}': ...", None, "${NOVA_WORKLOAD_CLUSTER_1}"),
        ("invalid YAML: while parsing a flow sequence", "  values: [${A}, ${B}]", "${A}"),
        ("'${CLUSTER:-wlc-1}' is not a cluster name", None, "${CLUSTER:-wlc-1}"),
        ("'$NOVA_WORKLOAD_CLUSTER_1' is not a cluster name", None, None),
        ("costs $5 {a}", "x: ${}", None),
        ("'${1X}' is not a name", None, None),
    ],
)
def test_a_problem_names_its_variable_first(message: str, quoted: str | None, variable: str | None) -> None:
    problem = Problem(AT, message, "spec.x", quoted=quoted, column=3)
    noted = placeholders.noted(problem)
    if variable is None:
        assert noted == problem and noted.message == message
        return
    assert noted.message == (
        f"the file holds an unexpanded variable {variable}: Nova's examples pass through envsubst first "
        f"(envsubst < policy.yaml); as written, {message}"
    )
    assert (noted.location, noted.field, noted.column, noted.quoted) == (AT, "spec.x", 3, quoted)
    assert placeholders.noted(noted) == noted  # once


def test_hostile_text_is_searched_in_bounded_time() -> None:
    text = "${A:-" + "x" * 200_000  # no closing brace: the default part is bounded, so is the search
    assert placeholders.placeholder_in(text) is None
    assert placeholders.placeholder_in("${" * 100_000) is None
