"""The rollout side of the local loop (issue 12, docs/rollouts.md): the source of the waves story, a loop
whose agents follow their release branches, and what to look at in the rendered repository.

Shared by the waves demo (``examples/demo/run.py --waves``), its end-to-end test
(``tests/e2e/test_rollout_demo.py``) and the rollout figure of ``bench/loop.py``. Kept out of
``localloop.py`` so the loop itself stays the same for the stories without a strategy.

Why one clock for everything in the stepped story: the controller's rollout clock (bakes, health timeouts)
is the agents' and the simulated clusters' clock, so "healthy for 5 s" and "ProgressDeadlineExceeded after
20 s" happen when the story advances time, never by waiting. On real clusters (``waves_loop(kubeconfigs=)``,
``tests.e2e.realloop``) every clock is the wall clock: :func:`until` and :func:`until_complete` cycle until
the condition holds instead of counting cycles.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from nova_agent.clocks import FakeClock
from nova_gitops.controller import rolloutcommands
from nova_gitops.controller.rolloutstep import RECORD_PATH, ROLLOUT_BRANCH
from tests.e2e import manifests
from tests.e2e.localloop import LocalLoop, git
from tests.e2e.realloop import Kubeconfig, RealLoop

RELEASE_PREFIX = "nova/clusters/"
CANARY_LABELS = {"tier": "canary"}  # what `nova-agent --label tier=canary` reports for wlc-1
PROGRESS_DEADLINE_SECONDS = 20

WEB_POLICY = """\
# The storefront runs on every cluster (Duplicate spread): a change to it reaches all of them, wave by wave.
apiVersion: policy.elotl.co/v1alpha1
kind: SchedulePolicy
metadata:
  name: web-everywhere
spec:
  groupBy:
    labelKey: app.kubernetes.io/part-of
  spreadConstraints:
    spreadMode: Duplicate
    topologyKey: kubernetes.io/metadata.name
  resourceSelectors:
    labelSelectors:
    - matchLabels:
        app.kubernetes.io/part-of: web
"""


def strategy(
    waves: Iterable[tuple[str, Mapping[str, str]]] = (("canary", CANARY_LABELS),), bake_seconds: int = 5
) -> str:
    """A RolloutStrategy: the named waves by cluster labels, then the implicit ``others``; a 5 s bake."""
    listed = "".join(
        f"  - name: {name}\n    clusterSelector:\n      matchLabels: {{{_flow(labels)}}}\n"
        for name, labels in waves
    )
    return f"""\
apiVersion: gitops.nova.elotl.co/v1alpha1
kind: RolloutStrategy
metadata:
  name: fleet
spec:
  waves:
{listed}  bakeTime: {bake_seconds}s
  healthTimeout: 2m
  onFailure: pause
"""


def _flow(labels: Mapping[str, str]) -> str:
    return ", ".join(f"{key}: {value}" for key, value in labels.items())


def storefront(image_tag: str, cpu: str = "250m", progress_deadline: int = PROGRESS_DEADLINE_SECONDS) -> str:
    """The storefront at version ``image_tag``: its image's tag, and its pod template's
    ``app.kubernetes.io/version`` label, which tells the versions apart where every version runs one
    pullable image (the demo on clusters with kubelets of their own: ``tests.e2e.realloop``)."""
    return f"""\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: storefront
  namespace: web
  labels: {{app.kubernetes.io/part-of: web}}
spec:
  replicas: 2
  progressDeadlineSeconds: {progress_deadline}
  selector:
    matchLabels: {{app: storefront}}
  template:
    metadata:
      labels: {{app: storefront, app.kubernetes.io/version: "{image_tag}"}}
    spec:
      containers:
      - name: web
        image: registry.example/storefront:{image_tag}
        resources:
          requests: {{cpu: {cpu}, memory: 128Mi}}
"""


def source(bake_seconds: int = 5, progress_deadline: int = PROGRESS_DEADLINE_SECONDS) -> dict[str, str]:
    """The first push of the story: the platform, storefront 1.0, the policies and the strategy."""
    return {
        "apps/platform.yaml": manifests.PLATFORM,
        "apps/storefront.yaml": storefront("1.0", progress_deadline=progress_deadline),
        "policies/platform.yaml": manifests.PLATFORM_POLICY,
        "policies/web.yaml": WEB_POLICY,
        "rollout/strategy.yaml": strategy(bake_seconds=bake_seconds),
    }


SOURCE = source()


def waves_loop(
    root: Path,
    *,
    controller_log: Any = None,
    kubeconfigs: Mapping[str, Kubeconfig] | None = None,
    **real: Any,
) -> LocalLoop:
    """Two clusters, wlc-1 labelled canary; agents follow their release branches. Simulated, on one
    simulated clock; or, with ``kubeconfigs``, the real clusters they name, on the wall clock (``real``:
    :class:`RealLoop`'s options)."""
    labels = {
        "agent_settings": {"follow_release": True},
        "cluster_settings": {"wlc-1": {"cluster_labels": CANARY_LABELS}},
    }
    if kubeconfigs is not None:
        return RealLoop(root, kubeconfigs, controller_log=controller_log, **labels, **real)
    clock = FakeClock()
    return LocalLoop(root, agent_clock=clock, wall_clock=clock.now, controller_log=controller_log, **labels)


def released(loop: LocalLoop) -> dict[str, str]:
    """Cluster → the commit its release branch ``nova/clusters/<cluster>`` points at."""
    listed = git(loop.rendered, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads/")
    return {
        ref.removeprefix(RELEASE_PREFIX): sha
        for ref, sha in (line.split() for line in listed.splitlines())
        if ref.startswith(RELEASE_PREFIX)
    }


def head(loop: LocalLoop, ref: str = "main") -> str:
    return git(loop.rendered, "rev-parse", ref)


def record(loop: LocalLoop) -> dict[str, Any]:
    """The controller's rollout record, ``rollout/record.yaml`` on ``nova/rollout``."""
    document: dict[str, Any] = yaml.safe_load(loop.show(RECORD_PATH, ROLLOUT_BRANCH))
    return document


def images(loop: LocalLoop, name: str) -> dict[str, str]:
    """What a cluster runs: live Deployment ``namespace/name`` → its image."""
    return {
        key: body["spec"]["template"]["spec"]["containers"][0]["image"]
        for key, body in loop.clusters[name].workloads().items()
    }


def cycle(loop: LocalLoop, seconds: float = 1.0, times: int = 1) -> None:
    """``times`` rounds of: every agent passes (the cluster reacts), the controller reconciles (and takes
    its rollout step), then ``seconds`` pass on the shared clock."""
    for _ in range(times):
        loop.agents()
        loop.reconcile()
        loop.advance(seconds)


def until_complete(loop: LocalLoop, limit: int = 30) -> int:
    """Cycle (1 s each) until the record says the rollout is complete; how many cycles it took. On real
    clusters, cycle on the wall clock for ``limit`` × 4 seconds at most."""
    cycles = 0

    def complete() -> bool:
        nonlocal cycles
        cycle(loop)
        cycles += 1
        return record(loop).get("outcome") == "complete"

    if isinstance(loop, RealLoop):
        loop.until(lambda: None, complete, "the rollout to be complete", timeout=limit * 4.0)
        return cycles
    while cycles < limit:
        if complete():
            return cycles
    raise AssertionError(f"the rollout is not complete after {limit} cycles: {record(loop)}")


def until(
    loop: LocalLoop, condition: Callable[[], bool], what: str, cycles: int, seconds: float = 1.0
) -> None:
    """The story goes on until ``condition()``: on the simulated clock, ``cycles`` cycles of ``seconds``
    each, after which it must hold; on real clusters, cycles until it holds (2 minutes at most, plus the
    simulated time those cycles stand for)."""
    if isinstance(loop, RealLoop):
        loop.until(lambda: cycle(loop), condition, what, timeout=120.0 + cycles * seconds)
        return
    cycle(loop, seconds, cycles)
    if not condition():
        raise AssertionError(f"after {cycles} cycles of {seconds:g} s, still not {what}")


def request_abort(loop: LocalLoop, revision: str) -> str:
    """``nova-gitops rollout abort``, as the command runs it (``controller.rolloutcommands.request``): it
    commits ``abort: {revision: ...}`` to ``rollout/requests.yaml`` on ``nova/rollout`` of the rendered
    repository, with the person's git identity, for the rollout of ``main``'s head (which must be
    ``revision``)."""
    assert git(loop.rendered, "rev-parse", "main") == revision, "abort acts on the rollout of main's head"
    where = rolloutcommands.Where(
        repo_url=loop.rendered_url, source=loop.source.url, cache_dir=loop.root / "engineer-cache"
    )
    return rolloutcommands.request(where, "abort", now=loop.controller.wall_clock(), environ=ENGINEER)


ENGINEER = {"GIT_AUTHOR_NAME": "Release Engineer", "GIT_AUTHOR_EMAIL": "release@example.invalid"}


def rollout_metrics(loop: LocalLoop) -> list[str]:
    """The controller's ``nova_rollout_*`` lines of ``/metrics``."""
    return [
        line for line in loop.controller.metrics.exposition().splitlines() if line.startswith("nova_rollout_")
    ]
