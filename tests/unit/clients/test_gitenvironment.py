"""The one git environment policy: inherited variables that say *which* repository (``GIT_DIR``,
``GIT_INDEX_FILE``, ``GIT_CONFIG_PARAMETERS`` of a parent ``git -c``) are dropped, those that say *how* git
talks to the world (identity, credentials, transport) are kept, and ``GIT_TERMINAL_PROMPT`` defaults to 0.
That the agent's and the controller's git really run this way is tests/test_git_environment.py."""

from __future__ import annotations

from nova_gitops.clients.gitenvironment import env_prefix, git_environment, stripped_variables

INHERITED = {
    "PATH": "/usr/bin",
    "GIT_DIR": "/elsewhere/.git",
    "GIT_INDEX_FILE": "/elsewhere/.git/index",
    "GIT_OBJECT_DIRECTORY": "/elsewhere/.git/objects",
    "GIT_CONFIG_PARAMETERS": "'core.hookspath'='/evil'",
    "GIT_AUTHOR_NAME": "Ann",
    "GIT_COMMITTER_EMAIL": "ann@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00Z",
    "GIT_SSH_COMMAND": "ssh -i key",
    "GIT_ASKPASS": "/bin/askpass",
    "GIT_CONFIG_COUNT": "1",
    "GIT_CONFIG_KEY_0": "http.extraHeader",
    "GIT_CONFIG_VALUE_0": "Authorization: Bearer x",
}
DROPPED = ["GIT_CONFIG_PARAMETERS", "GIT_DIR", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY"]


def test_location_variables_are_dropped_identity_and_credentials_kept() -> None:
    assert stripped_variables(INHERITED) == DROPPED
    env = git_environment(INHERITED)
    assert not set(DROPPED) & set(env)
    for name in INHERITED.keys() - set(DROPPED):
        assert env[name] == INHERITED[name]


def test_prompts_are_off_unless_the_environment_turns_them_on() -> None:
    assert git_environment(INHERITED)["GIT_TERMINAL_PROMPT"] == "0"
    assert git_environment({"GIT_TERMINAL_PROMPT": "1"})["GIT_TERMINAL_PROMPT"] == "1"


def test_a_calls_own_variables_win() -> None:
    env = git_environment(INHERITED, {"GIT_INDEX_FILE": "/tmp/private-index", "GIT_TERMINAL_PROMPT": "1"})
    assert env["GIT_INDEX_FILE"] == "/tmp/private-index"
    assert env["GIT_TERMINAL_PROMPT"] == "1"


def test_the_env_prefix_unsets_and_defaults_what_the_environment_form_does() -> None:
    prefix = env_prefix(INHERITED)
    assert prefix[0] == "env"
    assert [prefix[i + 1] for i, part in enumerate(prefix) if part == "-u"] == DROPPED
    assert prefix[-1] == "GIT_TERMINAL_PROMPT=0"


def test_the_env_prefix_leaves_a_calls_own_variables_alone() -> None:
    prefix = env_prefix(INHERITED, passed={"GIT_INDEX_FILE", "GIT_TERMINAL_PROMPT"})
    assert "GIT_INDEX_FILE" not in prefix and "GIT_TERMINAL_PROMPT=0" not in prefix
    assert env_prefix({"PATH": "/usr/bin", "GIT_TERMINAL_PROMPT": "0"}) == []
