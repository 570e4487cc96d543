"""Which pass-level failures are "unreachable" (exit 4, the only one ``run`` backs off from): no answer, and
answers meaning "not now" (5xx, 429). A refusal of the agent's credentials or rights is exit 2; any other
answer, and any exception the agent does not expect, exit 3."""

from __future__ import annotations

import pytest

from nova_agent import passerrors
from nova_agent.gitrepos import GitError, GitUnavailable
from nova_agent.passerrors import EXIT_REFUSED, EXIT_UNEXPECTED, EXIT_UNREACHABLE
from nova_gitops.clients.kuberest import KubeApiError, KubeUnavailable


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (KubeUnavailable("connection refused"), EXIT_UNREACHABLE),
        (GitUnavailable("cannot read the remote"), EXIT_UNREACHABLE),
        *((KubeApiError(status, "", "not now"), EXIT_UNREACHABLE) for status in (429, 500, 502, 503, 504)),
        (KubeApiError(401, "Unauthorized", "Unauthorized"), EXIT_REFUSED),
        (KubeApiError(403, "Forbidden", "nope"), EXIT_REFUSED),
        (GitError("bad signature"), EXIT_REFUSED),
        *((KubeApiError(status, "", "odd"), EXIT_UNEXPECTED) for status in (400, 404, 409, 410, 422)),
        (KeyError("metadata"), EXIT_UNEXPECTED),
    ],
)
def test_exit_codes_of_pass_level_failures(error: Exception, code: int) -> None:
    assert passerrors.classify(error, "nova-agent")[0] == code


def test_a_rejected_token_points_at_the_credentials() -> None:
    _, message = passerrors.classify(KubeApiError(401, "Unauthorized", "Unauthorized"), "nova-agent")
    assert "check the agent's credentials" in message
