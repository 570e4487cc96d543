"""What the simulated cluster's kubelet writes for a bound pod: Running and Ready, or stuck or exited, as its
images or its ``stand-in.nova.test/state`` annotation ask.

The rules are the stand-in kubelet's for real API servers (``tests/realkube/podstates.py``), used here as
they are, so a test that asks for a pod state runs the same on the fake and on a real cluster: an image whose
name contains (case-insensitively) ``crashloop``, ``imagepullbackoff``, ``errimagepull``,
``createcontainerconfigerror``, ``invalidimagename``, ``containercreating`` or ``unready`` leaves that
container in that state, with a real kubelet's reason, message and phase (a crash loop's pod is ``Running``
with ``lastState.terminated``, exit 1; a container that never started keeps its pod ``Pending``; a failing
init container keeps the pod not ``Initialized``, its app containers waiting in ``PodInitializing``);
``exit-<n>`` makes a container exit with n (Succeeded or Failed under restartPolicy Never, a crash loop under
Always). A crash loop's ``restartCount`` grows with the simulation's clock, as kubelet's back-off does; at one
time each round writes the same status, so the simulation reaches its fixed point.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tests.fakekube import simulation_workloads as workloads
from tests.realkube import podstates

Body = dict[str, Any]


def pod_status(pod: Mapping[str, Any], node_ip: str, now: str) -> Body:
    """The status the kubelet writes for a bound pod at ``now`` (the round's time stamp)."""
    moment = podstates.parse_stamp(now)
    assert moment is not None, now
    status = podstates.pod_status(pod, node_ip, moment)
    status["qosClass"] = workloads.running_status(pod, node_ip, now)["qosClass"]
    return status
