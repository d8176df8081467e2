"""How a bot picks its next move, from its own racer view and nothing else.

    memory = Memory()
    token, memory = decide(view, memory, LEVELS[level], seed)   # None: resign

`decide` is a pure function of the bot's current `View` (the masked view a racer in its
seat receives: face-down cards and the stock are only counts, never identities), its
`Memory` (what it decided and saw before, all of it derived from earlier views) and a
seed. It never sees a `Board` of the game: the engine positions it reasons about are
*determinizations*, made by dealing the cards its view does not show at random (from a
generator seeded by the view's text) into the face-down and stock slots. Moves only
depend on face-up cards and counts, so every determinization offers the same legal
moves; a test deals the hidden cards of real games differently and checks that the
bot's choices do not change.

Heuristic levels (relaxed, steady): the hint heuristic (`solver.hints.move_score`), and
with probability `mistake_rate` the next-best move by a strictly lower score when there
is one. Expert, while more than `SOLVE_HIDDEN` cards are hidden: a card that can safely
go home goes; otherwise each promising move (scored above a plain run shuffle) is played
out on `ROLLOUTS` determinizations by the heuristic itself to the end (`_playout`), and
the move with the best total outcome (cards home, face-down cards turned, wins) is
played. The playouts decide with the heuristic, which looks only at face-up cards, so a
sample's hidden cards shape what happens, never what is chosen. The solver is not asked
then: a line it finds on a sample uses that sample's guesses of the hidden cards (which
stock card to wait for, which column hides the card it needs), and following such lines
lost more deals than it won (docs/benchmarks.md, "Bots"). Once at most `SOLVE_HIDDEN`
cards are hidden, it deals `SAMPLES` determinizations and runs the exact solver on each
(`PLAN_NODES` nodes, so the answer depends on nothing but its input); the first move
shared by most winning lines is played, and that line becomes the plan. It follows the
plan while every card it turns over is the card the plan's sample had there (the view
stays the one the sample predicts); a surprise, or no plan, means a new decision. No
winning line in any sample: the playouts. Playouts never recycle the stock, so in
variants with more passes they end where the stock does.

Every level avoids positions it has already been in (its memory keeps the views it has
seen): a move whose result it can already tell (one that turns no card) and that leads
back to a seen view is not played. With nothing left to play, or `IDLE_LIMIT` moves in a
row that neither turned a card, drew from the stock nor put a card home, the bot
resigns.

This module must stay pure: no I/O, no asyncio.
"""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Final

from klondike_live.bots.levels import LevelSpec
from klondike_live.engine import UNKNOWN, Board, Card, Move, View, format_view, view_of
from klondike_live.engine.moves import DRAW, F2T, RECYCLE, T2F, T2T
from klondike_live.solver.hints import move_score
from klondike_live.solver.search import SOLVABLE, Budget, solve

SAMPLES: Final = 2
"""Determinizations the expert solves at each decision."""

PLAN_NODES: Final = 40_000
"""Solver nodes per determinization (a node budget, not a time: the answer is a function
of the view alone, and costs about the same on any machine)."""


SOLVE_HIDDEN: Final = 10
"""The expert asks the solver only once at most this many cards are hidden."""

ROLLOUTS: Final = 20
"""Determinizations the expert plays each candidate move out on."""

PLAYOUT_LIMIT: Final = 200
"""Moves of one playout at most (it stops sooner when no promising move is left)."""

DEALT_DOWN: Final = 21
"""Face-down cards of a deal."""

SAFE: Final = 100
"""`move_score` of a card that can safely go home: played without weighing."""

SHUFFLE: Final = 10
"""`move_score` of a plain run shuffle: never a candidate, never played out."""

IDLE_LIMIT: Final = 40
"""Moves without progress after which a bot gives up (moving runs back and forth)."""


@dataclass(frozen=True, slots=True)
class Memory:
    """What a bot keeps between moves of one game (all of it from its own views)."""

    seen: frozenset[str] = frozenset()  # the views it has been in (their text)
    plan: tuple[str, ...] = ()  # the rest of the winning line it follows (expert)
    sample: Board | None = None  # the determinization the plan was found on, at this point
    decisions: int = 0  # how often it searched (expert; for benchmarks)
    mark: tuple[int, int, int] = (0, 0, 0)  # cards shown, cards home, stock: progress
    idle: int = 0  # moves since the mark last changed


def view_key(view: View) -> str:
    """The view as text: equal views, equal keys."""
    return format_view(view)


def known_mask(view: View) -> int:
    """The cards the view shows."""
    mask = 0
    for card in view.cards():
        mask |= 1 << card
    return mask


def hidden_cards(view: View) -> list[int]:
    """The cards the view does not show, in card order."""
    mask = known_mask(view)
    return [c for c in range(52) if not mask >> c & 1]


def determinize(view: View, rng: random.Random) -> Board:
    """An engine position consistent with `view`: its hidden cards dealt at random into
    the face-down slots, the unknown waste slots and the stock."""
    cards = hidden_cards(view)
    rng.shuffle(cards)
    deal = iter(cards)
    tableau = tuple(
        tuple(Card(next(deal) if c == UNKNOWN else c) for c in pile) for pile in view.tableau
    )
    waste = tuple(Card(next(deal) if c == UNKNOWN else c) for c in view.waste)
    stock = tuple(Card(c) for c in deal)
    if len(stock) != view.stock:
        raise ValueError("the view's counts do not add up to 52 cards")
    return Board.from_parts(
        view.variant,
        tableau,
        view.face_down,
        stock,
        waste,
        view.foundations,
        view.pass_number,
    )


def _rng(seed: int, view: View, salt: str) -> random.Random:
    digest = hashlib.sha256(f"{seed}|{salt}|{view_key(view)}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def _reveals(board: Board, move: Move) -> bool:
    """Whether playing `move` turns over a card (a face-down card or the stock's)."""
    if move.kind == DRAW:
        return True
    if move.kind in (T2T, T2F):
        down = board.face_down[move.src]
        if not down:
            return False
        pile = board.tableau[move.src]
        if move.kind == T2F:
            return len(pile) - 1 == down
        return _moved_from(board, move) == down
    return False


def _moved_from(board: Board, move: Move) -> int:
    """Where the run a tableau-to-tableau move carries starts in its source pile."""
    after = board.copy()
    after.play(move)
    return len(after.tableau[move.src])


def _fresh_moves(board: Board, view: View, memory: Memory) -> list[Move]:
    """Legal moves, minus those known to lead back to a view already seen."""
    known = known_mask(view)
    out = []
    for move in board.legal_moves():
        if not _reveals(board, move):
            after = board.copy()
            after.play(move)
            if view_key(view_of(after, known)) in memory.seen:
                continue
        out.append(move)
    return out


def _heuristic(
    board: Board, moves: list[Move], mistake_rate: float, rng: random.Random
) -> Move | None:
    if not moves:
        return None
    scored = sorted(
        ((move_score(board, m), i, m) for i, m in enumerate(moves)), key=lambda t: (-t[0], t[1])
    )
    best = scored[0]
    if mistake_rate and rng.random() < mistake_rate:
        weaker = [t for t in scored if t[0] < best[0]]
        if weaker:
            return weaker[0][2]
    return best[2]


def _consistent(sample: Board, view: View) -> bool:
    """Whether the sample position shows exactly `view` to a viewer knowing its cards."""
    return view_of(sample, known_mask(view)) == view


def _plan(view: View, moves: list[Move], seed: int) -> tuple[str, tuple[str, ...], Board] | None:
    """The first move shared by most winning lines of `SAMPLES` determinizations, with a
    line that starts with it and its sample, or None."""
    allowed = {str(m) for m in moves}
    lines: list[tuple[list[str], Board]] = []
    for index in range(SAMPLES):
        sample = determinize(view, _rng(seed, view, f"sample{index}"))
        result = solve(sample.copy(), Budget(nodes=PLAN_NODES))
        if result.result == SOLVABLE and result.moves and result.moves[0] in allowed:
            lines.append((result.moves, sample))
    if not lines:
        return None
    votes = Counter(line[0] for line, _ in lines)
    first = max(votes, key=lambda token: (votes[token], -len(token)))
    line, sample = next((ln, s) for ln, s in lines if ln[0] == first)
    return first, tuple(line[1:]), sample


def decide(view: View, memory: Memory, spec: LevelSpec, seed: int) -> tuple[str | None, Memory]:
    """The bot's next move token (None: nothing left worth playing, resign) and its
    memory after it; see the module docstring."""
    mark = (len(view.cards()), sum(view.foundations) + view.foundation_hidden, view.stock)
    idle = 0 if mark != memory.mark else memory.idle + 1
    if idle > IDLE_LIMIT:
        return None, memory
    token, after = _decide(view, memory, spec, seed)
    return token, replace(after, mark=mark, idle=idle)


def _decide(view: View, memory: Memory, spec: LevelSpec, seed: int) -> tuple[str | None, Memory]:
    key = view_key(view)
    seen = memory.seen | {key}
    board = determinize(view, _rng(seed, view, "moves"))
    moves = _fresh_moves(board, view, memory)
    rng = _rng(seed, view, "choice")
    if spec.plans:
        if (
            memory.plan
            and memory.sample is not None
            and _consistent(memory.sample, view)
            and memory.plan[0] in {str(m) for m in moves}
        ):
            token = memory.plan[0]
            sample = memory.sample.copy()
            sample.play(token)
            return token, Memory(seen, memory.plan[1:], sample, memory.decisions)
        if len(hidden_cards(view)) > SOLVE_HIDDEN:
            return _token(_weigh(view, board, moves, seed)), Memory(
                seen, decisions=memory.decisions
            )
        planned = _plan(view, moves, seed)
        if planned is not None:
            token, rest, sample = planned
            sample.play(token)
            return token, Memory(seen, rest, sample, memory.decisions + 1)
        move = _weigh(view, board, moves, seed)
        return _token(move), Memory(seen, decisions=memory.decisions + 1)
    move = _heuristic(board, moves, spec.mistake_rate, rng)
    return (None if move is None else str(move)), Memory(seen)


def _weigh(view: View, board: Board, moves: list[Move], seed: int) -> Move | None:
    """The expert's move while the solver is not asked: a safe card home, else the
    promising move whose playouts over `ROLLOUTS` determinizations did best (ties: the
    engine's order), else the heuristic's best."""
    scores = [move_score(board, m) for m in moves]
    if scores and max(scores) >= SAFE:
        return moves[scores.index(max(scores))]
    candidates = [
        m
        for m, score in zip(moves, scores, strict=True)
        if score > SHUFFLE and m.kind not in (RECYCLE, F2T)
    ]
    if len(candidates) <= 1:
        return candidates[0] if candidates else _heuristic(board, moves, 0.0, random.Random(0))
    samples = [determinize(view, _rng(seed, view, f"playout{k}")) for k in range(ROLLOUTS)]
    best, best_value = candidates[0], -1
    for move in candidates:
        value = 0
        for sample in samples:
            probe = sample.copy()
            probe.push(move)
            value += _playout(probe)
        if value > best_value:
            best, best_value = move, value
    return best


def _playout(board: Board) -> int:
    """Play `board` out with the heuristic's best promising move until none is left (it
    changes `board`); the outcome: two points a card home, one a face-down card turned,
    300 for a win."""
    for _ in range(PLAYOUT_LIMIT):
        if board.is_won():
            break
        best, best_score = None, SHUFFLE
        for move in board.legal_moves():
            if move.kind in (RECYCLE, F2T):
                continue
            score = move_score(board, move)
            if score > best_score:
                best, best_score = move, score
        if best is None:
            break
        board.push(best)
    if board.is_won():
        return 300
    return 2 * board.foundation_count + DEALT_DOWN - sum(board.face_down)


def _token(move: Move | None) -> str | None:
    return None if move is None else str(move)


@dataclass
class Player:
    """A bot's policy over one game: `decide` with its memory kept (for the pool's
    callers and for tests)."""

    spec: LevelSpec
    seed: int
    memory: Memory = field(default_factory=Memory)

    def choose(self, view: View) -> str | None:
        token, self.memory = decide(view, self.memory, self.spec, self.seed)
        return token
