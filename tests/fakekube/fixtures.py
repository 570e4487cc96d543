"""Pytest fixtures: `fake_kube` (a started FakeKubeServer) and `kube` (a cluster to test against).

`kube` is the fake by default. With NOVA_TEST_KUBECONFIG (and optionally NOVA_TEST_CONTEXT) set, it is that
real cluster instead, so the same tests check that the fake is not more lenient than the real thing; tests
that need a fault only the fake can make (an injected answer, a request count, a stalled controller) are
marked `fake_only("<which fault>")` and skipped there, the skip saying why.

`kube_pair` is two clusters (two fakes, or the two real clusters of `../shared/realk8s/up DIR 2`). `kubelet`
gives a test nodes whose pods run, on either: the fake's simulated cluster or, on a real cluster,
the stand-in kubelet (`tests.realkube.kubelets`), behind one interface.
Clients are built explicitly from a Configuration or kubeconfig, never from the library's process-wide
default, as our own code must do.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.fakekube.server import FakeKubeServer
from tests.realkube.kubelets import Kubelet

KUBECONFIG_VARIABLE = "NOVA_TEST_KUBECONFIG"
PAIR_VARIABLES = ("REALK8S_KUBECONFIG_1", "REALK8S_KUBECONFIG_2")
CONTEXT_VARIABLE = "NOVA_TEST_CONTEXT"
FAKE_CONTEXT = "fakekube"


@dataclass(frozen=True, slots=True)
class KubeTarget:
    """A cluster for one test: a client, a kubeconfig that reaches it, and a fresh namespace."""

    api_client: Any  # kubernetes.client.ApiClient
    kubeconfig_path: Path
    context: str
    namespace: str
    fake: FakeKubeServer | None


def write_kubeconfig(path: Path, server_url: str, namespace: str = "default") -> Path:
    """A kubeconfig whose current context points at server_url (token auth, which the fake ignores)."""
    import yaml

    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": FAKE_CONTEXT, "cluster": {"server": server_url}}],
        "users": [{"name": FAKE_CONTEXT, "user": {"token": "fakekube-token"}}],
        "contexts": [
            {
                "name": FAKE_CONTEXT,
                "context": {"cluster": FAKE_CONTEXT, "user": FAKE_CONTEXT, "namespace": namespace},
            }
        ],
        "current-context": FAKE_CONTEXT,
    }
    path.write_text(yaml.dump(config, Dumper=yaml.CSafeDumper), encoding="utf-8")
    return path


def client_for(server: FakeKubeServer) -> Any:
    """An ApiClient for the fake, from an explicit Configuration."""
    from kubernetes import client

    configuration = client.Configuration()
    configuration.host = server.url
    configuration.api_key = {"BearerToken": "fakekube-token"}
    configuration.api_key_prefix = {"BearerToken": "Bearer"}
    return client.ApiClient(configuration)


def fake_only_reason(marker: pytest.Mark) -> str:
    """The fault a `fake_only` test needs, as its marker says (`fake_only("injects a 500 on apply")`)."""
    reason = marker.args[0] if marker.args else marker.kwargs.get("reason", "")
    return str(reason) or "needs the fake API server's hooks"


@pytest.fixture
def fake_kube() -> Iterator[FakeKubeServer]:
    server = FakeKubeServer()
    yield server
    server.stop()


def _real_cluster(config_file: str, context: str | None) -> tuple[Any, str]:
    from kubernetes import config

    api_client = config.new_client_from_config(  # type: ignore[no-untyped-call]
        config_file=config_file, context=context
    )
    if context is None:
        _, active = config.list_kube_config_contexts(config_file=config_file)  # type: ignore[no-untyped-call]
        context = str(active["name"])
    return api_client, context


def _skip_fake_only(request: pytest.FixtureRequest) -> None:
    marker = request.node.get_closest_marker("fake_only")
    if marker is not None:
        pytest.skip(f"fake_only: {fake_only_reason(marker)}; running against a real cluster")


@contextlib.contextmanager
def _target(
    config_file: str | None, fake: FakeKubeServer | None, kubeconfig_path: Path
) -> Iterator[KubeTarget]:
    """A fresh namespace on the real cluster of ``config_file``, or on ``fake`` (its kubeconfig written to
    ``kubeconfig_path``); the namespace of a real cluster is deleted afterwards."""
    from kubernetes import client

    if config_file:
        api_client, context = _real_cluster(config_file, os.environ.get(CONTEXT_VARIABLE))
        kubeconfig_path = Path(config_file)
    else:
        assert fake is not None
        api_client, context = client_for(fake), FAKE_CONTEXT
        kubeconfig_path = write_kubeconfig(kubeconfig_path, fake.url)
    namespace = f"nova-test-{secrets.token_hex(4)}"
    core = client.CoreV1Api(api_client)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    if fake is not None:
        fake.requests.clear()
    try:
        yield KubeTarget(api_client, kubeconfig_path, context, namespace, fake)
    finally:
        if fake is None:
            core.delete_namespace(namespace)
        api_client.close()


@pytest.fixture
def kube(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KubeTarget]:
    config_file = os.environ.get(KUBECONFIG_VARIABLE)
    fake: FakeKubeServer | None = None
    if config_file:
        _skip_fake_only(request)
    else:
        fake = request.getfixturevalue("fake_kube")
    with _target(config_file, fake, tmp_path / "kubeconfig") as target:
        yield target


@pytest.fixture
def kube_pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[KubeTarget, KubeTarget]]:
    """Two clusters for one test (each with a fresh namespace): two fake API servers, or with
    NOVA_TEST_KUBECONFIG the real clusters of REALK8S_KUBECONFIG_1 and REALK8S_KUBECONFIG_2 (the first one
    twice, in two namespaces, when there is no second)."""
    config_file = os.environ.get(KUBECONFIG_VARIABLE)
    if config_file:
        _skip_fake_only(request)
        first = os.environ.get(PAIR_VARIABLES[0]) or config_file
        files: tuple[str | None, str | None] = (first, os.environ.get(PAIR_VARIABLES[1]) or first)
        fakes: tuple[FakeKubeServer | None, FakeKubeServer | None] = (None, None)
    else:
        files, fakes = (None, None), (FakeKubeServer(), FakeKubeServer())
    try:
        with (
            _target(files[0], fakes[0], tmp_path / "kubeconfig-1") as one,
            _target(files[1], fakes[1], tmp_path / "kubeconfig-2") as two,
        ):
            yield one, two
    finally:
        for server in fakes:
            if server is not None:
                server.stop()


@pytest.fixture
def kubelet(kube: KubeTarget) -> Iterator[Kubelet]:
    """Nodes whose pods run, for one test (named after its namespace): the fake's simulated cluster, or the
    stand-in kubelet on a real cluster, which removes its nodes and their pods afterwards."""
    from tests.realkube import kubelets

    made = kubelets.for_target(kube.api_client, kube.fake, kube.namespace)
    with made:
        yield made
