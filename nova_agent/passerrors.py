"""What a pass-level failure means: its exit code, its message, and whether ``run`` backs off.

Only "unreachable" backs off (interval × 2ⁿ): git or the API server gave no answer, or answered that it cannot
serve now (5xx, 429). An answer that refuses the agent (401, 403: credentials or RBAC an admin must fix) is a
refusal, exit 2, retried at the normal interval so that a fix is picked up at once. Any other answer at pass
level (a 404 or 422 on the agent's own inventory, say) and any exception the agent does not expect are exit 3.
The codes are ``nova_gitops.errors``' table, shared with ``nova-gitops`` (docs/exit-codes.md).
"""

from __future__ import annotations

from typing import Final

from nova_agent.gitrepos import GitError, GitUnavailable
from nova_agent.permissions import PermissionDenied, explain
from nova_gitops import errors
from nova_gitops.clients import gitfailures
from nova_gitops.clients.kuberest import KubeApiError, KubeUnavailable

EXIT_OK: Final = errors.EXIT_OK
EXIT_OBJECT_FAILURES: Final = errors.EXIT_FOUND
"""Synced, but some objects failed to apply or delete (named in the output and the report)."""
EXIT_REFUSED: Final = errors.EXIT_INVALID
"""Nothing applied on purpose: invalid render, bad signature, a mass prune without consent, or the agent may
not do what the pass needs (credentials, RBAC: the message names the rule)."""
EXIT_UNEXPECTED: Final = errors.EXIT_UNEXPECTED
"""An error the agent does not expect (a bug, or an answer no Kubernetes API should give)."""
EXIT_UNREACHABLE: Final = errors.EXIT_UNREACHABLE
"""Git or the Kubernetes API could not be reached (or cannot serve now); the cluster was left as it is."""

REFUSING_STATUSES: Final = frozenset({401, 403})


def classify(error: Exception, agent_namespace: str) -> tuple[int, str]:
    """The exit code and the message of a pass that ended with ``error``."""
    if isinstance(error, GitUnavailable | KubeUnavailable):
        return EXIT_UNREACHABLE, str(error)
    if isinstance(error, GitError | PermissionDenied):
        return EXIT_REFUSED, str(error)
    if isinstance(error, KubeApiError):
        if error.unavailable:
            return EXIT_UNREACHABLE, str(error)
        if error.status == 403:
            return EXIT_REFUSED, explain(error.message, agent_namespace)
        if error.status in REFUSING_STATUSES:
            return EXIT_REFUSED, f"{error}; check the agent's credentials (--kubeconfig, the service account)"
        return EXIT_UNEXPECTED, str(error)
    failure = gitfailures.git_failure(error)  # a git command nothing wrapped (GitPython's GitCommandError)
    if failure is not None:
        return failure.exit_code, failure.message
    return EXIT_UNEXPECTED, f"unexpected {type(error).__name__}: {error}"
