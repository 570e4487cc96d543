"""``/metrics`` of ``nova-agent run``: passes, drift, replacements and pass latency, with prometheus_client.

prometheus_client does the exposition format, the HTTP endpoint and thread safety, which a hand-written
exposition would have to get right again; each agent keeps its own registry (tests run several agents in one
process, and nothing of the library's process-global default leaks in). Label values come from fixed sets
(outcomes, drift actions), so no series can grow with the cluster's content. Documented in docs/metrics.md.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server

from nova_agent.drifting import DriftedObject, DriftMode

OUTCOMES: Final = {0: "in_sync", 1: "object_failures", 2: "refused", 3: "unexpected", 4: "unreachable"}
PASS_BUCKETS: Final = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0)


class AgentMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.passes = Counter("nova_agent_passes", "Passes by outcome.", ["outcome"], registry=self.registry)
        self.pass_seconds = Histogram(
            "nova_agent_pass_duration_seconds",
            "Time of one pass: fetch, apply, prune, observe and report.",
            buckets=PASS_BUCKETS,
            registry=self.registry,
        )
        self.drifted = Gauge(
            "nova_agent_drifted_objects",
            "Objects whose live state departed from git in the last pass, by what was done about it.",
            ["action"],
            registry=self.registry,
        )
        self.drift_corrections = Counter(
            "nova_agent_drift_corrections", "Drifted objects put back.", registry=self.registry
        )
        self.replacements = Counter(
            "nova_agent_replacements",
            "Objects deleted and created again because a change of an immutable field was refused.",
            registry=self.registry,
        )
        self.last_in_sync = Gauge(
            "nova_agent_last_in_sync_timestamp_seconds",
            "Unix time at which the last pass that left the cluster in sync with git ended (0: none yet).",
            registry=self.registry,
        )
        for outcome in OUTCOMES.values():
            self.passes.labels(outcome)
        for mode in (DriftMode.CORRECT, DriftMode.WARN):
            self.drifted.labels(mode.value).set(0)

    def record_pass(
        self,
        exit_code: int,
        seconds: float,
        drifted: Sequence[DriftedObject],
        replaced: int,
        *,
        ended: datetime | None = None,
    ) -> None:
        """Count one pass; ``ended`` (when it ended, the agent's clock) marks an in-sync pass's time."""
        self.passes.labels(OUTCOMES.get(exit_code, "unexpected")).inc()
        if exit_code == 0:
            self.last_in_sync.set((ended or datetime.now(UTC)).timestamp())
        self.pass_seconds.observe(seconds)
        for mode in (DriftMode.CORRECT, DriftMode.WARN):
            self.drifted.labels(mode.value).set(sum(1 for found in drifted if found.mode is mode))
        self.drift_corrections.inc(sum(1 for found in drifted if found.corrected))
        self.replacements.inc(replaced)

    def serve(self, address: str) -> int:
        """Serve ``/metrics`` on ``host:port`` (``:port``: every interface) in a daemon thread; the port."""
        host, _, port = address.rpartition(":")
        server, _ = start_http_server(int(port), addr=host or "0.0.0.0", registry=self.registry)
        return int(server.server_port)
