"""Boundary-test fixtures: the fake Kubernetes API server (`fake_kube`, `kube`) from tests.fakekube.fixtures.

Imported by name rather than through `pytest_plugins`, which pytest refuses in a non-root conftest; once
tests/conftest.py lists `pytest_plugins = ["tests.fakekube.fixtures"]`, this file can go.
"""

from __future__ import annotations

from tests.fakekube.fixtures import fake_kube, kube

__all__ = ["fake_kube", "kube"]
