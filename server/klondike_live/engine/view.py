"""Viewer views and diffs: what one viewer may see of a board, and how it changes.

Everything the server sends about a board is a `View` or a `ViewDiff` computed here, so
hiding cards is decided in one place:

- A viewer's **knowledge** is a 52-bit mask of the cards it may know. A racer knows the
  cards it has seen face up (`Board.seen`); a live spectator knows only the cards every
  racer still playing knows (`race.visibility` decides); a finished race reveals
  `ALL_CARDS`.
- `view_of(board, known)` shows each tableau and waste card whose bit is in `known`
  and `UNKNOWN` (-1) for any other, keeps face-down counts, and gives the stock as a
  count. Foundations show, per suit, only the run of cards from the ace that the viewer
  knows; any further foundation cards are counted in `foundation_hidden`, never named,
  because a suit and a height together name a card.
- `diff(old, new)` is the compact change between two successive views of one board:
  per pile "keep the first k cards, set the face-down count, append these". A diff is
  made from views, so it can only hold cards the newer view already shows.
- `advance(old, board, known, piles)` is the same view and diff after a move, rebuilding
  only the piles the move changed (`changed_piles`): what the server does per move.

The text form is the notation's redacted position: `##` for every card the viewer may
not know (on the foundations line too, one `##` per unknown foundation card), and the
stock as a count.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

from klondike_live.engine.board import Board
from klondike_live.engine.cards import CARDS
from klondike_live.engine.counts import parse_count
from klondike_live.engine.errors import NotationError
from klondike_live.engine.moves import F2T, T2F, T2T, W2T, Move
from klondike_live.engine.position import (
    format_foundations,
    parse_card_token,
    parse_foundations_line,
    parse_pass_line,
    parse_variant_line,
    read_labelled_lines,
)
from klondike_live.engine.variant import Variant

UNKNOWN: Final = -1
"""A card the viewer may not know, in a view's piles."""

ALL_CARDS: Final = (1 << 52) - 1
"""The knowledge mask of a viewer that may know everything."""

_BACKS: Final = tuple((UNKNOWN,) * n for n in range(20))

WASTE: Final = 7
"""Pile index of the waste in a `ViewDiff`; tableau piles are 0..6."""

VIEW_HEADER: Final = "klondike-position 1"

STOCK_SIZE: Final = 24
"""Cards in the stock of a fresh deal: no stock holds more."""


@dataclass(frozen=True, slots=True)
class View:
    """One viewer's picture of a board; card values are 0..51 or `UNKNOWN`."""

    variant: Variant
    tableau: tuple[tuple[int, ...], ...]
    face_down: tuple[int, ...]
    stock: int
    waste: tuple[int, ...]
    foundations: tuple[int, ...]
    foundation_hidden: int
    pass_number: int

    # Written out, as the dataclass would write it, because mypyc compiles a class's own
    # methods but leaves those the dataclass decorator adds interpreted: a view is built
    # for every viewer on every move (ViewDiff's likewise).
    def __init__(
        self,
        variant: Variant,
        tableau: tuple[tuple[int, ...], ...],
        face_down: tuple[int, ...],
        stock: int,
        waste: tuple[int, ...],
        foundations: tuple[int, ...],
        foundation_hidden: int,
        pass_number: int,
    ) -> None:
        object.__setattr__(self, "variant", variant)
        object.__setattr__(self, "tableau", tableau)
        object.__setattr__(self, "face_down", face_down)
        object.__setattr__(self, "stock", stock)
        object.__setattr__(self, "waste", waste)
        object.__setattr__(self, "foundations", foundations)
        object.__setattr__(self, "foundation_hidden", foundation_hidden)
        object.__setattr__(self, "pass_number", pass_number)

    def __reduce__(self) -> tuple[type[View], tuple[object, ...]]:
        # Pickled through __init__: a compiled class is made by its __init__ alone (a
        # bot's decision runs in another process, given the view).
        fields = (self.variant, self.tableau, self.face_down, self.stock, self.waste)
        return (View, (*fields, self.foundations, self.foundation_hidden, self.pass_number))

    def cards(self) -> set[int]:
        """Every card identity this view shows."""
        shown = {c for pile in self.tableau for c in pile if c != UNKNOWN}
        shown.update(c for c in self.waste if c != UNKNOWN)
        shown.update(s * 13 + r for s, rank in enumerate(self.foundations) for r in range(rank))
        return shown

    def __str__(self) -> str:
        return format_view(self)


PileChange = tuple[int, int, int, tuple[int, ...]]
"""`(pile, keep, face_down, append)`: pile 0..6 or `WASTE`; keep the first `keep` cards."""


@dataclass(frozen=True, slots=True)
class ViewDiff:
    """The change from one view of a board to the next; None fields are unchanged."""

    piles: tuple[PileChange, ...] = ()
    stock: int | None = None
    foundations: tuple[int, ...] | None = None
    foundation_hidden: int | None = None
    pass_number: int | None = None

    def __init__(
        self,
        piles: tuple[PileChange, ...] = (),
        stock: int | None = None,
        foundations: tuple[int, ...] | None = None,
        foundation_hidden: int | None = None,
        pass_number: int | None = None,
    ) -> None:
        object.__setattr__(self, "piles", piles)
        object.__setattr__(self, "stock", stock)
        object.__setattr__(self, "foundations", foundations)
        object.__setattr__(self, "foundation_hidden", foundation_hidden)
        object.__setattr__(self, "pass_number", pass_number)

    def __reduce__(self) -> tuple[type[ViewDiff], tuple[object, ...]]:
        fields = (self.piles, self.stock, self.foundations, self.foundation_hidden)
        return (ViewDiff, (*fields, self.pass_number))

    def __bool__(self) -> bool:
        return bool(
            self.piles
            or self.stock is not None
            or self.foundations is not None
            or self.foundation_hidden is not None
            or self.pass_number is not None
        )

    def cards(self) -> set[int]:
        """Every card identity this diff carries."""
        shown = {c for change in self.piles for c in change[3] if c != UNKNOWN}
        if self.foundations is not None:
            shown.update(s * 13 + r for s, rank in enumerate(self.foundations) for r in range(rank))
        return shown

    def apply(self, view: View) -> View:
        """The view this diff turns `view` into."""
        tableau = list(view.tableau)
        face_down = list(view.face_down)
        waste = view.waste
        for pile, keep, down, append in self.piles:
            if pile == WASTE:
                waste = waste[:keep] + append
            else:
                tableau[pile] = tableau[pile][:keep] + append
                face_down[pile] = down
        return View(
            variant=view.variant,
            tableau=tuple(tableau),
            face_down=tuple(face_down),
            stock=view.stock if self.stock is None else self.stock,
            waste=waste,
            foundations=view.foundations if self.foundations is None else self.foundations,
            foundation_hidden=(
                view.foundation_hidden if self.foundation_hidden is None else self.foundation_hidden
            ),
            pass_number=view.pass_number if self.pass_number is None else self.pass_number,
        )


@functools.lru_cache(maxsize=1024)
def _redaction(known: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """For a knowledge mask: what each card shows as (itself or UNKNOWN), and per suit
    how many foundation cards from the ace up are known. Masks repeat move after move
    (they only change when a card is first seen), so this is cached."""
    shown = tuple(c if known >> c & 1 else UNKNOWN for c in range(52))
    runs = []
    for suit in range(4):
        run = 0
        while run < 13 and known >> (suit * 13 + run) & 1:
            run += 1
        runs.append(run)
    return shown, tuple(runs)


def view_of(board: Board, known: int) -> View:
    """The view of `board` for a viewer who may know the cards in the mask `known`."""
    shown, runs = _redaction(known)
    # Comprehensions over the board's own piles rather than `map` over bound methods: as
    # fast in plain Python, and mypyc compiles them into C loops (klondike_live.compiled).
    found = board._found
    foundations = tuple([min(found[suit], runs[suit]) for suit in range(4)])
    return View(
        variant=board.variant,
        tableau=tuple([_shown(pile, shown) for pile in board._piles]),
        face_down=tuple(board._down),
        stock=len(board._stock),
        waste=_shown(board._waste, shown),
        foundations=foundations,
        foundation_hidden=sum(found) - sum(foundations),
        pass_number=board.pass_number,
    )


def _shown(cards: tuple[int, ...], shown: tuple[int, ...]) -> tuple[int, ...]:
    """`cards` as a viewer sees them: each card, or `UNKNOWN` (`shown`: `_redaction`)."""
    return tuple([shown[card] for card in cards])


def racer_view(board: Board) -> View:
    """`view_of(board, board.seen)`, computed without the mask: the racer knows exactly
    the cards that are or were face up, which are every card not lying face down."""
    # Reads the board's piles directly: this runs for every move the server applies.
    face_down = tuple(board._down)
    tableau = tuple(
        [
            pile if not down else _BACKS[down] + pile[down:]
            for pile, down in zip(board._piles, face_down, strict=True)
        ]
    )
    return View(
        variant=board.variant,
        tableau=tableau,
        face_down=face_down,
        stock=board.stock_count,
        waste=board.waste,
        foundations=board.foundations,
        foundation_hidden=0,
        pass_number=board.pass_number,
    )


def changed_piles(moves: Iterable[Move]) -> tuple[int, ...]:
    """The piles (tableau 0..6, `WASTE`) that `moves` can change, in diff order.

    Stock count, foundations and pass number are not piles: `advance` compares them
    whatever the moves were. Undoing a move changes the same piles as making it.
    """
    piles: set[int] = set()
    for move in moves:
        kind = move.kind
        if kind == T2T:
            piles.add(move.src)
            piles.add(move.dst)
        elif kind == T2F:
            piles.add(move.src)
        elif kind == F2T:
            piles.add(move.dst)
        else:  # DRAW, RECYCLE, W2F, W2T
            piles.add(WASTE)
            if kind == W2T:
                piles.add(move.dst)
    return tuple(sorted(piles))


def advance(
    old: View, board: Board, known: int | None, piles: tuple[int, ...]
) -> tuple[View, ViewDiff]:
    """The view of `board` now and its diff from `old`, rebuilding only `piles`.

    `old` is the view of the same board under the same knowledge before moves that
    changed only `piles` (`changed_piles` of those moves, or of a move undone). `known`
    is that knowledge mask, or None for the racer's own view (`racer_view`). Equal to
    `(new, diff(old, new))` with `new` the whole view built again: a caller whose mask
    changed (a card became known anywhere on the board) builds it again instead.
    """
    tableau = old.tableau
    face_down = old.face_down
    waste = old.waste
    changes: list[PileChange] = []
    redaction = None if known is None else _redaction(known)
    if piles:
        board_piles, board_down = board._piles, board._down
        new_tableau: list[tuple[int, ...]] | None = None
        for k in piles:
            if k == WASTE:
                new = board.waste if redaction is None else _shown(board.waste, redaction[0])
                if new != waste:
                    keep = _common_prefix(waste, new)
                    changes.append((WASTE, keep, 0, new[keep:]))
                    waste = new
                continue
            pile, down = board_piles[k], board_down[k]
            if redaction is not None:
                new = _shown(pile, redaction[0])
            else:
                new = pile if not down else _BACKS[down] + pile[down:]
            before = tableau[k]
            if new != before or down != face_down[k]:
                keep = _common_prefix(before, new)
                changes.append((k, keep, down, new[keep:]))
                if new_tableau is None:
                    new_tableau = list(tableau)
                new_tableau[k] = new
        if new_tableau is not None:
            tableau = tuple(new_tableau)
            face_down = tuple(board_down)
    if redaction is None:
        foundations = board.foundations
        hidden = 0
    else:
        found, runs = board._found, redaction[1]
        foundations = tuple([min(found[suit], runs[suit]) for suit in range(4)])
        hidden = sum(found) - sum(foundations)
    view = View(
        variant=old.variant,
        tableau=tableau,
        face_down=face_down,
        stock=board.stock_count,
        waste=waste,
        foundations=foundations,
        foundation_hidden=hidden,
        pass_number=board.pass_number,
    )
    return view, _change(old, view, changes)


def _common_prefix(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    n = min(len(a), len(b))
    k = 0
    while k < n and a[k] == b[k]:
        k += 1
    return k


def diff(old: View, new: View) -> ViewDiff:
    """The smallest per-pile change that turns `old` into `new` (same board and viewer)."""
    piles: list[PileChange] = []
    for k in range(7):
        a, b = old.tableau[k], new.tableau[k]
        down = new.face_down[k]
        if a == b and old.face_down[k] == down:
            continue
        keep = _common_prefix(a, b)
        piles.append((k, keep, down, b[keep:]))
    if old.waste != new.waste:
        keep = _common_prefix(old.waste, new.waste)
        piles.append((WASTE, keep, 0, new.waste[keep:]))
    return _change(old, new, piles)


def _change(old: View, new: View, piles: list[PileChange]) -> ViewDiff:
    """The diff from `old` to `new` given their pile changes: the rest by comparison."""
    return ViewDiff(
        piles=tuple(piles),
        stock=None if old.stock == new.stock else new.stock,
        foundations=None if old.foundations == new.foundations else new.foundations,
        foundation_hidden=(
            None if old.foundation_hidden == new.foundation_hidden else new.foundation_hidden
        ),
        pass_number=None if old.pass_number == new.pass_number else new.pass_number,
    )


def _token(card: int) -> str:
    return "##" if card == UNKNOWN else str(CARDS[card])


def format_view(view: View) -> str:
    """The redacted position text of `view`: `##` for unknown cards, stock as a count."""
    rows = [VIEW_HEADER, f"variant: {view.variant}", f"pass: {view.pass_number}"]
    for k, (pile, down) in enumerate(zip(view.tableau, view.face_down, strict=True)):
        tokens = [
            _token(c) if c == UNKNOWN or i >= down else "#" + _token(c) for i, c in enumerate(pile)
        ]
        rows.append(f"{k + 1}: {' '.join(tokens)}".rstrip())
    rows.append(f"stock: {view.stock}")
    rows.append(f"waste: {' '.join(_token(c) for c in view.waste)}".rstrip())
    foundations = format_foundations(view.foundations)
    rows.append(f"foundations: {foundations}" + " ##" * view.foundation_hidden)
    return "\n".join(rows) + "\n"


def parse_view(text: str) -> View:
    """Parse redacted position text back into a `View`.

    `##` does not say whether the unknown card lies face up or face down. Read back, the
    `##` cards at the bottom of a pile (below its top card) are face down, as are cards
    below a `#`-marked one; the rest are face up. That is exact for a racer's own view,
    where every face-up card is known; a spectator's view that hides a face-up card
    above face-down ones reads back with a larger face-down count.
    """
    found = read_labelled_lines(text, VIEW_HEADER)
    variant = parse_variant_line(found["variant"])
    pass_number = parse_pass_line(found["pass"], variant)
    tableau: list[tuple[int, ...]] = []
    face_down: list[int] = []
    for k in range(1, 8):
        number, rest = found[str(k)]
        tokens = rest.split()
        down = 0
        while down < len(tokens) - 1 and tokens[down].startswith("#"):
            down += 1
        tableau.append(
            tuple(
                UNKNOWN if t == "##" else parse_card_token(t.removeprefix("#"), number)
                for t in tokens
            )
        )
        if any(t.startswith("#") and t != "##" for t in tokens[down:]):
            raise NotationError(f"face-down card above a face-up one in pile {k}", line=number)
        face_down.append(down)
    number, rest = found["stock"]
    stock = parse_count(rest)
    if stock is None or stock > STOCK_SIZE:
        raise NotationError(
            f"a viewer's stock is a count 0..{STOCK_SIZE}, found {rest!r}", line=number
        )
    number, waste_text = found["waste"]
    waste = tuple(UNKNOWN if t == "##" else parse_card_token(t, number) for t in waste_text.split())
    foundations, hidden = parse_foundations_line(found["foundations"])
    return View(
        variant=variant,
        tableau=tuple(tableau),
        face_down=tuple(face_down),
        stock=stock,
        waste=waste,
        foundations=foundations,
        foundation_hidden=hidden,
        pass_number=pass_number,
    )
