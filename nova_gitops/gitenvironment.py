"""Which inherited ``GIT_*`` variables git may see when nova-gitops runs it (sources and publishing alike).

When nova-gitops runs inside a git hook or a CI step, the parent exports variables such as ``GIT_DIR``,
``GIT_INDEX_FILE`` or ``GIT_OBJECT_DIRECTORY`` that would silently point our git commands at someone else's
repository (pre-commit's ``no_git_env`` exists for the same reason). We keep only the variables that
configure *how* git talks to the world — identity, credentials, transport policy — and drop those that say
*which* repository to use. Pure: it decides on a mapping; the callers run git.
"""

from __future__ import annotations

from collections.abc import Mapping

KEPT_GIT_VARIABLES = frozenset(
    {
        # identity of the commits we write (tests pin these)
        "GIT_AUTHOR_NAME",
        "GIT_AUTHOR_EMAIL",
        "GIT_AUTHOR_DATE",
        "GIT_COMMITTER_NAME",
        "GIT_COMMITTER_EMAIL",
        "GIT_COMMITTER_DATE",
        # transport policy, prompts and system configuration
        "GIT_ALLOW_PROTOCOL",
        "GIT_CONFIG_NOSYSTEM",
        "GIT_TERMINAL_PROMPT",
        "GIT_EXEC_PATH",
        # credentials and network settings (as pre-commit keeps them)
        "GIT_ASKPASS",
        "GIT_SSH",
        "GIT_SSH_COMMAND",
        "GIT_SSL_CAINFO",
        "GIT_SSL_NO_VERIFY",
        "GIT_HTTP_PROXY_AUTHMETHOD",
        "GIT_CONFIG_COUNT",
    }
)


def is_kept(name: str) -> bool:
    """Whether an inherited ``GIT_*`` variable is passed on to git (``GIT_CONFIG_KEY_n``/``VALUE_n`` too)."""
    if not name.startswith("GIT_") or name in KEPT_GIT_VARIABLES:
        return True
    return name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))


def stripped_variables(environ: Mapping[str, str]) -> list[str]:
    """The inherited ``GIT_*`` variables that git must not see, sorted."""
    return sorted(name for name in environ if not is_kept(name))
