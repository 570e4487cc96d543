"""Shared fixtures. Pinned git identity and no inherited GIT_* variables for every test (real git only)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

pytest_plugins = ["tests.fakekube.fixtures"]

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Nova Test",
    "GIT_AUTHOR_EMAIL": "nova-test@example.invalid",
    "GIT_COMMITTER_NAME": "Nova Test",
    "GIT_COMMITTER_EMAIL": "nova-test@example.invalid",
    "GIT_ALLOW_PROTOCOL": "file:git",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
}


@pytest.fixture(autouse=True)
def _git_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[None]:
    for name in list(os.environ):
        if name.startswith("GIT_"):
            monkeypatch.delenv(name)
    for name, value in GIT_IDENTITY.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    yield
