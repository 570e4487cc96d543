"""Which inherited ``GIT_*`` variables git may see when nova-gitops or nova-agent runs it: one policy.

When either runs inside a git hook or a CI step, the parent exports variables such as ``GIT_DIR``,
``GIT_INDEX_FILE`` or ``GIT_OBJECT_DIRECTORY`` that would silently point our git commands at someone else's
repository (pre-commit's ``no_git_env`` exists for the same reason). We keep only the variables that
configure *how* git talks to the world — identity, credentials, transport policy — and drop every other
``GIT_*`` variable, including those that say *which* repository to use and ``GIT_CONFIG_PARAMETERS`` (what a
parent ``git -c`` exports to its hooks). Variables that do not start with ``GIT_`` pass unchanged.

Kept, and why:

- commit identity (``GIT_AUTHOR_*``, ``GIT_COMMITTER_*``, dates included): the author of what the controller
  publishes and of the agent's status commits; tests pin them for reproducible commits.
- transport policy and prompts (``GIT_ALLOW_PROTOCOL``, ``GIT_TERMINAL_PROMPT``, ``GIT_CONFIG_NOSYSTEM``,
  ``GIT_EXEC_PATH``): what an operator restricts on purpose.
- credentials and network (``GIT_ASKPASS``, ``GIT_SSH``, ``GIT_SSH_COMMAND``, ``GIT_SSL_*``,
  ``GIT_HTTP_PROXY_AUTHMETHOD``, and ``GIT_CONFIG_COUNT`` with its ``GIT_CONFIG_KEY_n``/``VALUE_n``, the
  way to hand git an ``http.extraHeader`` or ``url.insteadOf`` without a config file), as pre-commit keeps
  them.

And one default: ``GIT_TERMINAL_PROMPT=0`` unless the environment sets it. A daemon (or a CI job) has no one
to answer a password prompt; without it a remote asking for credentials hangs the process instead of
failing with a message. An operator who wants the prompt sets ``GIT_TERMINAL_PROMPT=1``.

The agent runs git through ``subprocess`` with :func:`git_environment`; the controller's sources and
publishing run it through GitPython, which always starts from ``os.environ`` and cannot unset a variable,
so they put :func:`env_prefix` (``env -u NAME … NAME=VALUE``) in front of the command. Pure: it decides on
mappings; the callers run git.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Final

KEPT_GIT_VARIABLES: Final = frozenset(
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
DEFAULTS: Final[Mapping[str, str]] = {"GIT_TERMINAL_PROMPT": "0"}
"""Set for git unless the environment already says otherwise."""


def is_kept(name: str) -> bool:
    """Whether an inherited variable is passed on to git (``GIT_CONFIG_KEY_n``/``VALUE_n`` too)."""
    if not name.startswith("GIT_") or name in KEPT_GIT_VARIABLES:
        return True
    return name.startswith(("GIT_CONFIG_KEY_", "GIT_CONFIG_VALUE_"))


def stripped_variables(environ: Mapping[str, str]) -> list[str]:
    """The inherited ``GIT_*`` variables that git must not see, sorted."""
    return sorted(name for name in environ if not is_kept(name))


def added_defaults(environ: Mapping[str, str]) -> dict[str, str]:
    """The :data:`DEFAULTS` that ``environ`` does not set itself."""
    return {name: value for name, value in DEFAULTS.items() if name not in environ}


def git_environment(environ: Mapping[str, str], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment for a git subprocess: ``environ`` kept as the policy says, the defaults added,
    then ``extra`` (a call's own variables, which win)."""
    env = {name: value for name, value in environ.items() if is_kept(name)}
    env.update(added_defaults(environ))
    env.update(extra or {})
    return env


def env_prefix(environ: Mapping[str, str], passed: Collection[str] = ()) -> list[str]:
    """``env -u NAME … NAME=VALUE`` to put in front of ``git`` when the runner cannot set the environment
    itself (GitPython); empty when there is nothing to change. Names in ``passed`` are left to the caller,
    which sets them for this one call (a private index, say)."""
    unset = [name for name in stripped_variables(environ) if name not in passed]
    assign = [f"{name}={value}" for name, value in added_defaults(environ).items() if name not in passed]
    if not unset and not assign:
        return []
    return ["env", *[part for name in unset for part in ("-u", name)], *assign]
