"""The `klondike-live daily` subcommands.

    klondike-live daily prepare [--days N] [--start YYYY-MM-DD] [--draw 1|3]
                                [--budget SECONDS] [--nodes N]
                                [--redis URL] [--data-dir DIR]

`prepare` makes sure the daily challenges of N days from `--start` (default: today,
UTC) exist, certifying deals where needed (a progress bar on stderr), and prints one
line per day and variant: date, variant, commitment and par, plus the seed only for a
day that has already closed. It uses the server's secret and Redis as `serve` does:
`--redis` or `KLONDIKE_REDIS_URL`, else the embedded Valkey of `--data-dir` (the one a
running server started, or a fresh one). Exit status: 0 done, 1 a day could not be
certified, 2 unusable options or an unreachable Redis (message on stderr, no traceback).

This module must never print the seed of a day that is not closed.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from collections.abc import AsyncIterator
from datetime import UTC, date, datetime
from typing import TYPE_CHECKING

from klondike_live.argtypes import (
    EXIT_BAD_INPUT,
    EXIT_FAILED,
    EXIT_OK,
    positive_int,
    positive_seconds,
)
from klondike_live.daily.variants import DAILY_VARIANTS, DEFAULT_DAILY_BUDGET
from klondike_live.engine import Variant
from klondike_live.solver import Budget

if TYPE_CHECKING:
    from klondike_live.config import Settings
    from klondike_live.daily.days import DayRecord
    from klondike_live.store.connect import RedisClient

MAX_DAYS = 366


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `daily` subcommand group to the main CLI."""
    parser = subparsers.add_parser(
        "daily",
        help="daily challenges: prepare certified deals",
        description="Daily challenges: one certified-winnable deal per variant per UTC day.",
    )
    commands = parser.add_subparsers(dest="daily_command", required=True, metavar="COMMAND")
    prepare = commands.add_parser(
        "prepare",
        help="certify and store the daily deals of the coming days",
        description="Make sure the daily challenges of N days exist; print their date, "
        "variant, commitment and par (the seed only for a day that has closed).",
    )
    prepare.add_argument(
        "--days",
        type=_days,
        default=7,
        metavar="N",
        help=f"how many days, 1..{MAX_DAYS} (default 7)",
    )
    prepare.add_argument(
        "--start",
        type=_date,
        default=None,
        metavar="YYYY-MM-DD",
        help="first day, YYYY-MM-DD (default: today, UTC)",
    )
    prepare.add_argument(
        "--draw", type=int, choices=(1, 3), default=None, help="only this daily variant"
    )
    prepare.add_argument(
        "--budget",
        type=positive_seconds,
        default=DEFAULT_DAILY_BUDGET.seconds,
        metavar="SECONDS",
        help=f"solver time limit per candidate deal (default {DEFAULT_DAILY_BUDGET.seconds:g})",
    )
    prepare.add_argument(
        "--nodes",
        type=positive_int,
        metavar="N",
        default=DEFAULT_DAILY_BUDGET.nodes,
        help=f"solver node limit per candidate deal (default {DEFAULT_DAILY_BUDGET.nodes})",
    )
    prepare.add_argument(
        "--redis",
        metavar="URL",
        help="shared Redis/Valkey URL (default: the embedded Valkey of --data-dir)",
    )
    prepare.add_argument(
        "--data-dir", metavar="DIR", help="where the secret and the embedded Valkey live"
    )
    prepare.set_defaults(func=run_prepare_command)


def run_prepare_command(args: argparse.Namespace) -> int:
    """Entry point of `daily prepare`; returns the exit status."""
    # Imported here: every other command of the CLI starts faster without Redis.
    import asyncio

    from klondike_live.config import ConfigError, Settings
    from klondike_live.daily.days import DailyError
    from klondike_live.embedded import EmbeddedValkeyError
    from klondike_live.store import StoreError

    try:
        settings = Settings.load(redis_url=args.redis, data_dir=args.data_dir)
    except ConfigError as exc:
        return _fail(str(exc), EXIT_BAD_INPUT)
    variants = [v for v in DAILY_VARIANTS if args.draw in (None, v.draw)]
    start = args.start if args.start is not None else datetime.now(UTC).date()
    budget = Budget(seconds=args.budget, nodes=args.nodes)
    try:
        asyncio.run(_prepare(settings, start, args.days, variants, budget))
    except (StoreError, EmbeddedValkeyError, OSError) as exc:
        return _fail(f"cannot use Redis: {exc}", EXIT_BAD_INPUT)
    except DailyError as exc:
        return _fail(str(exc), EXIT_FAILED)
    return EXIT_OK


async def _prepare(
    settings: Settings, start: date, days: int, variants: list[Variant], budget: Budget
) -> None:
    from tqdm import tqdm  # type: ignore[import-untyped]  # no stubs in the dev deps

    from klondike_live.daily.days import ensure_days
    from klondike_live.store.daily import DailyStore

    async with connect(settings) as redis:
        with tqdm(
            total=days * len(variants), desc="daily prepare", unit="deal", file=sys.stderr
        ) as bar:

            def ready(record: DayRecord) -> None:
                bar.update(1)
                tqdm.write(describe(record, datetime.now(UTC)), file=sys.stdout)

            await ensure_days(
                DailyStore(redis),
                settings.secret,
                start,
                days,
                variants=variants,
                budget=budget,
                on_ready=ready,
            )


def describe(record: DayRecord, now: datetime) -> str:
    """One output line: date, variant, commitment, par; the seed once the day closed."""
    from klondike_live.daily.days import is_closed

    line = (
        f"{record.day.isoformat()}  {record.variant}  "
        f"commitment {record.commitment}  par {record.par}"
    )
    if is_closed(record.day, now):
        line += f"  seed {record.seed}"
    return line


@contextlib.asynccontextmanager
async def connect(settings: Settings) -> AsyncIterator[RedisClient]:
    """Redis as `serve` would use it: the configured URL, else the embedded Valkey.

    Without a URL, a Valkey that a running server started in the data directory is
    used through its `url` file; otherwise one is started here and stopped after.
    """
    from klondike_live.embedded import EmbeddedValkey
    from klondike_live.store.connect import open_redis

    if settings.redis_url is not None:
        shared: RedisClient | None = await open_redis(settings.redis_url)
    else:
        shared = await _running_embedded(settings)
    if shared is not None:
        try:
            yield shared
        finally:
            await shared.aclose()
        return
    async with EmbeddedValkey(settings.data_dir) as url:
        own = await open_redis(url)
        try:
            yield own
        finally:
            await own.aclose()


async def _running_embedded(settings: Settings) -> RedisClient | None:
    """A client on the embedded Valkey a running server owns, if there is one."""
    from klondike_live.embedded import EmbeddedValkey
    from klondike_live.store import StoreError
    from klondike_live.store.connect import open_redis

    url_file = EmbeddedValkey(settings.data_dir).directory / "url"
    try:
        url = url_file.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not url:
        return None
    try:
        return await open_redis(url)
    except (StoreError, OSError):
        return None  # left over from a server that was killed


def _fail(message: str, status: int) -> int:
    print(f"klondike-live daily: {message}", file=sys.stderr)
    return status


def _days(text: str) -> int:
    if text.isascii() and text.isdigit() and 1 <= int(text) <= MAX_DAYS:
        return int(text)
    raise argparse.ArgumentTypeError(f"expected a number of days 1..{MAX_DAYS}, not {text!r}")


def _date(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a date YYYY-MM-DD, not {text!r}") from None
