"""What a kubelet writes for a pod in the state a test asks (``tests/realkube/podstates.py``), shared by the
stand-in kubelet and the fake's simulation: pure rules, checked on plain dicts.

Behaviours covered:
- a crash loop's restartCount follows kubelet's back-off (10 s doubling to 300 s) from the pod's start;
- ``exit-<n>`` ends the container for good under restartPolicy Never (Succeeded or Failed), or when it
  exits 0 under OnFailure; otherwise it is restarted: CrashLoopBackOff with that last exit code;
- an init container asked to fail keeps the pod Pending and not Initialized (Failed under Never), its app
  containers waiting in PodInitializing; a sidecar init container runs;
- the annotation names one state for every app container or states per container, and wins over images;
- the same pod at the same time gives the same status (conditions keep their transition time).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.realkube import podstates

START = datetime(2026, 1, 1, tzinfo=UTC)


def pod(*images: str, restart_policy: str = "Always", init: tuple[str, ...] = (), **annotations: str) -> Any:
    spec: dict[str, Any] = {
        "restartPolicy": restart_policy,
        "containers": [{"name": f"c{index}", "image": image} for index, image in enumerate(images)],
    }
    if init:
        spec["initContainers"] = [{"name": f"i{index}", "image": image} for index, image in enumerate(init)]
    metadata: dict[str, Any] = {"name": "p", "namespace": "ns", "uid": "u1"}
    if annotations:
        metadata["annotations"] = {podstates.STATE_ANNOTATION: annotations["state"]}
    return {"metadata": metadata, "spec": spec, "status": {"startTime": podstates.stamp(START)}}


def at(body: Any, seconds: float = 0) -> Any:
    return podstates.pod_status(body, "10.0.0.1", START + timedelta(seconds=seconds))


@pytest.mark.parametrize(
    ("seconds", "count", "back_off"),
    [
        (0, 1, 10),
        (9, 1, 10),
        (10, 2, 20),
        (29, 2, 20),
        (30, 3, 40),
        (70, 4, 80),
        (310, 6, 300),
        (610, 7, 300),
    ],
)
def test_a_crash_loop_restarts_with_kubelets_back_off(seconds: float, count: int, back_off: int) -> None:
    [container] = at(pod("x/crashloop"), seconds)["containerStatuses"]
    assert container["restartCount"] == count
    assert container["state"]["waiting"]["message"].startswith(f"back-off {back_off}s restarting failed")


@pytest.mark.parametrize(
    ("restart_policy", "image", "phase", "state"),
    [
        ("Never", "x/exit-0", "Succeeded", "terminated"),
        ("Never", "x/exit-3", "Failed", "terminated"),
        ("OnFailure", "x/exit-0", "Succeeded", "terminated"),
        ("OnFailure", "x/exit-3", "Running", "waiting"),
        ("Always", "x/exit-0", "Running", "waiting"),
    ],
)
def test_an_exit_ends_or_restarts_by_restart_policy(
    restart_policy: str, image: str, phase: str, state: str
) -> None:
    status = at(pod(image, restart_policy=restart_policy))
    [container] = status["containerStatuses"]
    assert (status["phase"], next(iter(container["state"]))) == (phase, state)
    code = int(image.rsplit("-", 1)[1])
    ended = container["state"].get("terminated") or container["lastState"]["terminated"]
    assert ended["exitCode"] == code and ended["reason"] == ("Completed" if code == 0 else "Error")


@pytest.mark.parametrize(("restart_policy", "phase"), [("Always", "Pending"), ("Never", "Failed")])
def test_a_failing_init_container_holds_the_pod(restart_policy: str, phase: str) -> None:
    status = at(pod("x/app", init=("x/ok", "x/exit-2", "x/later"), restart_policy=restart_policy))
    assert status["phase"] == phase
    first, failing, later = status["initContainerStatuses"]
    assert first["state"]["terminated"]["reason"] == "Completed"
    ended = failing["state"].get("terminated") or failing["lastState"]["terminated"]
    assert ended["exitCode"] == 2
    assert later["state"]["waiting"]["reason"] == "PodInitializing"
    [app] = status["containerStatuses"]
    assert app["state"]["waiting"]["reason"] == "PodInitializing"
    initialized = next(c for c in status["conditions"] if c["type"] == "Initialized")
    assert (initialized["status"], initialized["message"]) == (
        "False",
        "containers with incomplete status: [i1 i2]",
    )


def test_a_sidecar_init_container_runs() -> None:
    body = pod("x/app")
    body["spec"]["initContainers"] = [{"name": "proxy", "image": "x/proxy", "restartPolicy": "Always"}]
    status = at(body)
    assert status["phase"] == "Running"
    [sidecar] = status["initContainerStatuses"]
    assert "running" in sidecar["state"] and sidecar["ready"] is True


def test_the_annotation_names_states_for_all_or_by_container() -> None:
    every = at(pod("x/a", "x/b", state="imagepullbackoff"))
    assert every["phase"] == "Pending"
    assert {c["state"]["waiting"]["reason"] for c in every["containerStatuses"]} == {"ImagePullBackOff"}
    each = at(pod("x/crashloop", "x/b", state="c0=running,c1=exit-0", restart_policy="Never"))
    assert [next(iter(c["state"])) for c in each["containerStatuses"]] == ["running", "terminated"]
    assert each["phase"] == "Running"


def test_the_same_pod_at_the_same_time_gives_the_same_status() -> None:
    first = at(pod("x/app", "x/crashloop"), 5)
    again = at({**pod("x/app", "x/crashloop"), "status": first}, 5)
    assert again == first and not podstates.differs(first, again)
    later = at({**pod("x/app", "x/crashloop"), "status": first}, 15)
    assert podstates.differs(first, later)  # one restart more
    assert [c["lastTransitionTime"] for c in later["conditions"]] == [
        c["lastTransitionTime"] for c in first["conditions"]
    ]
