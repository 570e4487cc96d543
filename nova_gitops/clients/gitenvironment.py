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

And the policy's own settings, which make git do nothing but move objects and refs:

- no configuration but the repository's and the command line's: ``GIT_CONFIG_NOSYSTEM=1`` and
  ``GIT_CONFIG_GLOBAL=/dev/null`` unless the environment sets them (an operator who wants ``~/.gitconfig``,
  say for a laptop's credential helper, sets ``GIT_CONFIG_GLOBAL=$HOME/.gitconfig``). A hostile or merely
  surprising ``~/.gitconfig`` (``url.*.insteadOf``, ``core.sshCommand``, ``init.templateDir`` with hooks)
  cannot redirect or run anything; credentials reach git through the kept variables above;
- no hooks and no file-system monitor, whoever configured them (a source repository's own ``.git/config``
  included): ``core.hooksPath=/dev/null`` and ``core.fsmonitor=false`` appended to ``GIT_CONFIG_COUNT``,
  so they beat every configuration file and an operator's own ``GIT_CONFIG_KEY_n``;
- no prompts: ``GIT_TERMINAL_PROMPT=0`` unless set. A daemon (or a CI job) has no one to answer a password
  prompt; without it a remote asking for credentials hangs the process instead of failing with a message;
- only the transports we use: ``GIT_ALLOW_PROTOCOL=file:git:ssh:https`` unless set, so ``ext::`` (which runs a
  command) and the other remote helpers are refused by git itself, submodules included.

Deadlines are the runners' part (``nova_gitops.clients.gitrunning`` and the agent's ``run_git``): every
network command gets one. nova-agent's plumbing runs git through ``subprocess`` with :func:`git_environment`;
GitPython, which always starts from ``os.environ`` and cannot unset a variable, runs under :func:`policy`
(``env -u NAME …`` in front of the command, the rest as the call's environment). Pure: it decides on
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
        "GIT_CONFIG_GLOBAL",
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
ALLOWED_PROTOCOLS: Final = "file:git:ssh:https"
DEFAULTS: Final[Mapping[str, str]] = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ALLOW_PROTOCOL": ALLOWED_PROTOCOLS,
}
"""Set for git unless the environment already says otherwise."""
FORCED_CONFIG: Final = (("core.hooksPath", "/dev/null"), ("core.fsmonitor", "false"))
"""Configuration git always gets, after any the environment gives (``GIT_CONFIG_KEY_n``), so it wins."""


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


def forced_config(environ: Mapping[str, str]) -> dict[str, str]:
    """:data:`FORCED_CONFIG` as ``GIT_CONFIG_KEY_n``/``VALUE_n`` after the entries ``environ`` already has."""
    count_text = environ.get("GIT_CONFIG_COUNT", "")
    first = int(count_text) if count_text.isdigit() else 0
    config = {"GIT_CONFIG_COUNT": str(first + len(FORCED_CONFIG))}
    for index, (key, value) in enumerate(FORCED_CONFIG, start=first):
        config[f"GIT_CONFIG_KEY_{index}"] = key
        config[f"GIT_CONFIG_VALUE_{index}"] = value
    return config


def policy_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """What the policy sets on top of ``environ``: the missing defaults and the forced configuration."""
    return {**added_defaults(environ), **forced_config(environ)}


def git_environment(environ: Mapping[str, str], extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The whole environment for a git subprocess: ``environ`` kept as the policy says, the policy's own
    variables added, then ``extra`` (a call's own variables, which win)."""
    env = {name: value for name, value in environ.items() if is_kept(name)}
    env.update(policy_variables(environ))
    env.update(extra or {})
    return env


def policy(environ: Mapping[str, str], passed: Collection[str] = ()) -> tuple[list[str], dict[str, str]]:
    """For a runner that starts from ``environ`` and can only add variables (GitPython): the names to unset
    (``env -u NAME`` in front of ``git``) and the variables to set. Names in ``passed`` are left to the
    caller, which sets them for this one call (a private index, say)."""
    unset = [name for name in stripped_variables(environ) if name not in passed]
    assign = {name: value for name, value in policy_variables(environ).items() if name not in passed}
    return unset, assign


def unset_prefix(names: Collection[str]) -> list[str]:
    """``env -u NAME …`` (empty for no names)."""
    return ["env", *[part for name in names for part in ("-u", name)]] if names else []


def person_configuration(environ: Mapping[str, str], global_file: str | None) -> dict[str, str]:
    """What a command a person runs on their own machine sets so that git reads *their* configuration —
    the system file (the macOS keychain helper lives there) and ``global_file`` (their ``~/.gitconfig``,
    the one that exists, found by the caller): credential helpers and ``url.*.insteadOf`` work as in their
    shell. Hooks, fsmonitor and the protocol allow-list stay as :data:`FORCED_CONFIG` and :data:`DEFAULTS`
    say. The daemons (``nova-gitops controller``, ``nova-agent``) never call this: in a cluster no one's
    configuration is theirs to follow. Whatever the environment already sets wins."""
    chosen: dict[str, str] = {}
    if "GIT_CONFIG_NOSYSTEM" not in environ:
        chosen["GIT_CONFIG_NOSYSTEM"] = "0"
    if "GIT_CONFIG_GLOBAL" not in environ and global_file is not None:
        chosen["GIT_CONFIG_GLOBAL"] = global_file
    return chosen
