"""Problems point at a line and a column, and quote the line with a caret under the column
(``Problem.pointed``):

- a YAML syntax error at libyaml's mark;
- a value the loader refuses (a duplicate key, a non-JSON tag) at its node;
- a validation problem that names a field at that field's key, or its list item;
- ``str(problem)`` stays the one ``file:line: message`` line that warnings and logs print;
- a file holding a Secret is never quoted (a line of it could be a value), though the column is given;
- a tab before the column stays a tab under it, so the caret lines up.
"""

from __future__ import annotations

from nova_gitops.api import inputs, loading
from nova_gitops.api.problems import Problem, SourceLocation
from nova_gitops.errors import InputError


def _problems(text: str) -> list[Problem]:
    documents, problems = loading.load_documents("app.yaml", text)
    if problems:
        return problems
    try:
        inputs.build_source_set(documents, texts={"app.yaml": text})
    except InputError as error:
        return list(error.problems)
    return []


def test_a_syntax_error_points_at_its_mark() -> None:
    (problem,) = _problems("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n   bad: [\n")
    assert problem.column is not None
    lines = problem.pointed().splitlines()
    assert lines[0].startswith(f"app.yaml:{problem.location.line}:{problem.column}: invalid YAML")


def test_a_duplicate_key_points_at_the_repeated_key() -> None:
    text = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\ndata:\n  a: '1'\n  a: '2'\n"
    (problem,) = _problems(text)
    assert problem.pointed().splitlines() == [
        "app.yaml:7:3: duplicate key 'a' (first at line 6): a mapping may hold each key once; "
        "kubectl refuses the file",
        "      a: '2'",
        "      ^",
    ]


def test_a_field_problem_points_at_the_fields_key_and_str_stays_one_line() -> None:
    text = (
        "apiVersion: policy.elotl.co/v1alpha1\nkind: SchedulePolicy\nmetadata:\n  name: p\nspec:\n"
        "  groupBy:\n    labelKey: 5\n"
    )
    (problem,) = _problems(text)
    assert str(problem).startswith("app.yaml:7: SchedulePolicy p: spec.groupBy.labelKey: must be text")
    first, quoted, caret = problem.pointed().splitlines()
    assert first.startswith("app.yaml:7:5: SchedulePolicy p: spec.groupBy.labelKey")
    assert quoted == "        labelKey: 5"
    assert caret == "        ^"


def test_a_secrets_file_is_never_quoted() -> None:
    text = "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\ndata:\n  password: not base64!\n"
    (problem,) = _problems(text)
    assert problem.column is not None and problem.quoted is None
    assert "not base64!" not in problem.pointed()


def test_a_tab_before_the_column_stays_a_tab_under_it() -> None:
    problem = Problem(SourceLocation("f.yaml", 3), "bad", column=3, quoted="\t x")
    assert problem.pointed() == "f.yaml:3:3: bad\n    \t x\n    \t ^"


def test_column_and_quote_do_not_make_another_problem() -> None:
    plain = Problem(SourceLocation("f.yaml", 3), "bad")
    assert plain == Problem(
        SourceLocation("f.yaml", 3), "bad", column=4, quoted="x"
    ) and plain.pointed() == str(plain)
