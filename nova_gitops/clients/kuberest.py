"""REST over ``kubernetes.client.ApiClient``: how the agent and the controller talk to a Kubernetes API.

Both handle arbitrary kinds as plain dicts (every workload kind users place, Nova's CRDs), so they speak
REST through ``ApiClient.call_api`` rather than the generated typed APIs. This module is the part they
share: building the client, sending one request, and turning every failure into :class:`KubeApiError` (the
server answered with an error status) or :class:`KubeUnavailable` (no answer), never the library's
exceptions. What each side does with it (the agent's discovery and apply in ``nova_agent.kubeclient``, the
controller's paginated lists and watches in ``nova_gitops.sources.kubeapi``) stays with that side.

The client is always built explicitly from a kubeconfig/context or the in-cluster service account
(:func:`build_api_client`) and passed in; the library's process-wide default configuration is never read or
set: one process may talk to several clusters (tests do). ``kubernetes`` is imported inside functions: it
costs about 225 ms, which ``nova-gitops --help`` and ``nova-agent --help`` must not pay.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Final

from nova_gitops import errors

Query = list[tuple[str, str]]
Timeout = float | tuple[float, float] | None
"""Seconds for the whole request, or (connect, read) as urllib3 takes them."""


UNAVAILABLE_STATUSES: Final = frozenset({429, 500, 502, 503, 504})
"""Answers that mean "not now": the server (or what it depends on: etcd, a webhook) cannot serve."""


class KubeApiError(errors.ClusterError):
    """The API server answered with an error ``status`` (404, 409, 410, 422, ...); ``message`` is the
    ``Status`` object's message."""

    def __init__(self, status: int, reason: str, message: str) -> None:
        super().__init__(f"the Kubernetes API refused the request ({status} {reason}): {message}")
        self.status = status
        self.reason = reason
        self.message = message

    @property
    def unavailable(self) -> bool:
        """Whether the answer means "not now" (429, 5xx) rather than "no": counted as unreachable."""
        return self.status in UNAVAILABLE_STATUSES


class KubeUnavailable(errors.ClusterError):
    """The API server could not be reached (connection refused, timeout, TLS failure, a cut stream)."""

    exit_code: ClassVar[int] = errors.EXIT_UNREACHABLE


def build_api_client(kubeconfig: str | None, context: str | None) -> Any:
    """An ApiClient for ``kubeconfig``/``context``; the in-cluster service account when neither is given."""
    from kubernetes import client, config

    if kubeconfig or context:
        return config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=kubeconfig, context=context, persist_config=False
        )
    configuration = client.Configuration()
    loader = config.incluster_config.InClusterConfigLoader(  # type: ignore[no-untyped-call]
        token_filename=config.incluster_config.SERVICE_TOKEN_FILENAME,
        cert_filename=config.incluster_config.SERVICE_CERT_FILENAME,
    )
    loader.load_and_set(client_configuration=configuration)  # type: ignore[no-untyped-call]
    return client.ApiClient(configuration)


def status_message(data: bytes | None) -> tuple[str, str]:
    """The reason and message of an error answer (a ``Status`` object, or whatever text the server sent)."""
    try:
        status = json.loads(data or b"{}")
    except ValueError:
        return "", (data or b"").decode(errors="replace")[:500]
    if isinstance(status, dict):
        return str(status.get("reason", "")), str(status.get("message", ""))
    return "", str(status)[:500]


class KubeRest:
    """Requests over one explicitly built ``ApiClient``."""

    def __init__(self, api_client: Any, request_timeout: float = 30.0) -> None:
        self.api_client = api_client
        self.request_timeout = request_timeout

    def send(
        self,
        method: str,
        path: str,
        query: Query | None = None,
        body: Any = None,
        content_type: str | None = None,
        timeout: Timeout = None,
    ) -> Any:
        """Send one request; the library's response, its body not read yet (a watch streams it)."""
        from kubernetes.client.exceptions import ApiException
        from urllib3.exceptions import HTTPError

        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        try:
            method, url, headers, payload, _ = self.api_client.param_serialize(
                method=method,
                resource_path=path,
                query_params=query or [],
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            return self.api_client.call_api(
                method, url, header_params=headers, body=payload, _request_timeout=timeout
            )
        except ApiException as error:  # TLS and connection failures surface with status 0
            raise KubeUnavailable(f"the Kubernetes API server cannot be reached: {error.reason}") from error
        except (HTTPError, OSError) as error:
            raise KubeUnavailable(f"the Kubernetes API server cannot be reached: {error}") from error

    def request(
        self,
        method: str,
        path: str,
        query: Query | None = None,
        body: Any = None,
        content_type: str | None = None,
    ) -> Any:
        """One request within ``request_timeout``; the decoded JSON answer (None when empty)."""
        from urllib3.exceptions import HTTPError

        response = self.send(method, path, query, body, content_type, self.request_timeout)
        try:
            data = response.read()
        except (HTTPError, OSError) as error:
            raise KubeUnavailable(f"the Kubernetes API server cannot be reached: {error}") from error
        if not 200 <= response.status <= 299:
            reason, message = status_message(data)
            raise KubeApiError(int(response.status), reason or str(response.reason or ""), message)
        return json.loads(data) if data else None
