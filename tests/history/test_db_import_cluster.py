"""`klondike-live db import-redis` from a Valkey Cluster: the keys of every master."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from legacy_data import LEGACY_GAMES, fill_legacy

from klondike_live.cli import main
from klondike_live.history import History
from klondike_live.store.devcluster import DevCluster


async def _count(url: str) -> int:
    history = History.open(url)
    try:
        return await history.count_games()
    finally:
        await history.close()


def test_the_import_walks_every_master_of_a_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = f"sqlite:///{tmp_path / 'history.sqlite3'}"
    with DevCluster(tmp_path / "cluster", masters=3, replicas=0) as cluster:
        asyncio.run(fill_legacy(cluster.url))
        command = ["db", "import-redis", "--redis", cluster.url, "--database", database]
        assert main([*command, "--batch", "1"]) == 0
        out, _ = capsys.readouterr()
        assert out.startswith("games: 5 added, 0 already there, 1 left to the nodes")
        assert "3 players, 5 categories imported" in out
        assert main(command) == 0
        assert capsys.readouterr()[0].startswith("games: 0 added, 5 already there")
    assert asyncio.run(_count(database)) == len(LEGACY_GAMES)
