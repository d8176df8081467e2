"""The expert bot's win rate on certified deals, from its own view only.

Certifies deals first: seeds `bots-0`, `bots-1`, ... (draw 1, one pass) are solved with
full information (`--certify-nodes` nodes, as the deal pool does); the first `--deals`
proven winnable are kept. Then a bot of `--level` plays each one from its racer view
(`policy.Player`, exactly the policy the server runs), once per bot seed of
`--bot-seeds` (a bot's seed picks its samples of the hidden cards), and the number of
wins is printed per seed and in all, with the cards home of the lost games and the
bot's thinking time (CPU) per game: median and p90, against the time the
full-information solver took to certify the same deals (the baseline of the same run).

    .venv/bin/python bench/bench_bots.py [--deals 50] [--level expert] [--workers 2]
        [--bot-seeds 1,2,3]
"""

from __future__ import annotations

import concurrent.futures
import statistics
import time

from harness.report import numbers, parser, percentile
from klondike_live.bots.levels import LEVELS
from klondike_live.bots.policy import Player
from klondike_live.engine import Board, Variant
from klondike_live.engine.view import racer_view
from klondike_live.protocol.kinds import BotLevel
from klondike_live.solver.search import SOLVABLE, Budget, solve

VARIANT = Variant(draw=1, passes=1)


def certify(seed: str, nodes: int) -> tuple[str, bool, float]:
    started = time.process_time()
    result = solve(Board.from_seed(seed, VARIANT), Budget(nodes=nodes))
    return seed, result.result == SOLVABLE, time.process_time() - started


def play(seed: str, level: str, bot_seed: int) -> tuple[str, bool, int, int, float, int]:
    """One game: seed, won, moves, cards home, CPU seconds, searches."""
    board = Board.from_seed(seed, VARIANT)
    player = Player(LEVELS[BotLevel(level)], seed=bot_seed)
    started = time.process_time()
    moves = 0
    while not board.is_won() and moves < 1000:
        token = player.choose(racer_view(board))
        if token is None:
            break
        board.play(token)
        moves += 1
    spent = time.process_time() - started
    return seed, board.is_won(), moves, board.foundation_count, spent, player.memory.decisions


def main() -> None:
    options = parser(__doc__)
    options.add_argument("--deals", type=int, default=50)
    options.add_argument("--level", default="expert", choices=[str(x) for x in BotLevel])
    options.add_argument("--certify-nodes", type=int, default=300_000)
    options.add_argument("--workers", type=int, default=2)
    options.add_argument("--bot-seeds", type=numbers, default=[1], help="e.g. 1,2,3")
    args = options.parse_args()
    bot_seeds: list[int] = args.bot_seeds
    with concurrent.futures.ProcessPoolExecutor(args.workers) as pool:
        deals: list[str] = []
        certify_cpu: list[float] = []
        index = 0
        while len(deals) < args.deals:
            batch = [f"bots-{i}" for i in range(index, index + 4 * args.workers)]
            index += len(batch)
            for seed, won, spent in pool.map(certify, batch, [args.certify_nodes] * len(batch)):
                if won and len(deals) < args.deals:
                    deals.append(seed)
                    certify_cpu.append(spent)
        print(f"{len(deals)} certified deals among the first {index} seeds")
        played = {
            s: list(pool.map(play, deals, [args.level] * len(deals), [s] * len(deals)))
            for s in bot_seeds
        }
    for s, some in played.items():
        winners = [g[0] for g in some if g[1]]
        print(f"bot seed {s}: won {len(winners)}/{len(some)}: " + " ".join(winners))
    games = [g for some in played.values() for g in some]
    wins = sum(1 for g in games if g[1])
    cpu = [g[4] for g in games]
    print(
        f"{args.level}: won {wins}/{len(games)} games of certified deals"
        f" ({100 * wins / len(games):.0f}%)"
    )
    print(
        f"thinking CPU per game: median {statistics.median(cpu):.2f} s, p90 "
        f"{percentile(cpu, 90):.2f} s; searches per game: median "
        f"{statistics.median(g[5] for g in games):.0f}"
    )
    baseline = statistics.median(certify_cpu)
    print(
        f"baseline, the full-information solver certifying a deal: median {baseline:.2f} s"
        f" (the bot's thinking: {statistics.median(cpu) / baseline:.1f}x)"
    )
    lost = sorted(g[3] for g in games if not g[1])
    if lost:
        print(
            f"lost games: {len(lost)}, cards home median {statistics.median(lost):.0f}"
            f" (from {lost[0]} to {lost[-1]})"
        )


if __name__ == "__main__":
    main()
