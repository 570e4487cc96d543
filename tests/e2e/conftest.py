"""The end-to-end tests' fixtures: ``demo_clusters``, the clusters the demo's tests run it on
(``tests/e2e/democlusters.py``)."""

from __future__ import annotations

import os

import pytest

from tests.e2e.democlusters import DemoClusters, demo_clusters_from


@pytest.fixture
def demo_clusters() -> DemoClusters:
    """The demo's clusters: the real ones the environment names, or the simulated ones."""
    return demo_clusters_from(os.environ)
