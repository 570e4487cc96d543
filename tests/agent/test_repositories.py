"""The repository id: trivially equal URLs hash alike (credentials, case of scheme and host, trailing ``/``
and ``.git``), different repositories or directories do not, and it fits a label value."""

from __future__ import annotations

import re

import pytest

from nova_agent.repositories import normalised_url, repository_id


@pytest.mark.parametrize(
    "url",
    [
        "https://git.example.com/platform/rendered.git",
        "https://git.example.com/platform/rendered",
        "https://git.example.com/platform/rendered/",
        "https://git.example.com/platform/rendered.git/",
        "HTTPS://Git.Example.com/platform/rendered.git",
        "https://ci:s3cret-token@git.example.com/platform/rendered.git",
    ],
)
def test_trivially_equal_urls_hash_alike(url: str) -> None:
    assert normalised_url(url) == "https://git.example.com/platform/rendered"
    assert repository_id(url, "clusters/wlc-1") == repository_id(
        "https://git.example.com/platform/rendered", "clusters/wlc-1/"
    )


def test_different_repositories_paths_and_spellings_differ() -> None:
    base = repository_id("https://git.example.com/platform/rendered", "clusters/wlc-1")
    assert re.fullmatch(r"[0-9a-f]{16}", base)
    others = {
        repository_id(
            "https://git.example.com/platform/Rendered", "clusters/wlc-1"
        ),  # paths are case-sensitive
        repository_id("https://git.example.com/platform/rendered", "clusters/wlc-2"),
        repository_id("https://git.example.com/other/rendered", "clusters/wlc-1"),
        repository_id("git@git.example.com:platform/rendered.git", "clusters/wlc-1"),  # not over-normalised
    }
    assert base not in others and len(others) == 4
    assert normalised_url("git@Git.Example.com:platform/rendered.git") == "git.example.com:platform/rendered"
    assert normalised_url("/srv/git/rendered.git") == "/srv/git/rendered"
