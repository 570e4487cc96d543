"""``rollout/requests.yaml`` that does not read holds the rollout paused (issue 21 item 6).

Behaviours covered:
- a merge-conflict marker, ``paused: "true"`` (a string), an unknown field, a promote without a full
  commit id, a time that is not RFC 3339, two documents, bytes that are not UTF-8: each reads as a pause
  whose reason names the file and line, and nothing in such a file is promoted, resumed or aborted;
- changing any one field of a clean file to a value of another type is never ignored (hypothesis);
- a clean file written by the commands reads back as exactly what was meant (hypothesis);
- a step on requests that do not read releases nothing through a gate and no remedial move, says why in
  the wave's reason, and tells it in the decision's notes and ``requests_problem`` (the log and the metric).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from nova_gitops.rollouts import records
from nova_gitops.rollouts.records import Requests, Resume
from tests.unit.rollouts.fleets import NEW, Fleet, wave
from tests.unit.rollouts.test_health_and_records import commits, moments, names

HEAD = "apiVersion: gitops.nova.elotl.co/v1alpha1\nkind: RolloutRequests\n"
REVISION = "9f1c2d3e" * 5


@pytest.mark.parametrize(
    ("text", "why"),
    [
        (
            f"{HEAD}<<<<<<< HEAD\npaused: true\n=======\npaused: false\n>>>>>>> theirs\n",
            "rollout/requests.yaml:3: a merge-conflict marker",
        ),
        (f'{HEAD}paused: "true"\n', "rollout/requests.yaml:3: paused: must be true or false, not the string"),
        (f"{HEAD}paused: 1\n", "rollout/requests.yaml:3: paused: must be true or false, not the number 1"),
        (f"{HEAD}pasued: true\n", "rollout/requests.yaml:3: pasued: unknown field; did you mean paused?"),
        (
            f"{HEAD}promote: [{{revision: {REVISION}, wave: canary}}, {{revision: 9f1c, wave: prod}}]\n",
            "rollout/requests.yaml:3: promote[1].revision: must be a full commit id",
        ),
        (f"{HEAD}promote: {{revision: {REVISION}, wave: canary}}\n", "promote: must be a list"),
        (
            f"{HEAD}resume: {{revision: {REVISION}, wave: prod, at: yesterday}}\n",
            "rollout/requests.yaml:3: resume.at: must be an RFC 3339 time",
        ),
        (f"{HEAD}abort: {REVISION}\n", "rollout/requests.yaml:3: abort: must be a mapping of revision"),
        (f"{HEAD}abort: {{}}\n", "abort: revision is required"),
        (f"{HEAD}pausedReason: [a]\n", "pausedReason: must be a string, not a list"),
        (f"{HEAD}---\n{HEAD}", "one document expected, found 2"),
        ("apiVersion: v1\nkind: RolloutRequests\n", "apiVersion: must be gitops.nova.elotl.co/v1alpha1"),
        ("paused: false\n", "rollout/requests.yaml:1: apiVersion is required"),
        ("- paused\n", "rollout/requests.yaml:1:"),
        (f"{HEAD}paused: [\n", "rollout/requests.yaml:"),
        (b"\xff\xfe paused", "rollout/requests.yaml: not UTF-8 text"),
    ],
)
def test_a_file_that_does_not_read_is_a_pause_that_says_why(text: str | bytes, why: str) -> None:
    if (
        isinstance(text, str)
        and text.startswith(HEAD)
        and not any(key in text for key in ("promote", "abort", "---", "[\n"))
    ):  # a good promote and abort beside the bad field: neither acts
        text += f"promote: [{{revision: {REVISION}, wave: canary}}]\nabort: {{revision: {REVISION}}}\n"
    found = records.read_requests(text)
    assert why in found.unreadable, found.unreadable
    assert found.paused and why in found.paused_reason
    assert (found.promotes, found.abort, found.resume) == (frozenset(), "", None)


def test_no_file_and_an_empty_file_are_no_request() -> None:
    assert records.read_requests(None) == Requests()
    assert records.read_requests("") == Requests()
    assert records.read_requests(b"# nothing yet\n") == Requests()


def test_a_clean_file_is_read() -> None:
    text = (
        f"{HEAD}paused: true\npausedReason: change freeze\n"
        f'resume: {{revision: {REVISION}, wave: prod, at: "2026-01-01T00:00:00Z"}}\n'
        f"promote: [{{revision: {REVISION}, wave: canary}}]\nabort: {{revision: {REVISION}}}\n"
    )
    found = records.read_requests(text)
    assert found.unreadable == "" and found.paused and found.paused_reason == "change freeze"
    assert found.resume is not None and (found.resume.revision, found.resume.wave) == (REVISION, "prod")
    assert found.promotes == {(REVISION, "canary")} and found.abort == REVISION


CLEAN: dict[str, Any] = {
    "apiVersion": records.API_VERSION,
    "kind": "RolloutRequests",
    "paused": False,
    "pausedReason": "alice",
    "resume": {"revision": REVISION, "wave": "prod", "at": "2026-01-01T00:00:00Z"},
    "promote": [{"revision": REVISION, "wave": "canary"}],
    "abort": {"revision": REVISION},
}
PATHS = [
    ("paused",),
    ("pausedReason",),
    ("resume",),
    ("resume", "revision"),
    ("resume", "wave"),
    ("resume", "at"),
    ("promote",),
    ("promote", 0),
    ("promote", 0, "revision"),
    ("promote", 0, "wave"),
    ("abort",),
    ("abort", "revision"),
    ("kind",),
    ("apiVersion",),
]
others = st.one_of(
    st.booleans(),
    st.integers(-3, 3),
    st.just(None),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


@given(st.sampled_from(PATHS), others)
def test_a_field_of_another_type_is_never_ignored(path: tuple[str | int, ...], value: object) -> None:
    data = yaml.safe_load(yaml.safe_dump(CLEAN))
    holder: Any = data
    for key in path[:-1]:
        holder = holder[key]
    original = holder[path[-1]]
    if type(value) is type(original) and not isinstance(original, str | bool):
        return  # the same type (a list for a list): not a wrong type
    if isinstance(original, bool) and isinstance(value, bool):
        return
    if isinstance(value, str) and (path[-1] == "pausedReason" or (path[-1] == "wave" and value)):
        return  # any text is a reason, any non-empty text a wave's name
    holder[path[-1]] = value
    found = records.read_requests(yaml.safe_dump(data))
    assert found.unreadable, f"{path} = {value!r} was ignored"
    assert found.paused and not found.promotes and not found.abort


@given(
    st.builds(
        Requests,
        st.booleans(),
        st.text(max_size=20),
        st.none() | st.builds(Resume, commits, names, moments),
        st.frozensets(st.tuples(commits, names), max_size=3),
        st.sampled_from(["", "9f1c" * 10]),
    )
)
def test_what_the_commands_write_reads_back_as_meant(requests: Requests) -> None:
    text = yaml.safe_dump(records.requests_to_data(requests), sort_keys=False)
    assert records.read_requests(text) == requests


def test_a_step_on_unreadable_requests_releases_nothing_and_says_why() -> None:
    fleet = Fleet((wave("canary", "c1"), wave("prod", "p1")))
    fleet.remedial.add("p1")
    fleet.requests = records.read_requests(f'{HEAD}paused: "true"\n')
    first = fleet.step()
    assert first.moves == ()  # not the canary, not even p1's remedial move
    reason = fleet.reason(first, "canary")
    assert reason.startswith("paused: the requests do not read: rollout/requests.yaml:3: paused: ")
    assert first.paused and first.requests_problem.startswith("rollout/requests.yaml:3:")
    assert first.notes == (f"rollout paused: the requests do not read: {first.requests_problem}",)
    fleet.requests = Requests()  # fixed: the rollout goes on
    fleet.remedial.clear()
    fixed = fleet.step(timedelta(minutes=1))
    assert {move.cluster: move.commit for move in fixed.moves} == {"c1": NEW}
    assert fixed.requests_problem == "" and fixed.notes == ()


def test_a_mapping_without_api_version_is_a_problem_not_a_crash() -> None:
    """Review of issue 21: ``requests_problems`` indexed ``apiVersion`` when it was absent (KeyError). The
    loader asks for it first when a file is read, but the check stands on its own."""
    assert records.requests_problems({"kind": "RolloutRequests", "paused": True}) == [
        ("apiVersion", "must be gitops.nova.elotl.co/v1alpha1, not given")
    ]
    assert records.requests_problems({"kind": "RolloutRequests", "apiVersion": None})[0][1].endswith(
        "not nothing (null)"
    )
