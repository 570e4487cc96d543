"""A fake Kubernetes API server for tests, faithful to kube-apiserver where our code depends on it.

No kube-apiserver can be installed where these tests run, and mocks of the client library pass when the
semantics are wrong; so tests drive the real `kubernetes` client over HTTP against `FakeKubeServer`
(`server`), and the same tests run against a real cluster when `NOVA_TEST_KUBECONFIG` is set (`fixtures`).

Modules: `server` (HTTP and test hooks), `routing` (paths), `operations` (the verbs), `preparing` (bodies
to stored objects), `applying`, `fields` and `listtypes` (server-side apply, managedFields, how each list
merges), `patching` (merge, strategic, JSON patch), `schemas` and `crds` (CustomResourceDefinitions),
`validation` and `immutability` (built-in kinds), `namespaces` (deletion through Terminating),
`collecting` (cascading deletion by propagationPolicy), `selecting` (label and field selectors), `store`
and `watching` (resourceVersions, history, watch streams), `resources` (served types, discovery),
`statuses` (errors as Status bodies), `fixtures` (the pytest plugin), `clienting` (apply and raw requests
through the real client), `simulation` (the simulated-cluster mode, like kwok: workload controllers, a
scheduler and a kubelet reacting to writes; its parts are `simulation_controllers`, `simulation_scheduling`,
`simulation_statuses`, `simulation_workloads` and `simulation_kubelet`, which leaves a pod's containers
waiting in `CrashLoopBackOff`, `ImagePullBackOff`, ... by image name; see docs/demo.md).
"""

from __future__ import annotations

from tests.fakekube.server import FakeKubeServer, RecordedRequest

__all__ = ["FakeKubeServer", "RecordedRequest"]
