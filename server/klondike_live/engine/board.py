"""The board: the full (all-seeing) state of one Klondike game and its rules.

Two ways to make a move, as in python-chess:

- `play(move)` checks the move against the rules and raises `IllegalMoveError` with the
  reason; it also accepts a token string (`"36"`), raising `InvalidMoveError` on bad
  syntax (or on a `Move` value with fields out of range). Use it for anything that
  comes from outside.
- `push(move)` trusts its caller: it applies a move known to be legal (one from
  `legal_moves()`, say) with no checks. Use it in search loops.

Both save a snapshot, so `pop()` undoes the last move exactly (`UndoError` when there is
none). Piles are tuples, so a
snapshot is a handful of references, and `key()` is a hashable value of the position for
transposition tables.

Internally the stock is stored with its top card *last* (like the waste), so turning
cards is a slice from the end; the public `stock` property lists it top first, as the
notation does. `seen` is the bitmask (bit `c` for card `c`) of every card that has been
face up in this game; it only grows, and undo does not shrink it: what a player has seen
stays seen.

This module must stay pure: no I/O, no asyncio, no sockets, no Redis, no msgpack.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterator
from typing import Final

from klondike_live.engine.cards import CARDS, RANK, RED, SUIT, SUITS, Card, census
from klondike_live.engine.deal import Deal
from klondike_live.engine.errors import (
    IllegalMoveError,
    InvalidMoveError,
    InvalidValueError,
    UndoError,
)
from klondike_live.engine.moves import (
    ALL_MOVES,
    DRAW,
    DRAW_MOVE,
    F2T,
    RECYCLE,
    RECYCLE_MOVE,
    T2F,
    T2T,
    W2F,
    W2T,
    Move,
)
from klondike_live.engine.variant import UNLIMITED, Variant

# Standard (Windows) scoring; see docs/rules.md for the whole table.
SCORE_WASTE_TO_TABLEAU: Final = 5
SCORE_TO_FOUNDATION: Final = 10
SCORE_TURN_OVER: Final = 5
SCORE_FOUNDATION_TO_TABLEAU: Final = -15
SCORE_RECYCLE_DRAW1: Final = -100
SCORE_RECYCLE_DRAW3: Final = -20
FREE_PASSES_DRAW3: Final = 3

_Snapshot = tuple[
    tuple[tuple[Card, ...], ...],
    tuple[int, ...],
    tuple[Card, ...],
    tuple[Card, ...],
    tuple[int, ...],
    int,
    int,
]

PositionKey = tuple[
    tuple[tuple[Card, ...], ...], tuple[int, ...], tuple[Card, ...], tuple[Card, ...], int
]


class Outcome(enum.Enum):
    """Where a game stands."""

    IN_PROGRESS = "in-progress"
    WON = "won"
    NO_MOVES = "no-moves"


class Board:
    """A Klondike game in progress: the position, its move list and its undo stack."""

    __slots__ = (
        "_down",
        "_found",
        "_piles",
        "_stock",
        "_undo",
        "_waste",
        "deal",
        "moves",
        "pass_number",
        "score",
        "seen",
        "variant",
    )

    def __init__(self, deal: Deal, variant: Variant | None = None) -> None:
        self.deal: Deal | None = deal
        self.variant = variant if variant is not None else Variant()
        self._piles: list[tuple[Card, ...]] = list(deal.tableau)
        self._down: list[int] = [len(pile) - 1 for pile in deal.tableau]
        self._stock: tuple[Card, ...] = deal.stock[::-1]
        self._waste: tuple[Card, ...] = ()
        self._found: list[int] = [0, 0, 0, 0]
        self.pass_number = 1
        self.score = 0
        self.seen = 0
        for pile in deal.tableau:
            self.seen |= 1 << pile[-1]
        self.moves: list[Move] = []
        self._undo: list[_Snapshot] = []

    @classmethod
    def from_seed(cls, seed: str, variant: Variant | None = None) -> Board:
        """A new game on the `kd1` deal of `seed`."""
        return cls(Deal.from_seed(seed), variant)

    @classmethod
    def from_parts(
        cls,
        variant: Variant,
        tableau: tuple[tuple[Card, ...], ...],
        face_down: tuple[int, ...],
        stock: tuple[Card, ...],
        waste: tuple[Card, ...],
        foundations: tuple[int, ...],
        pass_number: int = 1,
    ) -> Board:
        """A board set up in a given position (stock top first), with no history or deal.

        Raises `InvalidValueError` saying what is wrong when the parts are not a
        reachable-looking Klondike position: every card exactly once, a face-up top on
        every non-empty pile, face-up cards forming runs, a pass number within the
        variant's limit.
        """
        problem = _position_problem(variant, tableau, face_down, stock, waste, foundations)
        if problem:
            raise InvalidValueError(problem)
        if pass_number < 1 or (variant.passes != UNLIMITED and pass_number > variant.passes):
            limit = "unlimited" if variant.passes == UNLIMITED else variant.passes
            raise InvalidValueError(f"bad pass {pass_number!r}: expected 1..{limit}")
        board = cls(_ANY_DEAL, variant)
        board.deal = None
        board.variant = variant
        board._piles = [tuple(p) for p in tableau]
        board._down = list(face_down)
        board._stock = tuple(stock[::-1])
        board._waste = tuple(waste)
        board._found = list(foundations)
        board.pass_number = pass_number
        board.score = 0
        board.seen = 0
        for k, pile in enumerate(tableau):
            for card in pile[face_down[k] :]:
                board.seen |= 1 << card
        for card in waste:
            board.seen |= 1 << card
        for suit, rank in enumerate(foundations):
            for r in range(rank):
                board.seen |= 1 << (suit * 13 + r)
        board.moves = []
        board._undo = []
        return board

    def copy(self) -> Board:
        """An independent board in the same position, with the same history."""
        other = Board(_ANY_DEAL, self.variant)
        other.deal = self.deal
        other.variant = self.variant
        other._piles = self._piles[:]
        other._down = self._down[:]
        other._stock = self._stock
        other._waste = self._waste
        other._found = self._found[:]
        other.pass_number = self.pass_number
        other.score = self.score
        other.seen = self.seen
        other.moves = self.moves[:]
        other._undo = self._undo[:]
        return other

    # ------------------------------------------------------------------ reading

    @property
    def tableau(self) -> tuple[tuple[Card, ...], ...]:
        """The seven piles, each listed bottom to top."""
        return tuple(self._piles)

    @property
    def face_down(self) -> tuple[int, ...]:
        """How many cards at the bottom of each pile are face down."""
        return tuple(self._down)

    @property
    def stock(self) -> tuple[Card, ...]:
        """The stock, top (next card turned) first."""
        return self._stock[::-1]

    @property
    def stock_count(self) -> int:
        """Cards left in the stock."""
        return len(self._stock)

    @property
    def waste(self) -> tuple[Card, ...]:
        """The waste, bottom first; the last card is the playable top."""
        return self._waste

    @property
    def foundations(self) -> tuple[int, ...]:
        """Highest rank on each suit's foundation (C, D, H, S), 0 when empty."""
        return tuple(self._found)

    @property
    def foundation_count(self) -> int:
        """Cards on the foundations, 0..52."""
        return sum(self._found)

    @property
    def face_down_count(self) -> int:
        """Face-down tableau cards left."""
        return sum(self._down)

    def key(self) -> PositionKey:
        """A hashable value identifying the position (not the history) for search.

        The pass number is part of it only when passes are limited: with unlimited
        passes, positions that differ only in how often the waste was recycled have the
        same future, so they get the same key (and a search over keys terminates).
        """
        return (
            tuple(self._piles),
            tuple(self._down),
            self._stock,
            self._waste,
            0 if self.variant.passes == UNLIMITED else self.pass_number,
        )

    def is_won(self) -> bool:
        """All 52 cards are on the foundations."""
        return self._found == [13, 13, 13, 13]

    def is_trivially_won(self) -> bool:
        """Stock and waste are empty and every tableau card is face up: the rest is a formality."""
        return not self._stock and not self._waste and not any(self._down)

    def outcome(self) -> Outcome:
        """Won, still in progress, or no legal move left."""
        if self.is_won():
            return Outcome.WON
        if next(self._generate(), None) is None:
            return Outcome.NO_MOVES
        return Outcome.IN_PROGRESS

    def passes_left(self) -> int | None:
        """Recycles still allowed (None when unlimited)."""
        if self.variant.passes == UNLIMITED:
            return None
        return self.variant.passes - self.pass_number

    # ------------------------------------------------------------------ rules

    def _can_recycle(self) -> bool:
        passes = self.variant.passes
        return (
            not self._stock
            and bool(self._waste)
            and (passes == UNLIMITED or self.pass_number < passes)
        )

    # Piles read as `tuple[int, ...]` in the hot paths below: the same values, but mypyc
    # then indexes the tables with plain integers instead of generic objects.

    def _fits_tableau(self, card: int, dst: int) -> bool:
        pile: tuple[int, ...] = self._piles[dst]
        if not pile:
            return RANK[card] == 13
        top = pile[-1]
        return RANK[top] == RANK[card] + 1 and RED[top] != RED[card]

    def _run_start(self, src: int, dst: int) -> int:
        """Index in pile `src` of the face-up card that fits on pile `dst`, or -1."""
        pile: tuple[int, ...] = self._piles[src]
        down = self._down[src]
        if len(pile) == down:
            return -1
        target: tuple[int, ...] = self._piles[dst]
        if not target:
            return down if RANK[pile[down]] == 13 else -1
        top = target[-1]
        # The face-up part of a pile is always a run (descending, alternating colours),
        # so the card of the wanted rank, if any, sits at a computable index.
        index = len(pile) - 1 - (RANK[top] - 1 - RANK[pile[-1]])
        if down <= index < len(pile) and RED[pile[index]] != RED[top]:
            return index
        return -1

    def illegal_reason(self, move: Move) -> str | None:
        """Why `move` is not allowed here, or None when it is legal."""
        if move not in ALL_MOVES:
            return _malformed(move)
        return self._reason(move)

    def _reason(self, move: Move) -> str | None:
        """`illegal_reason` for a move known to be well-formed (one of `ALL_MOVES`)."""
        kind = move.kind
        if kind == DRAW:
            return None if self._stock else "the stock is empty"
        if kind == RECYCLE:
            if self._stock:
                return "the stock is not empty"
            if not self._waste:
                return "the waste is empty"
            if not self._can_recycle():
                return f"no pass left (this is pass {self.pass_number} of {self.variant.passes})"
            return None
        if kind in (W2T, W2F):
            if not self._waste:
                return "the waste is empty"
            card = self._waste[-1]
            if kind == W2F:
                return None if self._found[SUIT[card]] == RANK[card] - 1 else _no_foundation(card)
            return None if self._fits_tableau(card, move.dst) else self._no_fit(card, move.dst)
        if kind == T2F:
            pile = self._piles[move.src]
            if not pile:
                return f"pile {move.src + 1} is empty"
            card = pile[-1]
            return None if self._found[SUIT[card]] == RANK[card] - 1 else _no_foundation(card)
        if kind == T2T:
            src, dst = move.src, move.dst
            if not self._piles[src]:
                return f"pile {src + 1} is empty"
            start = self._run_start(src, dst)
            if start < 0:
                target = self._piles[dst]
                if not target:
                    return f"only a king or a king-headed run may go onto the empty pile {dst + 1}"
                return f"no face-up card of pile {src + 1} fits on {target[-1]} (pile {dst + 1})"
            count = len(self._piles[src]) - start
            if move.size and move.size != count:
                return f"that run has {count} cards, not {move.size}"
            return None
        if kind == F2T:
            if not self.variant.f2t:
                return "foundation cards cannot come back in this variant (f2t=no)"
            rank = self._found[move.src]
            if rank == 0:
                return f"the {SUITS[move.src]} foundation is empty"
            card = CARDS[move.src * 13 + rank - 1]
            return None if self._fits_tableau(card, move.dst) else self._no_fit(card, move.dst)
        return f"unknown move kind {kind}"

    def _no_fit(self, card: Card, dst: int) -> str:
        target = self._piles[dst]
        if not target:
            return f"only a king may go onto the empty pile {dst + 1}, not {card}"
        return f"{card} does not fit on {target[-1]} (pile {dst + 1})"

    def is_legal(self, move: Move) -> bool:
        """True when the rules allow `move` here."""
        return self.illegal_reason(move) is None

    def _generate(self) -> Iterator[Move]:
        piles, down, found = self._piles, self._down, self._found
        waste_top: int = self._waste[-1] if self._waste else -1
        # To the foundations first: they are the moves a player looks for first.
        if waste_top >= 0 and found[SUIT[waste_top]] == RANK[waste_top] - 1:
            yield _W2F
        for src in range(7):
            pile: tuple[int, ...] = piles[src]
            if pile and found[SUIT[pile[-1]]] == RANK[pile[-1]] - 1:
                yield _T2F[src]
        if waste_top >= 0:
            for dst in range(7):
                if self._fits_tableau(waste_top, dst):
                    yield _W2T[dst]
        for src in range(7):
            if len(piles[src]) == down[src]:
                continue
            for dst in range(7):
                if dst != src and self._run_start(src, dst) >= 0:
                    yield _T2T[src][dst]
        if self.variant.f2t:
            for suit in range(4):
                rank = found[suit]
                if rank:
                    card = suit * 13 + rank - 1
                    for dst in range(7):
                        if self._fits_tableau(card, dst):
                            yield _F2T[suit][dst]
        if self._stock:
            yield DRAW_MOVE
        elif self._can_recycle():
            yield RECYCLE_MOVE

    def legal_moves(self) -> list[Move]:
        """Every legal move, without stated counts: foundation moves, waste, tableau, stock."""
        return list(self._generate())

    # ------------------------------------------------------------------ moving

    def play(self, move: Move | str) -> Move:
        """Check `move` (a `Move` or a token) against the rules, apply it, return it.

        Raises `InvalidMoveError` for a token that does not parse (or a `Move` whose fields
        are out of range) and `IllegalMoveError`, with the reason, for a move the rules do
        not allow here.
        """
        if isinstance(move, str):
            move = Move.parse(move)
        elif move not in ALL_MOVES:
            raise InvalidMoveError(_malformed(move))
        reason = self._reason(move)
        if reason is not None:
            raise IllegalMoveError(str(move), reason)
        self.push(move)
        return move

    def push(self, move: Move) -> None:
        """Apply a move known to be legal, with no checks. `pop()` undoes it."""
        piles, down, found = self._piles, self._down, self._found
        self._undo.append(
            (
                tuple(piles),
                tuple(down),
                self._stock,
                self._waste,
                tuple(found),
                self.pass_number,
                self.score,
            )
        )
        self.moves.append(move)
        kind = move.kind
        gain = 0
        src = -1
        if kind == DRAW:
            stock = self._stock
            take = self.variant.draw
            turned = stock[-take:][::-1]
            self._stock = stock[:-take]
            self._waste += turned
            face: int
            for face in turned:
                self.seen |= 1 << face
        elif kind == RECYCLE:
            self._stock = self._waste[::-1]
            self._waste = ()
            self.pass_number += 1
            if self.variant.draw == 1:
                gain = SCORE_RECYCLE_DRAW1
            elif self.pass_number > FREE_PASSES_DRAW3:
                gain = SCORE_RECYCLE_DRAW3
        elif kind == W2T:
            card = self._waste[-1]
            self._waste = self._waste[:-1]
            piles[move.dst] += (card,)
            gain = SCORE_WASTE_TO_TABLEAU
        elif kind == W2F:
            top: int = self._waste[-1]
            self._waste = self._waste[:-1]
            found[SUIT[top]] += 1
            gain = SCORE_TO_FOUNDATION
        elif kind == T2F:
            src = move.src
            pile = piles[src]
            last: int = pile[-1]
            found[SUIT[last]] += 1
            piles[src] = pile[:-1]
            gain = SCORE_TO_FOUNDATION
        elif kind == T2T:
            src = move.src
            pile = piles[src]
            start = self._run_start(src, move.dst)
            piles[move.dst] += pile[start:]
            piles[src] = pile[:start]
        else:  # F2T
            suit = move.src
            piles[move.dst] += (CARDS[suit * 13 + found[suit] - 1],)
            found[suit] -= 1
            gain = SCORE_FOUNDATION_TO_TABLEAU
        if src >= 0 and down[src] and len(piles[src]) == down[src]:
            down[src] -= 1
            uncovered: int = piles[src][-1]
            self.seen |= 1 << uncovered
            gain += SCORE_TURN_OVER
        if gain:
            self.score = max(0, self.score + gain)

    def pop(self) -> Move:
        """Undo the last move exactly (position, pass and score) and return it.

        Raises `UndoError` (an `IndexError` too) when there is no move to undo.
        """
        if not self._undo:
            raise UndoError("no move to undo: the board has no moves")
        piles, down, stock, waste, found, pass_number, score = self._undo.pop()
        self._piles = list(piles)
        self._down = list(down)
        self._stock = stock
        self._waste = waste
        self._found = list(found)
        self.pass_number = pass_number
        self.score = score
        return self.moves.pop()

    def start_here(self) -> None:
        """Make the current position the game's start: forget the moves that led here,
        so they are neither counted nor undone (a game started from a position). The
        position, pass, score and the cards seen so far stay."""
        self.moves = []
        self._undo = []

    def __repr__(self) -> str:
        return f"<Board {self.variant} moves={len(self.moves)} foundations={self.foundations}>"

    def __reduce__(self) -> tuple[Callable[..., Board], tuple[object, ...]]:
        # Pickled field by field: mypyc builds a compiled class by its __init__ alone (a
        # bot decides in another process, given the board it plans on).
        position = (self._piles, self._down, self._stock, self._waste, self._found)
        history = (self.pass_number, self.score, self.seen, self.moves, self._undo)
        return (_unpickled, (self.deal, self.variant, *position, *history))


def _unpickled(
    deal: Deal | None,
    variant: Variant,
    piles: list[tuple[Card, ...]],
    down: list[int],
    stock: tuple[Card, ...],
    waste: tuple[Card, ...],
    found: list[int],
    pass_number: int,
    score: int,
    seen: int,
    moves: list[Move],
    undo: list[_Snapshot],
) -> Board:
    """The board `Board.__reduce__` gave the fields of."""
    board = Board(_ANY_DEAL, variant)
    board.deal = deal
    board._piles, board._down, board._stock, board._waste = piles, down, stock, waste
    board._found, board.pass_number, board.score, board.seen = found, pass_number, score, seen
    board.moves, board._undo = moves, undo
    return board


def _position_problem(
    variant: Variant,
    tableau: tuple[tuple[Card, ...], ...],
    face_down: tuple[int, ...],
    stock: tuple[Card, ...],
    waste: tuple[Card, ...],
    foundations: tuple[int, ...],
) -> str:
    if len(tableau) != 7 or len(face_down) != 7:
        return (
            f"a position has seven tableau piles and seven face-down counts, "
            f"found {len(tableau)} and {len(face_down)}"
        )
    if len(foundations) != 4 or not all(0 <= r <= 13 for r in foundations):
        return f"a position has four foundations of 0..13 cards each, found {tuple(foundations)}"
    cards: list[int] = [c for pile in tableau for c in pile]
    cards += [*stock, *waste]
    cards += [suit * 13 + r for suit, rank in enumerate(foundations) for r in range(rank)]
    if sorted(cards) != list(range(52)):
        return f"a position holds each of the 52 cards exactly once ({census(cards)})"
    for k, (pile, down) in enumerate(zip(tableau, face_down, strict=True)):
        if not 0 <= down <= len(pile):
            return f"pile {k + 1}: {down!r} face-down cards in a pile of {len(pile)}"
        if pile and down == len(pile):
            return f"pile {k + 1}: its top card must be face up ({pile[-1]} is face down)"
        for lower, upper in zip(pile[down:], pile[down + 1 :], strict=False):
            if RANK[lower] != RANK[upper] + 1 or RED[lower] == RED[upper]:
                return f"pile {k + 1}: face-up {lower} {upper} is not a run (down, alternating)"
    return ""


def _malformed(move: object) -> str:
    fields = tuple(move) if isinstance(move, tuple) else move
    return f"bad move {fields!r}: not a move of the notation (a field is out of range)"


def _no_foundation(card: Card) -> str:
    return f"{card} does not go on the {SUITS[SUIT[card]]} foundation yet"


# What `from_parts` and `copy` build a board from before they set every field: a compiled
# (mypyc) class is made by its __init__ only, never by `__new__` alone.
_ANY_DEAL: Final = Deal.from_seed("0")

_W2F: Final = Move(W2F)
_T2F: Final = tuple(Move(T2F, src) for src in range(7))
_W2T: Final = tuple(Move(W2T, 0, dst) for dst in range(7))
_T2T: Final = tuple(tuple(Move(T2T, src, dst) for dst in range(7)) for src in range(7))
_F2T: Final = tuple(tuple(Move(F2T, suit, dst) for dst in range(7)) for suit in range(4))
