"""Reading a report for a gate, and the rollout record and requests kept in git.

Behaviours covered:
- ``facts_from_status`` reads syncedRevision, workloads (with and without ``revision``), lastError and
  reschedule requests from a report, and reads values of the wrong type as absent;
- Degraded is a table of conditions and reasons waiting will not cure; rolling-out reasons only wait;
- the record and the requests survive a round trip through their YAML mappings (hypothesis); an
  unreadable record reads as empty (a rollout starts over); a requests file that does not read is a pause
  and nothing is promoted or aborted (more in test_requests_failsafe.py).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import yaml
from hypothesis import given
from hypothesis import strategies as st

from nova_gitops.rollouts import health, records
from nova_gitops.rollouts.records import Record, Requests, Resume, WaveRecord


def test_facts_are_read_from_a_report() -> None:
    status = yaml.safe_load(
        """
        syncedRevision: 9f1c
        workloads:
        - {apiVersion: apps/v1, kind: Deployment, namespace: shop, name: web, healthy: true, revision: 9f1c,
           condition: Available, reason: MinimumReplicasAvailable}
        - {apiVersion: v1, kind: PersistentVolumeClaim, namespace: shop, name: data, healthy: "yes"}
        - not a mapping
        rescheduleRequests: [{apiVersion: apps/v1, kind: Deployment, namespace: shop, name: api}]
        lastError: 7
        """
    )
    facts = health.facts_from_status(status)
    assert (
        facts.synced_revision == "9f1c"
        and facts.last_error == ""
        and facts.pending == ("Deployment shop/api",)
    )
    web, data = facts.workloads
    assert web.healthy and web.revision == "9f1c"
    assert not data.healthy and data.revision is None
    assert health.facts_from_status({}) == health.ClusterFacts()


def test_degraded_is_what_waiting_will_not_cure() -> None:
    def entry(condition: str, reason: str) -> health.WorkloadFacts:
        return health.WorkloadFacts("Deployment", "shop", "web", False, "r", condition, reason)

    assert entry("Progressing", "ProgressDeadlineExceeded").degraded
    assert entry("Failed", "BackoffLimitExceeded").degraded
    assert entry("ContainersReady", "CrashLoopBackOff").degraded
    assert not entry("Available", "MinimumReplicasUnavailable").degraded
    assert not entry("Progressing", "RolloutInProgress").degraded


def test_no_report_waits() -> None:
    assert health.judge("c1", None, "abc") == health.Verdict("waiting", "c1: no report yet")


moments = st.datetimes(
    min_value=datetime(2020, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
).map(lambda moment: moment.replace(microsecond=0))
commits = st.text("0123456789abcdef", min_size=40, max_size=40)
names = st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True)
wave_records = st.builds(
    WaveRecord,
    names,
    st.none() | moments,
    st.none() | moments,
    st.none() | moments,
    st.none() | moments,
    st.none() | moments,
    st.text(max_size=20),
    st.booleans(),
    st.none() | moments,
)


@given(
    st.builds(
        Record,
        commits,
        st.none() | moments,
        st.sampled_from(records.OUTCOMES),
        st.lists(wave_records, max_size=4).map(tuple),
        st.dictionaries(names, st.none() | commits, max_size=4),
        st.lists(names, max_size=3, unique=True).map(lambda found: tuple(sorted(found))),
    )
)
def test_a_record_survives_its_yaml(record: Record) -> None:
    text = yaml.safe_dump(records.record_to_data(record), sort_keys=False)
    assert records.record_from_data(yaml.safe_load(text)) == record


def test_unreadable_files_read_as_nothing() -> None:
    assert records.record_from_data({"kind": "Other"}) == Record()
    assert records.record_from_data({"kind": "RolloutRecord", "waves": 5, "promote": 3}) == Record()
    for text in ("- paused\n", "kind: RolloutRequests\npaused: yes\npromote: 3\n"):
        found = records.read_requests(text)
        assert found.paused and found.unreadable and not found.promotes


def test_requests_are_read() -> None:
    at = datetime(2026, 1, 1, tzinfo=UTC)
    data = yaml.safe_load(
        """
        paused: true
        pausedReason: change freeze
        resume: {revision: abc, wave: prod, at: "2026-01-01T00:00:00Z"}
        promote: [{revision: abc, wave: canary}, {revision: abc}]
        abort: {revision: abc}
        """
    )
    assert records.requests_from_data(data) == Requests(
        True, "change freeze", Resume("abc", "prod", at), frozenset({("abc", "canary")}), "abc"
    )
    assert records.parse_time("2026-01-01T00:00:00+01:00") == at - timedelta(hours=1)
    assert records.parse_time("yesterday") is None


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
def test_requests_survive_their_yaml(requests: Requests) -> None:
    """What ``nova-gitops rollout`` writes, the controller reads back as exactly what was meant."""
    text = yaml.safe_dump(records.requests_to_data(requests), sort_keys=False)
    assert records.requests_from_data(yaml.safe_load(text)) == requests
