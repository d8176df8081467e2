"""The `klondike-live` command line.

    klondike-live deal SEED [--draw 1|3]      the deal text of a seed (algorithm kd1)
    klondike-live check FILE|-                replay a game record, print the final position
    klondike-live show SEED|FILE              a readable board in the terminal
    klondike-live solve ...                   the solver (see `klondike-live solve --help`)
    klondike-live analyse FILE [--budget S] [--json]
                                              per-ply verdicts of a game record
    klondike-live daily prepare [--days N]    certify the coming days' daily deals
    klondike-live token --bot NAME [--days N] [--data-dir DIR]
                                              a bot account's token (claim `bot`), signed
                                              with the node's secret
    klondike-live serve [--host H] [--port P] [--redis URL] [--data-dir DIR]
                        [--database URL] [--workers N|auto] [--loop auto|uvloop|asyncio]
                        [--log-level LEVEL] [--log-format text|json]
                                              run a server node (embedded Valkey without
                                              --redis; SQLite history without
                                              --database); --workers: N nodes on one port
    klondike-live db upgrade|current|import-redis|purge ...
                                              the history database: schema, import of
                                              an earlier release's Valkey, purge (see
                                              `klondike-live db --help`)
    klondike-live cluster [--nodes 3] [--port 8765] [--masters 3] [--replicas 1]
                          [--data-dir DIR] [--loop auto|uvloop|asyncio]
                                              a local Valkey Cluster with nodes on it (Ctrl-C
                                              stops the nodes, then the cluster)

Exit status: 0 success; 1 a record whose moves do not replay or whose result is false;
2 unreadable or malformed input (the message names the line and the problem), and for
`serve` any failed start: a bad setting, an unreachable Redis, a port in use (one line
naming the flag or the variable at fault); for `cluster` 2 a bad option or a port in
use, 1 a cluster or node that did not start or a node that stopped on its own. Errors
never print a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from klondike_live import __version__, compiled, devnodes
from klondike_live.argtypes import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK
from klondike_live.engine import (
    Board,
    Deal,
    GameRecord,
    KlondikeError,
    NotationError,
    RecordResultError,
    ReplayError,
    Variant,
    format_position,
    parse_position,
)
from klondike_live.engine.variant import UNLIMITED
from klondike_live.errors import InputError
from klondike_live.terminal import render, use_colour


def read_text(source: str) -> str:
    """The text of a file, or of standard input for `-`."""
    if source == "-":
        return sys.stdin.read()
    try:
        return Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {source}: {exc}") from None


def variant_from_args(args: argparse.Namespace) -> Variant:
    """The variant named by `--draw`, `--passes` and `--f2t` (defaults as the rules say)."""
    passes = getattr(args, "passes", None)
    if passes is None:
        passes_value = -1
    elif passes == "unlimited":
        passes_value = UNLIMITED
    else:
        passes_value = int(passes)
    return Variant(draw=args.draw, passes=passes_value, f2t=getattr(args, "f2t", False))


def passes_arg(text: str) -> str:
    """argparse type for `--passes`: a positive number or `unlimited`."""
    if text == "unlimited" or (text.isdigit() and int(text) >= 1):
        return text
    raise argparse.ArgumentTypeError(f"expected a positive number or 'unlimited', not {text!r}")


def add_variant_options(parser: argparse.ArgumentParser) -> None:
    """`--draw`, `--passes`, `--f2t`, shared by the commands that start a game."""
    parser.add_argument("--draw", type=int, choices=(1, 3), default=1, help="cards per turn")
    parser.add_argument(
        "--passes",
        type=passes_arg,
        help="passes through the stock: N or 'unlimited' (default: 1 with draw 1, 3 with draw 3)",
    )
    parser.add_argument("--f2t", action="store_true", help="allow foundation-to-tableau moves")


def load_board(source: str, variant: Variant) -> Board:
    """A board from a seed, or from a file holding a deal, a position or a game record.

    An existing file (or `-`) is read and recognised by its header line; anything else
    is taken as a seed string.
    """
    if source != "-" and not Path(source).is_file():
        return Board.from_seed(source, variant)
    text = read_text(source)
    header = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if header == "klondike-game 1":
        return GameRecord.parse(text).replay()
    if header == "klondike-position 1":
        return parse_position(text)
    return Board(Deal.parse(text), variant)


def cmd_deal(args: argparse.Namespace) -> int:
    """Print the deal text of a seed. The deal does not depend on the variant."""
    sys.stdout.write(str(Deal.from_seed(args.seed)))
    return EXIT_OK


def cmd_check(args: argparse.Namespace) -> int:
    """Replay a game record; print the final position and the result, or the bad move."""
    record = GameRecord.parse(read_text(args.file))
    try:
        board = record.replay()
    except ReplayError as exc:
        print(f"illegal move {exc.index} {exc.token!r}: {exc.reason}")
        return EXIT_FAILED
    except RecordResultError as exc:
        print(f"wrong result: {exc}")
        return EXIT_FAILED
    result = "won" if board.is_won() else (record.result or "unfinished")
    sys.stdout.write(format_position(board))
    print(f"result: {result}")
    return EXIT_OK


def cmd_show(args: argparse.Namespace) -> int:
    """Print a readable board for a seed or a file."""
    board = load_board(args.source, variant_from_args(args))
    sys.stdout.write(render(board, colour=use_colour(sys.stdout)))
    return EXIT_OK


def cmd_serve(args: argparse.Namespace) -> int:
    """Run a server node until SIGTERM or SIGINT; a failed start is one line, status 2."""
    import dataclasses
    import logging
    import os
    from typing import cast

    from klondike_live import eventloop
    from klondike_live.config import ConfigError, Settings, log_options, unknown_variables
    from klondike_live.gateway.server import serve_forever
    from klondike_live.gateway.startup import StartupError
    from klondike_live.gateway.workers import Workers, worker_count
    from klondike_live.logs import LogFormat
    from klondike_live.logs import configure as configure_logging

    try:
        level, fmt = log_options(level=args.log_level, fmt=args.log_format)
    except ConfigError as exc:
        raise InputError(str(exc)) from None
    configure_logging(level, cast(LogFormat, fmt))
    for warning in unknown_variables(os.environ):
        logging.getLogger("klondike_live.config").warning(warning)
    try:
        settings = Settings.load(
            host=args.host,
            port=args.port,
            redis_url=args.redis,
            data_dir=args.data_dir,
            database_url=args.database,
            loop=args.loop,
            secret_from_redis=True,
            from_flags=True,
        )
        # Resolved once here: the workers get the name, and only this process logs
        # a fallback to asyncio's loop.
        settings = dataclasses.replace(settings, loop=eventloop.choose(settings))
        workers = worker_count(args.workers)
        if workers > 1:
            return Workers(settings, workers, level, fmt).run()
        eventloop.run(serve_forever(settings), settings.loop)
    except (ConfigError, StartupError) as exc:
        raise InputError(str(exc)) from None
    except ValueError as exc:  # --workers
        raise InputError(str(exc)) from None
    return EXIT_OK


def cmd_token(args: argparse.Namespace) -> int:
    """Print a bot account's token, signed with the secret `serve` would use (the
    variable KLONDIKE_SECRET, else the data directory's secret file)."""
    from klondike_live.auth import mint_bot_token
    from klondike_live.config import ConfigError, Settings

    try:
        settings = Settings.load(data_dir=args.data_dir)
    except ConfigError as exc:
        raise InputError(str(exc)) from None
    if args.days < 1:
        raise InputError("--days must be at least 1")
    try:
        token, identity = mint_bot_token(settings.keys, args.bot, lifetime=args.days * 86_400)
    except ValueError as exc:
        raise InputError(f"--bot: {exc}") from None
    print(token)
    print(
        f"user {identity.user_id}, name {identity.name!r}, valid {args.days} days", file=sys.stderr
    )
    return EXIT_OK


def cmd_cluster(args: argparse.Namespace) -> int:
    """Run a local Valkey Cluster and nodes on it until SIGTERM or SIGINT (devnodes)."""
    try:
        return devnodes.run(devnodes.Options.from_args(args))
    except devnodes.OptionError as exc:
        raise InputError(str(exc)) from None


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    parser = argparse.ArgumentParser(
        prog="klondike-live",
        description="Klondike Live: seeded Klondike deals, races and tools.",
    )
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s {__version__}, core {compiled.describe()}",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    deal = commands.add_parser("deal", help="print the deal text of a seed")
    deal.add_argument("seed", help="the seed string, e.g. 12345")
    deal.add_argument(
        "--draw",
        type=int,
        choices=(1, 3),
        default=1,
        help="accepted for symmetry with the other commands; a deal is the same for every variant",
    )
    deal.set_defaults(func=cmd_deal)

    check = commands.add_parser("check", help="replay a game record and print the result")
    check.add_argument("file", help="a game record file, or - for standard input")
    check.set_defaults(func=cmd_check)

    show = commands.add_parser("show", help="print a readable board")
    show.add_argument("source", help="a seed, or a file with a deal, position or game record")
    add_variant_options(show)
    show.set_defaults(func=cmd_show)

    serve = commands.add_parser("serve", help="run a server node")
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    # Checked by the settings, so that a bad value reads like a bad KLONDIKE_PORT.
    serve.add_argument("--port", help="port to listen on (default 8765; 0 picks one)")
    serve.add_argument(
        "--redis", help="shared Redis/Valkey URL (default: a private embedded Valkey)"
    )
    serve.add_argument(
        "--data-dir",
        help="where the secret, the embedded Valkey's files and the SQLite history live",
    )
    serve.add_argument(
        "--database",
        help="history database: sqlite:///PATH or postgresql://USER:PASSWORD@HOST/DB "
        "(default: history.sqlite3 in the data dir; nodes of a shared Redis share one)",
    )
    serve.add_argument(
        "--workers",
        default="1",
        help="node processes sharing the port (default 1; auto: one per core)",
    )
    serve.add_argument(
        "--loop",
        help="event loop: auto (default: uvloop where it is installed, else asyncio),"
        " uvloop or asyncio",
    )
    serve.add_argument("--log-level", help="debug, info (default), warning, error or critical")
    serve.add_argument("--log-format", help="text (default) or json: one JSON object per line")
    serve.set_defaults(func=cmd_serve)

    token = commands.add_parser(
        "token",
        help="issue a bot account's token",
        description="Print a token for a bot account (claim `bot`): it races through the"
        " websocket API in rooms that allow bots, labelled as a bot.",
    )
    token.add_argument("--bot", required=True, metavar="NAME", help="the bot's display name")
    token.add_argument("--days", type=int, default=365, help="validity in days (default 365)")
    token.add_argument("--data-dir", help="where the node's secret file lives")
    token.set_defaults(func=cmd_token)

    cluster = commands.add_parser(
        "cluster",
        help="a local Valkey Cluster with server nodes on it, for trying several nodes",
        description="Start a Valkey Cluster on free loopback ports, then server nodes on"
        " 127.0.0.1 ports PORT, PORT+1, ... sharing it and one secret; Ctrl-C stops the"
        " nodes, then the cluster.",
    )
    devnodes.add_arguments(cluster)
    cluster.set_defaults(func=cmd_cluster)

    for register in _plugins():
        register(commands)
    return parser


def _plugins() -> list[Callable[[argparse._SubParsersAction[argparse.ArgumentParser]], None]]:
    """Subcommands that live beside their subsystem."""
    from klondike_live.daily.cli import add_parser as add_daily
    from klondike_live.history.cli import add_parser as add_db
    from klondike_live.solver.analysis_cli import add_parser as add_analyse
    from klondike_live.solver.cli import add_parser as add_solve

    return [add_solve, add_analyse, add_daily, add_db]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    args = build_parser().parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except (InputError, NotationError) as exc:
        print(f"klondike-live: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ReplayError as exc:
        print(f"illegal move {exc.index} {exc.token!r}: {exc.reason}")
        return EXIT_FAILED
    except KlondikeError as exc:
        print(f"klondike-live: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except BrokenPipeError:
        return EXIT_OK
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
