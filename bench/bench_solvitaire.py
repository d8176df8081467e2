"""Our solver against Solvitaire (C++, Charlie Blake) on the same kd1 deals (not a test).

    .venv/bin/python bench/bench_solvitaire.py --solvitaire /opt/solvitaire/solvitaire
    SOLVITAIRE=/opt/solvitaire/solvitaire .venv/bin/python bench/bench_solvitaire.py \\
        --seeds 1-50 --timeout 10 --variants d1p1,d3p1,d3pu,d3p3 --jsonl out.jsonl

Solvitaire is not a project dependency: build it yourself (docs/benchmarks.md, "Against
Solvitaire") and give its binary with `--solvitaire` or `$SOLVITAIRE`.

For each seed the deal (`Deal.from_seed`) is written in Solvitaire's JSON deal format:
`"tableau piles"` our piles 1..7, each bottom to top, every card but the last face down
(Solvitaire marks a face-down card by a lower-case suit, "10h"; an upper-case card is
face up even under rules whose "face up cards" is "top"), and `"stock"` bottom first
(Solvitaire deals from the end of the array; ours lists the stock top first, so the
list is reversed); "T" is written "10".
The rules are Solvitaire's `klondike` preset (kings only in spaces, red-black
building, a partial run moved only when the card it uncovers can go up: the same
restriction as our default `partial` reduction) with `"removable": false` (our
`f2t=no`) and the variant's stock: `"deal count"` 1 or 3, `"redeal"` false (one pass)
or true (unlimited passes). Solvitaire has no pass limit between one and unlimited, so
draw-3 three passes (`d3p3`) runs our solver only and checks it against the two
variants that bracket it: a deal Solvitaire wins in one pass is winnable in three, a
deal it proves lost with unlimited passes is lost in three.

Variants: `d1p1` draw 1 one pass, `d3p1` draw 3 one pass, `d3pu` draw 3 unlimited
passes, `d3p3` draw 3 three passes (ours only).

Each deal runs Solvitaire (one child process, `--classify`) and then our solver
(`solve()` in this process, as `solve --batch` does: no interpreter start-up per deal),
one at a time, on one core (`--core`). Budgets: with `--clock cpu` (the default) both
get `--timeout` CPU seconds (ours `Budget(cpu=True)`; Solvitaire `RLIMIT_CPU`, killed
2 s past it, with its own wall timeout as a backstop at 20x or 120 s), and for both a
verdict reached after more than `--timeout` CPU seconds counts as undecided, so that
the other work on a shared machine does not decide the share; with `--clock wall` both
get the same wall-clock limit (ours `Budget(seconds)`, Solvitaire `--timeout` in ms).
CPU is measured the same way for both: user + system time (Solvitaire: its whole
process, from `getrusage(RUSAGE_CHILDREN)`; ours: `time.process_time()` around `solve`,
which includes replaying the answer through `Board.play`).

Per variant it prints the share decided by each, the deals decided by one only, every
disagreement in verdict (a bug in the mapping or in a solver), median and p90 CPU per
deal on the deals both decide, and the ratio ours/theirs. The mapping is checked on
the first `--check-lines` deals Solvitaire wins per variant: its printed solution is
turned into our move tokens and replayed through `Board.play` to a won game.
"""

from __future__ import annotations

import gc
import itertools
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from harness.report import parser, percentile, seeds
from klondike_live.engine import Board, Deal, KlondikeError, Variant
from klondike_live.engine.cards import Card
from klondike_live.engine.variant import UNLIMITED
from klondike_live.solver import Budget, solve

SOLVABLE, UNSOLVABLE, UNKNOWN = "solvable", "unsolvable", "unknown"


@dataclass(frozen=True)
class Spec:
    """One variant: ours, and Solvitaire's stock rules (None: not expressible there)."""

    name: str
    variant: Variant
    deal_count: int | None
    redeal: bool


SPECS = {
    "d1p1": Spec("d1p1", Variant(draw=1, passes=1), 1, False),
    "d3p1": Spec("d3p1", Variant(draw=3, passes=1), 3, False),
    "d3pu": Spec("d3pu", Variant(draw=3, passes=UNLIMITED), 3, True),
    "d3p3": Spec("d3p3", Variant(draw=3, passes=3), None, False),
}


def rules_json(spec: Spec) -> dict[str, object]:
    """Solvitaire's custom rules for `spec`: its klondike preset, f2t off, our stock."""
    return {
        "tableau piles": {
            "count": 7,
            "build policy": "red-black",
            "spaces policy": "kings",
            "move built group": "partial-if-card-above-buildable",
            "diagonal deal": True,
            "face up cards": "top",
        },
        "foundations": {"removable": False},
        "stock": {"size": 24, "deal count": spec.deal_count, "redeal": spec.redeal},
    }


def card_text(card: Card, face_down: bool = False) -> str:
    """Our card text in Solvitaire's spelling: 10 for T, a lower-case suit when face down."""
    text = str(card).replace("T", "10")
    return text[:-1] + text[-1].lower() if face_down else text


def deal_json(deal: Deal) -> dict[str, object]:
    """The deal in Solvitaire's format: piles bottom to top, the stock bottom first.

    Solvitaire reads a card as face down only when its suit letter is lower case
    ("10h"); upper case is face up, whatever the rules' "face up cards" say.
    """
    return {
        "tableau piles": [
            [card_text(c, face_down=i < len(pile) - 1) for i, c in enumerate(pile)]
            for pile in deal.tableau
        ],
        "stock": [card_text(c) for c in reversed(deal.stock)],
    }


@dataclass
class Run:
    """One solver on one deal."""

    verdict: str
    cpu: float
    wall: float
    note: str = ""


def limit_cpu(seconds: float) -> None:
    """In the Solvitaire child: SIGXCPU 2 s past `seconds` of CPU, SIGKILL a second later.

    The kernel's limit is coarse (whole seconds, its own accounting), so the child gets
    some slack and `over_budget` then applies the same cut to both solvers.
    """
    soft = max(1, math.ceil(seconds) + 2)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))


def over_budget(run: Run, timeout: float, cpu_clock: bool) -> Run:
    """With CPU budgets, a verdict that took more than `timeout` CPU seconds is unknown."""
    if cpu_clock and run.verdict != UNKNOWN and run.cpu > timeout:
        return Run(UNKNOWN, run.cpu, run.wall, f"{run.verdict} after the budget")
    return run


def run_solvitaire(
    binary: str, rules: Path, deal: Path, timeout: float, cpu_clock: bool, classify: bool = True
) -> tuple[Run, str]:
    """Run Solvitaire on one deal file; its verdict, CPU and wall time, and its stdout."""
    # A loaded machine stretches CPU seconds into many more wall seconds: a wide backstop.
    wall_limit = max(timeout * 20, 120.0) if cpu_clock else timeout
    command = [binary, "--custom-rules", str(rules), "--timeout", str(round(wall_limit * 1000))]
    if classify:
        command.append("--classify")
    command.append(str(deal))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            command,
            capture_output=True,
            text=True,
            timeout=wall_limit + 10,
            preexec_fn=(lambda: limit_cpu(timeout)) if cpu_clock else None,
            check=False,
        )
        out, code = proc.stdout, proc.returncode
    except subprocess.TimeoutExpired as exc:
        out, code = str(exc.stdout or ""), -9
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if code != 0:
        return Run(UNKNOWN, cpu, wall, f"exit {code}"), out
    if not classify:
        head = SOLVABLE if "Solution Type: solved" in out else UNKNOWN
        return Run(head, cpu, wall), out
    fields = [f.strip() for f in out.strip().splitlines()[-1].split(",")] if out.strip() else []
    kind = fields[-1] if fields else ""
    verdict = {"solved": SOLVABLE, "unsolvable": UNSOLVABLE}.get(kind, UNKNOWN)
    return Run(verdict, cpu, wall, "" if verdict != UNKNOWN else kind or "no output"), out


def run_ours(board: Board, timeout: float, cpu_clock: bool) -> Run:
    """Our solver in this process, budgeted like Solvitaire."""
    gc.collect()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    result = solve(board, Budget(seconds=timeout, cpu=cpu_clock))
    return Run(result.result, time.process_time() - cpu0, time.perf_counter() - wall0)


# ---------------------------------------------------------------- the mapping check

Loc = tuple[str, int, int]  # ("t", column, index) | ("s", 0, i) | ("w", 0, i) | ("f", 0, 0)
DOWN = "down"  # what lies under a card on a face-down card ("##" in Solvitaire's print)


@dataclass
class State:
    """One printed Solvitaire state: where each known card is, and what lies under it."""

    places: dict[Card, Loc] = field(default_factory=dict)
    below: dict[Card, Card | str | None] = field(default_factory=dict)


def parse_states(out: str) -> list[State]:
    """Solvitaire's printed solution, state by state ("##" is a face-down card)."""
    text = out.split("Solution:", 1)[1] if "Solution:" in out else ""
    states: list[State] = []
    for block in text.split("===================================")[:-1]:
        section = ""
        found_tops: list[Card] = []
        piles: dict[str, list[list[Card | None]]] = {"t": [[] for _ in range(7)], "sw": [[], []]}
        for line in block.strip("\n").splitlines():
            if line.startswith("---"):
                section = line
                continue
            target = "t" if "Tableau" in section else "sw" if "Stock" in section else ""
            for col, cell in enumerate(c.strip() for c in line.split("\t")):
                if not cell or cell == "[]":
                    continue
                card = None if cell == "##" else Card.parse(cell)
                if "Foundations" in section and card is not None:
                    found_tops.append(card)
                elif target:
                    piles[target][col].append(card)
        state = State()
        for col, pile in enumerate(piles["t"]):
            for index, card in enumerate(pile):
                if card is not None:
                    state.places[card] = ("t", col, index)
                    under = pile[index - 1] if index else None
                    state.below[card] = DOWN if index and under is None else under
        for kind, pile in zip("sw", piles["sw"], strict=True):
            for index, card in enumerate(pile):
                if card is not None:
                    state.places[card] = (kind, 0, index)
        for top in found_tops:
            for rank in range(1, top.rank + 1):
                state.places[Card(top.suit * 13 + rank - 1)] = ("f", 0, 0)
        states.append(state)
    return states


def line_from_states(board: Board, states: list[State]) -> list[str]:
    """Our tokens for Solvitaire's solution, played on `board` (a copy is made).

    Between two printed states the card played is the one newly on a foundation, or
    else the lowest card whose tableau support changed (the head of the run moved);
    its destination is the pile of ours whose top is its new support (or an empty one),
    its source wherever it is on our board. A waste card is first turned up with `D`
    (and `R`) as our engine requires. Raises `KlondikeError` if anything does not fit.
    """
    board = board.copy()
    tokens: list[str] = []
    for prev, nxt in itertools.pairwise(states):
        up = [
            c
            for c, p in nxt.places.items()
            if p[0] == "f" and prev.places.get(c, ("", 0, 0))[0] != "f"
        ]
        moved = [
            c
            for c, p in nxt.places.items()
            if p[0] == "t"
            and c in prev.places
            and (prev.places[c][0] != "t" or prev.below[c] != nxt.below[c])
        ]
        if up:
            card, dest = up[0], "F"
        elif moved:
            card = min(moved, key=lambda c: nxt.places[c][2])
            under = nxt.below[card]
            column = next(
                i
                for i, pile in enumerate(board.tableau)
                if (pile and pile[-1] == under) or (not pile and under is None)
            )
            dest = str(column + 1)
        else:
            continue  # nothing played (a bare stock turn)
        source = next((str(i + 1) for i, p in enumerate(board.tableau) if card in p), "W")
        if source == "W":
            for _ in range(200):
                if board.waste and board.waste[-1] == card:
                    break
                token = "D" if board.stock_count else "R"
                board.play(token)
                tokens.append(token)
            else:
                raise KlondikeError(f"{card} never reaches the waste top")
        token = source + dest
        board.play(token)
        tokens.append(token)
    if not board.is_won():
        raise KlondikeError(f"Solvitaire's line of {len(tokens)} tokens does not win here")
    return tokens


# ---------------------------------------------------------------- the benchmark


@dataclass
class Tally:
    """Per-variant results."""

    spec: Spec
    rows: list[tuple[str, Run | None, Run]] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    check_failures: list[str] = field(default_factory=list)


def report(tally: Tally, by_name: dict[str, Tally], timeout: float) -> list[str]:
    """Markdown lines for one variant."""
    spec, rows = tally.spec, tally.rows
    n = len(rows)
    lines = [f"### {spec.name}: {spec.variant}", ""]
    ours_dec = [s for s, _, o in rows if o.verdict != UNKNOWN]
    if spec.deal_count is None:
        lines.append(
            f"ours only (Solvitaire cannot limit passes to 3): decided {len(ours_dec)}/{n} "
            f"({len(ours_dec) / n:.0%}) within {timeout:g} s; median CPU per decided deal "
            f"{statistics.median([o.cpu for _, _, o in rows if o.verdict != UNKNOWN] or [0]):.2f}"
            " s"
        )
        lines += bracket(tally, by_name)
        return lines
    theirs = {s: t for s, t, _ in rows if t is not None}
    ours = {s: o for s, _, o in rows}
    their_dec = [s for s in theirs if theirs[s].verdict != UNKNOWN]
    both = [s for s in ours_dec if s in their_dec]
    only_ours = [s for s in ours_dec if s not in their_dec]
    only_theirs = [s for s in their_dec if s not in ours_dec]
    disagree = [s for s in both if ours[s].verdict != theirs[s].verdict]
    o_cpu = [ours[s].cpu for s in both]
    t_cpu = [theirs[s].cpu for s in both]
    ratio = statistics.median(o_cpu) / statistics.median(t_cpu) if both else 0.0
    per_deal = statistics.median([o / max(t, 1e-3) for o, t in zip(o_cpu, t_cpu, strict=True)])
    solv = sum(theirs[s].verdict == SOLVABLE for s in their_dec)
    lines += [
        "| solver | decided | solvable | unsolvable | median CPU s (both decide) "
        "| p90 CPU s (both decide) |",
        "|---|---|---|---|---|---|",
        f"| Solvitaire | {len(their_dec)}/{n} ({len(their_dec) / n:.0%}) | {solv} "
        f"| {len(their_dec) - solv} | {statistics.median(t_cpu) if both else 0:.3f} "
        f"| {percentile(t_cpu, 90):.3f} |",
        f"| ours | {len(ours_dec)}/{n} ({len(ours_dec) / n:.0%}) "
        f"| {sum(ours[s].verdict == SOLVABLE for s in ours_dec)} "
        f"| {sum(ours[s].verdict == UNSOLVABLE for s in ours_dec)} "
        f"| {statistics.median(o_cpu) if both else 0:.3f} | {percentile(o_cpu, 90):.3f} |",
        "",
        f"- both decide {len(both)}; CPU ours/theirs: ratio of medians {ratio:.2f}x, "
        f"median of per-deal ratios {per_deal if both else 0:.2f}x, "
        f"p90 {percentile(o_cpu, 90) / max(percentile(t_cpu, 90), 1e-9):.2f}x",
        f"- decided by ours only: {_seeds(only_ours, ours)}",
        f"- decided by Solvitaire only: {_seeds(only_theirs, theirs)}",
        f"- disagreements: {', '.join(disagree) or 'none'}",
        f"- Solvitaire's line replayed to a win by our engine: {', '.join(tally.checked) or '-'}"
        + (f"; FAILED: {'; '.join(tally.check_failures)}" if tally.check_failures else ""),
    ]
    return lines


def _seeds(seeds: list[str], runs: dict[str, Run]) -> str:
    return ", ".join(f"{s} ({runs[s].verdict}, {runs[s].cpu:.1f} s)" for s in seeds) or "none"


def bracket(tally: Tally, by_name: dict[str, Tally]) -> list[str]:
    """Draw-3 three passes against Solvitaire's one pass and unlimited passes."""
    lines: list[str] = []
    ours = {s: o.verdict for s, _, o in tally.rows}
    for name, must, rule in (
        ("d3p1", SOLVABLE, "won in one pass"),
        ("d3pu", UNSOLVABLE, "lost with unlimited passes"),
    ):
        other = by_name.get(name)
        if other is None:
            continue
        theirs = {s: t.verdict for s, t, _ in other.rows if t is not None}
        against = [s for s, v in ours.items() if theirs.get(s) == must and v not in (must, UNKNOWN)]
        lines.append(
            f"- deals Solvitaire finds {rule}: "
            f"{sum(theirs.get(s) == must for s in ours)}; contradicted by ours: "
            f"{', '.join(against) or 'none'}"
        )
    return lines


def main() -> int:
    """Run the comparison and print markdown."""
    options = parser(__doc__, seeds="1-50", timeout=10.0)
    options.add_argument("--solvitaire", default=os.environ.get("SOLVITAIRE"), help="its binary")
    options.add_argument("--variants", default="d1p1,d3p1,d3pu,d3p3", help="comma-separated")
    options.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="budget clock")
    options.add_argument("--core", type=int, default=None, help="pin to this CPU core")
    options.add_argument("--check-lines", type=int, default=2, help="Solvitaire lines replayed")
    options.add_argument("--jsonl", default=None, help="write one JSON line per deal and solver")
    args = options.parse_args()
    if not args.solvitaire or not os.access(args.solvitaire, os.X_OK):
        print(
            "bench_solvitaire: no Solvitaire binary: give --solvitaire PATH or set SOLVITAIRE "
            f"(got {args.solvitaire!r}); see docs/benchmarks.md, 'Against Solvitaire'",
            file=sys.stderr,
        )
        return 2
    names = [v.strip() for v in args.variants.split(",") if v.strip()]
    unknown = [v for v in names if v not in SPECS]
    if unknown:
        print(f"bench_solvitaire: unknown variants {unknown}; use {list(SPECS)}", file=sys.stderr)
        return 2
    if args.core is not None:
        os.sched_setaffinity(0, {args.core})
    chosen = seeds(args.seeds)
    cpu_clock = args.clock == "cpu"
    out: TextIO | None = Path(args.jsonl).open("w") if args.jsonl else None  # noqa: SIM115
    load0 = os.getloadavg()
    started = time.perf_counter()
    by_name: dict[str, Tally] = {}
    with tempfile.TemporaryDirectory(prefix="solvitaire-") as tmp:
        for name in names:
            spec = SPECS[name]
            tally = by_name[name] = Tally(spec)
            rules = Path(tmp) / f"rules-{name}.json"
            rules.write_text(json.dumps(rules_json(spec)))
            for seed in chosen:
                deal = Deal.from_seed(seed)
                board = Board(deal, spec.variant)
                deal_file = Path(tmp) / f"deal-{seed}.json"
                deal_file.write_text(json.dumps(deal_json(deal)))
                theirs = None
                if spec.deal_count is not None:
                    theirs, _ = run_solvitaire(
                        args.solvitaire, rules, deal_file, args.timeout, cpu_clock
                    )
                    theirs = over_budget(theirs, args.timeout, cpu_clock)
                    if theirs.verdict == SOLVABLE and len(tally.checked) < args.check_lines:
                        check(args.solvitaire, rules, deal_file, board, seed, tally, args.timeout)
                ours = over_budget(
                    run_ours(board, args.timeout, cpu_clock), args.timeout, cpu_clock
                )
                tally.rows.append((seed, theirs, ours))
                line = f"  {name} seed {seed}: ours {ours.verdict} {ours.cpu:.2f} s"
                if theirs is not None:
                    line += f", Solvitaire {theirs.verdict} {theirs.cpu:.2f} s {theirs.note}"
                print(line, file=sys.stderr, flush=True)
                if out is not None:
                    for who, run in (("solvitaire", theirs), ("ours", ours)):
                        if run is not None:
                            record = {"variant": name, "seed": seed, "solver": who}
                            out.write(json.dumps(record | run.__dict__) + "\n")
                    out.flush()
    if out is not None:
        out.close()
    load1 = os.getloadavg()
    print(
        f"seeds {args.seeds}, {args.timeout:g} {args.clock} s per deal each, one deal at a time"
        f"{'' if args.core is None else f' on core {args.core}'}; load average "
        f"{load0[0]:.2f} at start, {load1[0]:.2f} at end (1 min); "
        f"{(time.perf_counter() - started) / 60:.1f} min\n"
    )
    for name in names:
        print("\n".join(report(by_name[name], by_name, args.timeout)) + "\n")
    failures = sum(len(t.check_failures) for t in by_name.values())
    return 1 if failures else 0


def check(
    binary: str, rules: Path, deal_file: Path, board: Board, seed: str, tally: Tally, timeout: float
) -> None:
    """Replay Solvitaire's printed solution through our engine."""
    run, text = run_solvitaire(binary, rules, deal_file, timeout * 3, False, classify=False)
    if run.verdict != SOLVABLE:
        return
    try:
        tokens = line_from_states(board, parse_states(text))
        tally.checked.append(f"{seed} ({len(tokens)} tokens)")
    except (KlondikeError, StopIteration, KeyError, ValueError) as exc:
        tally.check_failures.append(f"seed {seed}: {exc}")


if __name__ == "__main__":
    sys.exit(main())
