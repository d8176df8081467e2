"""`klondike-live daily prepare`: certifies days, prints commitments, never open seeds."""

from __future__ import annotations

import asyncio
import re
from datetime import date
from pathlib import Path

import pytest

from klondike_live.cli import main
from klondike_live.daily.days import DayRecord, daily_seed, load_day
from klondike_live.daily.variants import DRAW3
from klondike_live.store.connect import open_redis
from klondike_live.store.daily import DailyStore

from daily_helpers import TEST_SECRET

FAST = ["--draw", "3", "--nodes", "20000", "--budget", "30"]
LINE = re.compile(
    r"^(\d{4}-\d\d-\d\d)  draw=3 passes=3 f2t=no  commitment ([0-9a-f]{64})  par (\d+)"
    r"(?:  seed ([0-9a-f]{64}))?$"
)


@pytest.fixture(autouse=True)
def environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test secret, and no Redis URL or data directory from the environment."""
    for name in ("KLONDIKE_REDIS_URL", "KLONDIKE_DATA_DIR", "KLONDIKE_SECRET"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("KLONDIKE_SECRET", TEST_SECRET.decode())


def stored(url: str, day: date, *, flush: bool = False) -> DayRecord | None:
    """The day's draw-3 record on the test Valkey (after FLUSHALL when `flush`)."""

    async def read() -> DayRecord | None:
        redis = await open_redis(url)
        try:
            if flush:
                await redis.flushall()
            return await load_day(DailyStore(redis), day, DRAW3)
        finally:
            await redis.aclose()

    return asyncio.run(read())


def lines(out: str) -> list[re.Match[str]]:
    found = [LINE.match(line) for line in out.splitlines()]
    assert all(found), out
    return [m for m in found if m is not None]


def test_prepare_prints_public_fields_of_open_days(
    valkey_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Future days: date, variant, commitment and par per line, no seed; idempotent."""
    assert stored(valkey_url, date(2030, 1, 4), flush=True) is None
    args = ["daily", "prepare", "--days", "2", "--start", "2030-01-04", "--redis", valkey_url]
    assert main([*args, *FAST, "--data-dir", str(tmp_path)]) == 0
    out, err = capsys.readouterr()
    found = lines(out)
    assert [m[1] for m in found] == ["2030-01-04", "2030-01-05"]
    for match in found:
        record = stored(valkey_url, date.fromisoformat(match[1]))
        assert record is not None
        assert (match[2], int(match[3]), match[4]) == (record.commitment, record.par, None)
        assert record.seed not in out + err
    assert "daily prepare" in err  # the progress bar
    assert main([*args, *FAST, "--data-dir", str(tmp_path)]) == 0
    assert capsys.readouterr().out == out


def test_prepare_shows_the_seed_of_a_closed_day(
    valkey_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A day that is over may be revealed: its line ends with the seed."""
    assert stored(valkey_url, date(2020, 2, 29), flush=True) is None
    args = ["daily", "prepare", "--days", "1", "--start", "2020-02-29", "--redis", valkey_url]
    assert main([*args, *FAST, "--data-dir", str(tmp_path)]) == 0
    (match,) = lines(capsys.readouterr().out)
    record = stored(valkey_url, date(2020, 2, 29))
    assert record is not None
    assert match[4] == record.seed == daily_seed(TEST_SECRET, date(2020, 2, 29), DRAW3, record.n)


def test_prepare_with_the_embedded_valkey_survives_a_restart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without --redis it starts the data directory's Valkey; the records persist."""
    monkeypatch.delenv("KLONDIKE_SECRET")  # the secret file of the data directory
    args = ["daily", "prepare", "--days", "1", "--start", "2030-01-06", *FAST]
    assert main([*args, "--data-dir", str(tmp_path)]) == 0
    first = capsys.readouterr().out
    assert len(lines(first)) == 1
    assert (tmp_path / "secret").exists() and (tmp_path / "valkey").is_dir()
    assert main([*args, "--data-dir", str(tmp_path), "--nodes", "1"]) == 0  # kept, not redone
    assert capsys.readouterr().out == first


def test_bad_options_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Unusable options and an unreachable Redis: a message, status 2, no traceback."""
    for bad in (["--days", "0"], ["--start", "tomorrow"], ["--budget", "-1"], ["--nodes", "x"]):
        with pytest.raises(SystemExit) as exit_info:
            main(["daily", "prepare", *bad])
        assert exit_info.value.code == 2
    assert main(["daily", "prepare", "--redis", "http://nowhere", "--data-dir", str(tmp_path)]) == 2
    assert "KLONDIKE_REDIS_URL" in capsys.readouterr().err
    unreachable = ["--redis", "redis://127.0.0.1:1/0", "--data-dir", str(tmp_path)]
    assert main(["daily", "prepare", "--days", "1", *unreachable]) == 2
    err = capsys.readouterr().err
    assert "cannot use Redis" in err and "Traceback" not in err
