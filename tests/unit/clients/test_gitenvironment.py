"""The one git environment policy: inherited variables that say *which* repository (``GIT_DIR``,
``GIT_INDEX_FILE``, ``GIT_CONFIG_PARAMETERS`` of a parent ``git -c``) are dropped, those that say *how* git
talks to the world (identity, credentials, transport) are kept; prompts, system and global configuration are
off and the protocol allow-list is set unless the environment says otherwise; hooks and fsmonitor are always
off, after any configuration the environment passes. That the agent's and the controller's git really run
this way is tests/test_git_environment.py."""

from __future__ import annotations

from nova_gitops.clients.gitenvironment import git_environment, policy, stripped_variables, unset_prefix

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
    for name in INHERITED.keys() - set(DROPPED) - {"GIT_CONFIG_COUNT"}:  # the count grows: see below
        assert env[name] == INHERITED[name]


def test_prompts_are_off_unless_the_environment_turns_them_on() -> None:
    assert git_environment(INHERITED)["GIT_TERMINAL_PROMPT"] == "0"
    assert git_environment({"GIT_TERMINAL_PROMPT": "1"})["GIT_TERMINAL_PROMPT"] == "1"


def test_a_calls_own_variables_win() -> None:
    env = git_environment(INHERITED, {"GIT_INDEX_FILE": "/tmp/private-index", "GIT_TERMINAL_PROMPT": "1"})
    assert env["GIT_INDEX_FILE"] == "/tmp/private-index"
    assert env["GIT_TERMINAL_PROMPT"] == "1"


def test_system_and_global_configuration_are_off_and_protocols_listed_unless_set() -> None:
    env = git_environment(INHERITED)
    assert env["GIT_CONFIG_NOSYSTEM"] == "1"
    assert env["GIT_CONFIG_GLOBAL"] == "/dev/null"
    assert env["GIT_ALLOW_PROTOCOL"] == "file:git:ssh:https"
    chosen = {"GIT_CONFIG_GLOBAL": "/home/ann/.gitconfig", "GIT_ALLOW_PROTOCOL": "https"}
    assert git_environment(chosen).items() >= chosen.items()


def test_hooks_and_fsmonitor_are_off_after_the_environments_own_configuration() -> None:
    env = git_environment(INHERITED)
    assert env["GIT_CONFIG_COUNT"] == "3"
    assert env["GIT_CONFIG_VALUE_0"] == "Authorization: Bearer x"
    assert (env["GIT_CONFIG_KEY_1"], env["GIT_CONFIG_VALUE_1"]) == ("core.hooksPath", "/dev/null")
    assert (env["GIT_CONFIG_KEY_2"], env["GIT_CONFIG_VALUE_2"]) == ("core.fsmonitor", "false")
    bare = git_environment({})
    assert (bare["GIT_CONFIG_COUNT"], bare["GIT_CONFIG_KEY_0"]) == ("2", "core.hooksPath")


def test_the_policy_for_gitpython_unsets_and_sets_what_the_environment_form_does() -> None:
    unset, assign = policy(INHERITED)
    assert unset == DROPPED
    kept = {name: value for name, value in INHERITED.items() if name not in DROPPED}
    assert {**kept, **assign} == git_environment(INHERITED)
    prefix = unset_prefix(unset)
    assert prefix[0] == "env"
    assert [prefix[i + 1] for i, part in enumerate(prefix) if part == "-u"] == DROPPED
    assert unset_prefix([]) == []


def test_the_policy_leaves_a_calls_own_variables_alone() -> None:
    unset, assign = policy(INHERITED, passed={"GIT_INDEX_FILE", "GIT_TERMINAL_PROMPT"})
    assert "GIT_INDEX_FILE" not in unset and "GIT_TERMINAL_PROMPT" not in assign
