"""`klondike-live db upgrade` and `db current`, on SQLite and PostgreSQL."""

from __future__ import annotations

import asyncio
import multiprocessing
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from pathlib import Path

import pytest
from sqlalchemy import text

from klondike_live.cli import main
from klondike_live.history import History, HistoryError
from klondike_live.history.migrate import head

from waits import scaled


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, str], str]:
    """Run `klondike-live db ...`; its status, its `name: value` lines, its stderr."""
    status = main(["db", *args])
    out, err = capsys.readouterr()
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    return status, lines, err


def test_upgrade_brings_an_empty_database_to_the_head_and_current_says_so(
    history_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines, _ = run(capsys, "current", "--database", history_url)
    assert status == 1
    assert lines["current"] == "none (no schema)"
    assert lines["head"] == head()

    status, lines, _ = run(capsys, "upgrade", "--database", history_url)
    assert status == 0
    assert lines["before"] == "none (no schema)"
    assert lines["after"] == head()

    status, lines, _ = run(capsys, "current", "--database", history_url)
    assert (status, lines["current"], lines["head"]) == (0, head(), head())


def test_upgrade_of_a_database_at_the_head_changes_nothing(
    history_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["db", "upgrade", "--database", history_url]) == 0
    capsys.readouterr()
    status, lines, _ = run(capsys, "upgrade", "--database", history_url)
    assert (status, lines["before"], lines["after"]) == (0, head(), head())


async def _set_revision(url: str, revision: str) -> None:
    history = History.open(url)
    try:
        await history.upgrade()
        async with history.engine.begin() as conn:
            await conn.execute(text("UPDATE alembic_version SET version_num = :v"), {"v": revision})
    finally:
        await history.close()


@pytest.mark.parametrize("command", ["current", "upgrade"])
def test_a_database_of_a_newer_release_is_refused_in_one_line(
    history_url: str, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    asyncio.run(_set_revision(history_url, "0099_from_the_future"))
    status = main(["db", command, "--database", history_url])
    out, err = capsys.readouterr()
    assert status == 2
    assert out == ""
    assert err.count("\n") == 1
    assert "0099_from_the_future" in err and "newer than this release" in err


def test_the_default_database_is_the_data_directorys_sqlite_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, lines, _ = run(capsys, "upgrade", "--data-dir", str(tmp_path))
    assert status == 0
    assert lines["database"] == f"sqlite:///{tmp_path}/history.sqlite3"
    assert (tmp_path / "history.sqlite3").is_file()
    assert not (tmp_path / "secret").exists()  # these commands sign nothing


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["--database", "mysql://somewhere/db"], "--database"),
        (["--database", "postgresql://nobody@127.0.0.1:1/none"], "--database"),
    ],
)
def test_an_unusable_database_is_one_line_naming_the_flag(
    capsys: pytest.CaptureFixture[str], args: list[str], named: str
) -> None:
    assert main(["db", "current", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1
    assert err.startswith(f"klondike-live: {named}: ")


def _start_each(paths: list[Path], barrier: Barrier, results: Queue[str]) -> None:
    """A node process: for each path, with the other node at the same instant, brings
    a new database up; puts its revision, or the error, on `results`."""

    async def start(path: Path) -> str:
        node = History.open(f"sqlite:///{path}")
        try:
            return await node.upgrade()
        except HistoryError as exc:
            return str(exc)
        finally:
            await node.close()

    for path in paths:
        barrier.wait()
        results.put(asyncio.run(start(path)))


def test_nodes_starting_together_on_a_new_sqlite_database_all_start(tmp_path: Path) -> None:
    """Two node processes bring the same new SQLite file up at once (as the workers of
    `serve --workers` do), round after round: every start reaches the head, none fails
    with "database is locked"."""
    context = multiprocessing.get_context("spawn")
    barrier, results = context.Barrier(2), context.Queue()
    paths = [tmp_path / f"{round_}" / "history.sqlite3" for round_ in range(30)]
    nodes = [
        context.Process(target=_start_each, args=(paths, barrier, results), daemon=True)
        for _ in "ab"
    ]
    for node in nodes:
        node.start()
    seen = [results.get(timeout=scaled(60)) for _ in range(2 * len(paths))]
    for node in nodes:
        node.join(scaled(30))
    assert seen == [head()] * len(seen)
