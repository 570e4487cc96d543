"""Where the demo runs and how fast its clocks go: the simulated clusters, or two real ones.

On the simulated clusters (the default) the clocks are simulated: the agents' 30 s pending timeout and a
Deployment's 20 s progress deadline take no time, and every run prints the same. On real clusters
(``--kubeconfig-1``/``--kubeconfig-2``, or ``NOVA_DEMO_KUBECONFIG_1``/``_2``) time is the wall clock, so the
defaults are shorter (a 5 s pending timeout, a 10 s progress deadline) and the story waits for what it
shows; the flags ``--pending-timeout``, ``--bake-time`` and ``--progress-deadline`` set them on both.
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ENVIRONMENT = {
    "kubeconfig_1": "NOVA_DEMO_KUBECONFIG_1",
    "kubeconfig_2": "NOVA_DEMO_KUBECONFIG_2",
    "context_1": "NOVA_DEMO_CONTEXT_1",
    "context_2": "NOVA_DEMO_CONTEXT_2",
}
CLUSTERS = ("wlc-1", "wlc-2")


@dataclass(frozen=True, slots=True)
class Settings:
    kubeconfigs: Mapping[str, Any] | None  # cluster → tests.e2e.realloop.Kubeconfig; None: simulated
    stand_in: bool | None  # None: when a cluster has no nodes of its own
    image: str | None
    pending_timeout: int
    bake_time: int
    progress_deadline: int
    ui_listen: str | None = None  # the fleet view's PORT or HOST:PORT (docs/ui.md); None: none
    ui_step_seconds: float = 5.0  # with the view and no terminal: how long each step waits

    @property
    def real(self) -> bool:
        return self.kubeconfigs is not None

    def loop_options(self) -> dict[str, Any]:
        """What :class:`tests.e2e.realloop.RealLoop` takes besides the root, on real clusters."""
        if self.kubeconfigs is None:
            return {}
        return {"kubeconfigs": self.kubeconfigs, "stand_in": self.stand_in, "image": self.image}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    real = parser.add_argument_group(
        "real clusters",
        "two disposable clusters (the demo fills and empties them, and leaves them as it found them)",
    )
    for number in (1, 2):
        real.add_argument(
            f"--kubeconfig-{number}",
            metavar="PATH",
            help=f"the kubeconfig of cluster wlc-{number} (default: ${ENVIRONMENT[f'kubeconfig_{number}']})",
        )
        real.add_argument(
            f"--context-{number}",
            metavar="NAME",
            help=f"its context (default: ${ENVIRONMENT[f'context_{number}']}, else its current context)",
        )
    real.add_argument(
        "--stand-in-kubelet",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="register two 4-cpu nodes per cluster and run their pods with the test suite's stand-in kubelet "
        "(default: on a cluster without nodes of its own, as ../shared/realk8s starts them)",
    )
    real.add_argument(
        "--image",
        help="the image every workload runs instead of the examples' registry.example ones (default, on "
        "clusters with kubelets of their own: registry.k8s.io/pause:3.10)",
    )
    timing = parser.add_argument_group("timing (seconds)")
    timing.add_argument("--pending-timeout", type=int, help="the agents' (default: 30 simulated, 5 real)")
    timing.add_argument("--bake-time", type=int, default=5, help="the rollout's bakeTime (default: 5)")
    timing.add_argument(
        "--progress-deadline",
        type=int,
        help="the storefront's progressDeadlineSeconds (default: 20 simulated, 10 real)",
    )
    view = parser.add_argument_group("the fleet view (docs/ui.md)")
    view.add_argument(
        "--ui-listen",
        metavar="PORT",
        help="serve the controller's read-only web view (PORT: on 127.0.0.1, or HOST:PORT) and wait at each "
        "step: for Enter on a terminal, else --ui-step-seconds",
    )
    view.add_argument("--ui-step-seconds", type=float, default=5.0, help="(default: 5)")


def from_arguments(arguments: argparse.Namespace, environ: Mapping[str, str]) -> Settings:
    """The settings the flags ask for, the environment filling in what they leave out."""
    chosen = {
        key: getattr(arguments, key) or environ.get(variable) or None for key, variable in ENVIRONMENT.items()
    }
    kubeconfigs = None
    if chosen["kubeconfig_1"] or chosen["kubeconfig_2"]:
        if not (chosen["kubeconfig_1"] and chosen["kubeconfig_2"]):
            raise SystemExit(
                "the demo needs two clusters: give --kubeconfig-1 and --kubeconfig-2 (or neither)"
            )
        from tests.e2e.realloop import Kubeconfig

        kubeconfigs = {
            name: Kubeconfig(
                str(Path(chosen[f"kubeconfig_{number}"]).expanduser()), chosen[f"context_{number}"]
            )
            for number, name in enumerate(CLUSTERS, start=1)
        }
    real = kubeconfigs is not None
    return Settings(
        kubeconfigs=kubeconfigs,
        stand_in=arguments.stand_in_kubelet,
        image=arguments.image,
        pending_timeout=arguments.pending_timeout or (5 if real else 30),
        bake_time=arguments.bake_time,
        progress_deadline=arguments.progress_deadline or (10 if real else 20),
        ui_listen=arguments.ui_listen,
        ui_step_seconds=arguments.ui_step_seconds,
    )
