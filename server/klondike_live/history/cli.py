"""The `klondike-live db` subcommands: the history database's schema, import and purge.

    klondike-live db upgrade [--database URL] [--data-dir DIR]
    klondike-live db current [--database URL] [--data-dir DIR]
    klondike-live db import-redis [--redis URL] [--database URL] [--data-dir DIR]
                                  [--batch N] [--expire-after-import]
    klondike-live db purge --before DATE [--kind solo|race|daily] [--dry-run]
                           [--database URL] [--data-dir DIR]

The database is the one `serve` uses: `--database`, else `KLONDIKE_DATABASE_URL`, else
`history.sqlite3` in the data directory (`--data-dir`, `KLONDIKE_DATA_DIR`, or the
default). These commands read no secret and write none.

- `upgrade` brings the schema to this release's head (nodes do it on start too) and
  prints the revision before and after.
- `current` prints the database's revision and this release's head; exit status 1 when
  they differ (a deploy script's check), 0 when the database is at the head.
- `import-redis` copies the games and players' statistics that releases before the
  history database kept in Valkey (`history.importer`), with a progress bar on a
  terminal and a summary line; `--redis`, else `KLONDIKE_REDIS_URL`, else the embedded
  Valkey of the data directory.
- `purge` deletes the finished games that ended before a date (UTC), with their
  players' rows; players' statistics stay. `--dry-run` only counts.

Exit status 2, with one line naming the flag or the variable at fault and no traceback:
a bad option, an unreachable database or Redis, or a database whose schema is newer than
this release.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Awaitable, Callable
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from klondike_live.argtypes import EXIT_FAILED, EXIT_OK, positive_int
from klondike_live.errors import InputError

if TYPE_CHECKING:
    from klondike_live.config import Settings
    from klondike_live.history.database import History

__all__ = ["add_parser"]

T = TypeVar("T")

KINDS = ("solo", "race", "daily")
"""What `purge --kind` accepts: the kinds of rooms (`protocol.kinds.RoomKind`)."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the `db` subcommand group to the main CLI."""
    parser = subparsers.add_parser(
        "db",
        help="the history database: upgrade, current, import-redis, purge",
        description="The history database of finished games and players' statistics "
        "(SQLite in the data directory, or PostgreSQL with --database).",
    )
    commands = parser.add_subparsers(dest="db_command", required=True, metavar="COMMAND")

    upgrade = commands.add_parser(
        "upgrade",
        help="bring the schema to this release's (nodes also do it on start)",
        description="Bring the history database's schema to this release's head; print the "
        "revision before and after.",
    )
    _database_options(upgrade)
    upgrade.set_defaults(func=cmd_upgrade)

    current = commands.add_parser(
        "current",
        help="print the database's schema revision and this release's",
        description="Print the database's schema revision and this release's head; exit "
        "status 1 when they differ.",
    )
    _database_options(current)
    current.set_defaults(func=cmd_current)

    importer = commands.add_parser(
        "import-redis",
        help="copy the games and statistics earlier releases kept in Valkey",
        description="Copy every finished game's results and every player's statistics "
        "that releases before the history database kept in Valkey into it. Run it "
        "again at will: what is there already is skipped.",
    )
    importer.add_argument(
        "--redis",
        metavar="URL",
        help="the Redis/Valkey (any node of a Cluster) of the earlier release "
        "(default: KLONDIKE_REDIS_URL, else the embedded Valkey of --data-dir)",
    )
    _database_options(importer)
    importer.add_argument(
        "--batch",
        type=positive_int,
        default=500,
        metavar="N",
        help="keys per SCAN and games per transaction (default 500)",
    )
    importer.add_argument(
        "--expire-after-import",
        action="store_true",
        help="give the imported keys the results cache expiry "
        "(KLONDIKE_RESULTS_CACHE_MINUTES), so Valkey frees their memory",
    )
    importer.set_defaults(func=cmd_import_redis)

    purge = commands.add_parser(
        "purge",
        help="delete finished games that ended before a date",
        description="Delete the finished games that ended before DATE (UTC) and their "
        "players' rows. Players' statistics are kept as they are.",
    )
    purge.add_argument(
        "--before",
        required=True,
        type=_moment,
        metavar="DATE",
        help="YYYY-MM-DD (midnight UTC) or an ISO date and time",
    )
    purge.add_argument("--kind", choices=KINDS, help="only games of this kind of room")
    purge.add_argument("--dry-run", action="store_true", help="count only, delete nothing")
    _database_options(purge)
    purge.set_defaults(func=cmd_purge)


def _database_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--database",
        metavar="URL",
        help="sqlite:///PATH or postgresql://... (default: KLONDIKE_DATABASE_URL, else "
        "history.sqlite3 in the data directory)",
    )
    parser.add_argument("--data-dir", metavar="DIR", help="the nodes' data directory")


def _moment(text: str) -> datetime:
    """`--before`: a date (its midnight, UTC) or an ISO date and time (UTC if naive)."""
    try:
        if len(text) == 10:
            return datetime.combine(date.fromisoformat(text), time(), UTC)
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a date YYYY-MM-DD or an ISO date and time, not {text!r}"
        ) from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# ------------------------------------------------------------ the commands


def cmd_upgrade(args: argparse.Namespace) -> int:
    settings = _settings(args)

    async def run(history: History) -> tuple[str | None, str]:
        from klondike_live.history import migrate

        before = await migrate.check(history.engine)
        return before, await history.upgrade()

    before, after = _run(settings, run)
    print(f"database: {_shown(settings)}")
    print(f"before: {before or 'none (no schema)'}")
    print(f"after: {after}")
    return EXIT_OK


def cmd_current(args: argparse.Namespace) -> int:
    from klondike_live.history import migrate

    settings = _settings(args)

    async def run(history: History) -> str | None:
        return await migrate.check(history.engine)

    where = None if _missing_file(settings) else _run(settings, run)
    head = migrate.head()
    print(f"database: {_shown(settings)}")
    print(f"current: {where or 'none (no schema)'}")
    print(f"head: {head}")
    return EXIT_OK if where == head else EXIT_FAILED


def cmd_import_redis(args: argparse.Namespace) -> int:
    from tqdm import tqdm  # type: ignore[import-untyped]  # no stubs in the dev deps

    from klondike_live.history.importer import ImportTally, import_redis
    from klondike_live.store import Retention, StoreError
    from klondike_live.store.legacy import LegacyStore

    settings = _settings(args, redis_url=args.redis)
    cache_ms = Retention.from_settings(settings).results_cache_ms
    expire = cache_ms if args.expire_after_import else None
    bars: dict[str, Any] = {}

    def progress(what: str, count: int) -> None:
        if what not in bars:
            for bar in bars.values():
                bar.close()
            bars[what] = tqdm(desc=what, unit=" keys", file=sys.stderr, disable=None)
        bars[what].update(count)

    async def run(history: History) -> ImportTally:
        from klondike_live.daily.cli import connect
        from klondike_live.embedded import EmbeddedValkeyError

        await history.upgrade()
        try:
            async with connect(settings) as redis:
                return await import_redis(
                    LegacyStore(redis),
                    history,
                    batch=args.batch,
                    expire_after_ms=expire,
                    progress=progress,
                )
        except (StoreError, EmbeddedValkeyError) as exc:
            where = settings.source("redis_url" if settings.redis_url else "data_dir")
            raise InputError(f"{where}: cannot use Redis: {_one_line(exc)}") from None

    try:
        tally = _run(settings, run)
    finally:
        for bar in bars.values():
            bar.close()
    print(tally.line())
    return EXIT_OK


def cmd_purge(args: argparse.Namespace) -> int:
    settings = _settings(args)
    before: datetime = args.before
    before_ms = int(before.timestamp() * 1000)

    async def run(history: History) -> tuple[int, int]:
        from klondike_live.history import migrate

        await migrate.check(history.engine)
        return await history.purge(before_ms, kind=args.kind, dry_run=args.dry_run)

    games, players = _run(settings, run)
    which = f"{args.kind} games" if args.kind else "games"
    when = before.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    if args.dry_run:
        print(
            f"dry run: {games} {which} that ended before {when} and {players} players' rows "
            "would be deleted (players' statistics stay)"
        )
    else:
        print(
            f"deleted {games} {which} that ended before {when} and {players} players' rows "
            "(players' statistics stay)"
        )
    return EXIT_OK


# ------------------------------------------------------------ shared


def _settings(args: argparse.Namespace, *, redis_url: str | None = None) -> Settings:
    from klondike_live.config import ConfigError, Settings

    try:
        return Settings.load(
            data_dir=args.data_dir,
            database_url=args.database,
            redis_url=redis_url,
            from_flags=True,
            need_secret=False,
        )
    except ConfigError as exc:
        raise InputError(str(exc)) from None


def _shown(settings: Settings) -> str:
    from klondike_live.config import redact_url

    return redact_url(settings.history_url)


def _missing_file(settings: Settings) -> bool:
    """A SQLite database whose file does not exist yet (left uncreated by `current`)."""
    from klondike_live.history import HistoryError, database_url

    try:
        url = database_url(settings.history_url)
    except HistoryError:
        return False  # said by `_run`
    return url.get_backend_name() == "sqlite" and not Path(url.database or "").exists()


def _run(settings: Settings, work: Callable[[History], Awaitable[T]]) -> T:
    """`work` on the history database, which is closed after; every failure of the
    database (unreachable, refused, a schema too new) as one line, status 2."""
    from sqlalchemy.exc import SQLAlchemyError

    from klondike_live.history import History, HistoryError, MigrationError

    source = settings.source("database_url" if settings.database_url else "data_dir")
    try:
        history = History.open(settings.history_url)
    except (HistoryError, OSError) as exc:
        raise InputError(f"{source}: {_one_line(exc)}") from None

    async def run() -> T:
        try:
            return await work(history)
        finally:
            await history.close()

    try:
        return asyncio.run(run())
    except MigrationError as exc:
        raise InputError(_one_line(exc)) from None
    except HistoryError as exc:
        raise InputError(f"{source}: {_one_line(exc)}") from None
    except (SQLAlchemyError, OSError) as exc:
        reason = getattr(exc, "orig", None) or exc
        raise InputError(
            f"{source}: cannot reach the history database: {_one_line(reason)}"
        ) from None


def _one_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
