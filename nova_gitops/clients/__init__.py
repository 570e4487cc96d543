"""The I/O clients nova-gitops and nova-agent share: a Kubernetes REST client, the git environment policy and
the back-off.

Both sides talk to the same outside world (a Kubernetes API server, git remotes) and both retry; written
twice, the copies drifted (two lists of allowed ``GIT_*`` variables, two back-off formulas). This package is
the one home for them, and the only part of ``nova_gitops`` besides ``api`` (and the error tree ``errors``)
that ``nova_agent`` may import. It is an I/O edge: the pure core (api, scheduling, rendering) never imports
it, and it imports nothing of nova_gitops but ``errors`` (see the contracts in ``pyproject.toml``).
"""
