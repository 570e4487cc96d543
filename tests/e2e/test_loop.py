"""End to end: source repo → controller → rendered repo → two agents on two simulated clusters → status →
reschedule, every piece real (git over file://, the controller, nova-agent, the kubernetes client against the
fake API server in simulated-cluster mode), stepped with fake clocks so nothing sleeps.

Behaviours covered:
- workloads with no policy are unscheduled and reach no cluster; pushing the policies places the platform
  on both clusters and one shop colour on each, the agents apply them and the pods run;
- the same inputs make no new commit;
- when wlc-2's nodes fill up its colour's pods stay Pending; after the pending timeout (not before) wlc-2's
  agent reports a reschedule request; the very next reconcile moves the group to wlc-1 with a commit that
  quotes the reason; wlc-1's agent applies it and wlc-2's agent prunes it; room coming back on wlc-2 does
  not move it back;
- delegated mode: agents never apply; rendered objects carry the target-cluster label and
  `nova.elotl.co/schedule: "true"`; groups are `delegated`; a Divide spread renders each cluster's share; an
  external orchestrator applies the render and the agents report the health of what it applied;
- webhook: with the loop running and no poll due, a push announced with a forged or missing signature is
  refused (403, 401) and triggers nothing; the same push correctly signed is rendered and reaches a cluster.
"""

from __future__ import annotations

import io
import json
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from nova_gitops.controller import webhook
from nova_gitops.controller.logs import JsonLog
from nova_gitops.controller.ports import MonotonicClock
from nova_gitops.controller.settings import Address, WebhookSecrets
from nova_gitops.workflows.publishing import Outcome
from tests.e2e import manifests
from tests.e2e.localloop import LocalLoop, git

pytestmark = pytest.mark.fake_only(
    "steps two simulated clusters on fake clocks (LocalLoop): the pending timeout passes without waiting, "
    "and fill_nodes takes their room"
)


@pytest.fixture
def loop(tmp_path: Path) -> Iterator[LocalLoop]:
    built = LocalLoop(tmp_path, controller_log=JsonLog(io.StringIO()))
    yield built
    built.close()


def colours_by_cluster(loop: LocalLoop) -> dict[str, list[str]]:
    return {name: sorted(cluster.workloads()) for name, cluster in loop.clusters.items()}


def group_of(loop: LocalLoop, cluster: str) -> str:
    [name] = [name for name, group in loop.placement().items() if group["clusters"] == [cluster]]
    return name


def test_push_place_fill_reschedule_prune(loop: LocalLoop) -> None:
    loop.source.push(manifests.APPS, "the shop and the platform, no policy yet")
    outcome = loop.reconcile()
    assert outcome.unscheduled == 6
    loop.agents()
    assert colours_by_cluster(loop) == {"wlc-1": [], "wlc-2": []}

    loop.source.push(manifests.POLICIES, "policies: platform everywhere, shop by colour")
    outcome = loop.reconcile()
    assert outcome.outcome is Outcome.PUBLISHED and outcome.unscheduled == 0
    passes = loop.agents()
    assert all(len(p.sync.applied) == 7 for p in passes.values() if p.sync is not None)
    assert colours_by_cluster(loop) == {"wlc-1": ["shop/blue-web"], "wlc-2": ["shop/green-web"]}
    for cluster in loop.clusters.values():
        assert cluster.pods("Pending") == []
        workloads = loop.report(cluster.name)["status"]["workloads"]
        assert workloads and all(entry["healthy"] for entry in workloads), workloads
    assert loop.reconcile().outcome is Outcome.UNCHANGED, "the same inputs make no new commit"

    moving = group_of(loop, "wlc-2")
    wlc2 = loop.clusters["wlc-2"]
    evicted = wlc2.sim.fill_nodes()
    assert any(name.startswith("shop/green-web-") for name in evicted)
    loop.agents()
    assert len([p for p in wlc2.pods("Pending") if p["metadata"]["namespace"] == "shop"]) == 2
    assert loop.report("wlc-2")["status"]["rescheduleRequests"] == [], "pending timeout not reached yet"

    loop.advance(31)
    loop.agents()
    [request] = loop.report("wlc-2")["status"]["rescheduleRequests"]
    assert request["group"] == moving
    assert request["reason"] == "deployment shop/green-web does not have minimum replicas available"
    outcome = loop.reconcile()  # the first reconcile after the report: within one controller interval
    assert outcome.outcome is Outcome.PUBLISHED and outcome.moved == 1
    assert loop.placement()[moving]["clusters"] == ["wlc-1"]
    assert f'cluster wlc-2 reported "{request["reason"]}"' in loop.head_message()

    passes = loop.agents()
    wlc1_sync, wlc2_sync = passes["wlc-1"].sync, passes["wlc-2"].sync
    assert wlc1_sync is not None and [ref.name for ref in wlc1_sync.applied] == ["green-web"]
    assert wlc2_sync is not None and sorted(str(ref) for ref in wlc2_sync.pruned) == [
        "Deployment shop/green-web",
        "Namespace shop",
    ]
    assert colours_by_cluster(loop) == {"wlc-1": ["shop/blue-web", "shop/green-web"], "wlc-2": []}
    assert loop.clusters["wlc-1"].pods("Pending") == []

    wlc2.sim.release()
    loop.advance(5)
    loop.agents()
    outcome = loop.reconcile()
    assert outcome.moved == 0, "room coming back does not move the group back (stickiness, cool-down)"
    assert loop.placement()[moving]["clusters"] == ["wlc-1"]


WEB_SPREAD_POLICY = """\
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata:
  name: web-spread
spec:
  namespaceSelector:
    matchLabels:
      kubernetes.io/metadata.name: web
  spreadConstraints:
    spreadMode: Divide
    topologyKey: kubernetes.io/metadata.name
  resourceSelectors:
    labelSelectors:
    - matchLabels:
        app: storefront
"""

STOREFRONT = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: storefront
  namespace: web
  labels: {app: storefront}
spec:
  replicas: 5
  selector:
    matchLabels: {app: storefront}
  template:
    metadata:
      labels: {app: storefront}
    spec:
      containers:
      - name: web
        image: registry.example/storefront:2.1
        resources:
          requests: {cpu: 100m, memory: 64Mi}
"""


def test_delegated_mode_renders_for_an_external_orchestrator(tmp_path: Path) -> None:
    loop = LocalLoop(tmp_path, delegated=True, controller_log=JsonLog(io.StringIO()))
    try:
        files = {
            **manifests.APPS,
            **manifests.POLICIES,
            "policies/web.yaml": WEB_SPREAD_POLICY,
            "apps/web.yaml": STOREFRONT,
        }
        loop.source.push(files, "everything, for Argo CD to apply")
        loop.agents()  # the agents report their clusters' capacity: the inventory
        assert loop.reconcile().outcome is Outcome.PUBLISHED
        assert {group["status"] for group in loop.placement().values()} == {"delegated"}
        passes = loop.agents()
        assert all(p.sync is None for p in passes.values()), "delegated agents never apply"
        assert all(cluster.server.objects("deployments.apps") == [] for cluster in loop.clusters.values())

        rendered = loop.show("clusters/wlc-1/web/deployment-storefront.yaml")
        assert "nova.elotl.co/target-cluster: wlc-1" in rendered
        assert "nova.elotl.co/schedule: 'true'" in rendered or 'nova.elotl.co/schedule: "true"' in rendered
        for name in loop.clusters:
            assert loop.external_apply(name) > 0
        loop.agents()
        replicas = {
            name: cluster.workloads()["web/storefront"]["status"]["readyReplicas"]
            for name, cluster in loop.clusters.items()
        }
        assert sorted(replicas.values()) == [2, 3] and sum(replicas.values()) == 5
        for name in loop.clusters:
            reported = {
                (entry["kind"], entry["namespace"], entry["name"]): entry["healthy"]
                for entry in loop.report(name)["status"]["workloads"]
            }
            assert reported[("Deployment", "web", "storefront")] is True
            assert all(reported.values()), reported
    finally:
        loop.close()


def _post(port: int, body: bytes, headers: dict[str, str]) -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/", data=body, headers=headers, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as error:
        return int(error.code)


def test_a_signed_webhook_push_reaches_the_clusters_and_a_badly_signed_one_is_refused(tmp_path: Path) -> None:
    secret = "e2e-webhook-secret"
    loop = LocalLoop(
        tmp_path,
        controller_clock=MonotonicClock(),
        controller_settings={
            "interval": 3600.0,  # no poll during the test: only the webhook can wake the loop
            "debounce": 0.05,
            "webhook_secrets": WebhookSecrets(github=secret),
        },
        controller_log=JsonLog(io.StringIO()),
    )
    receiver = webhook.webhook_server(
        Address("127.0.0.1", 0),
        loop.settings.webhook_secrets,
        loop.controller.triggers,
        JsonLog(io.StringIO()),
    ).start()
    stop = threading.Event()
    thread = threading.Thread(target=loop.controller.run, args=(stop,), daemon=True)
    try:
        loop.source.push({**manifests.APPS, **manifests.POLICIES}, "the shop")
        loop.agents()
        thread.start()
        deadline = time.monotonic() + 20
        while "PLACEMENT.md" not in _listing(loop) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert "PLACEMENT.md" in _listing(loop), "the first render was not committed within 20 s"
        first = loop.head_message()
        loop.source.push(
            {"apps/shop-blue.yaml": manifests.shop_colour("blue", replicas=3)}, "blue: 3 replicas"
        )
        payload = json.dumps({"ref": "refs/heads/main"}).encode()
        forged = {"X-Hub-Signature-256": "sha256=" + "0" * 64, "Content-Type": "application/json"}
        assert _post(receiver.port, payload, forged) == 403
        assert _post(receiver.port, payload, {"Content-Type": "application/json"}) == 401
        assert (
            loop.controller.metrics.value("nova_controller_triggers_total") == 0
            and loop.head_message() == first
        )
        signed = {"X-Hub-Signature-256": "sha256=" + webhook.hmac_sha256(secret, payload)}
        assert _post(receiver.port, payload, signed) == 202
        while loop.head_message() == first and time.monotonic() < deadline:
            time.sleep(0.02)
        assert loop.head_message() != first, "the signed push was rendered"
        loop.agents()
        blue = next(c for c in loop.clusters.values() if "shop/blue-web" in c.workloads())
        assert blue.workloads()["shop/blue-web"]["status"]["readyReplicas"] == 3
    finally:
        stop.set()
        loop.controller.triggers.put("stop")
        thread.join(timeout=10)
        receiver.close()
        loop.close()


def _listing(loop: LocalLoop) -> str:
    try:
        return git(loop.rendered, "ls-tree", "--name-only", "main")
    except subprocess.CalledProcessError:
        return ""
