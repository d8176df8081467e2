"""Moves: one small immutable value per notation token.

| token  | kind      | src          | dst        |
|--------|-----------|--------------|------------|
| `D`    | DRAW      | -            | -          |
| `R`    | RECYCLE   | -            | -          |
| `W3`   | W2T       | -            | pile 2     |
| `WF`   | W2F       | -            | -          |
| `3F`   | T2F       | pile 2       | -          |
| `36`   | T2T       | pile 2       | pile 5     |
| `36:3` | T2T       | pile 2       | pile 5     | size 3 (0 when not stated)
| `FH3`  | F2T       | suit 2 (H)   | pile 2     |

Piles are 0-based inside the engine (`0..6`) and 1-based in text (`1..7`).
`Move.parse(str(m)) == m` for every move. Parsing checks syntax only; whether a move is
allowed is the board's business (`Board.play`). `ALL_MOVES` holds every well-formed
`Move` value: the ones with a token, and so the only ones `Board.play` accepts.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from klondike_live.engine.cards import SUITS
from klondike_live.engine.counts import parse_count
from klondike_live.engine.errors import InvalidMoveError

DRAW: Final = 0
RECYCLE: Final = 1
W2T: Final = 2
W2F: Final = 3
T2F: Final = 4
T2T: Final = 5
F2T: Final = 6

KIND_NAMES: Final = ("DRAW", "RECYCLE", "W2T", "W2F", "T2F", "T2T", "F2T")

_PILES: Final = "1234567"


class Move(NamedTuple):
    """A move: its kind, source and destination indices, and a stated run size (0: none)."""

    kind: int
    src: int = 0
    dst: int = 0
    size: int = 0

    @classmethod
    def parse(cls, token: str) -> Move:
        """Parse one token (`D`, `R`, `W3`, `WF`, `3F`, `36`, `36:3`, `FH3`).

        Raises `InvalidMoveError` quoting the token when it is not one.
        """
        text = token.strip()
        # ASCII only: `str.upper` maps a few other letters onto ASCII (long s to "S").
        move = _parse(text.upper()) if text.isascii() else None
        if move is None:
            raise InvalidMoveError(f"bad move {token!r}: not a move token of the notation")
        return move

    def __str__(self) -> str:
        kind = self.kind
        if kind == DRAW:
            return "D"
        if kind == RECYCLE:
            return "R"
        if kind == W2T:
            return f"W{self.dst + 1}"
        if kind == W2F:
            return "WF"
        if kind == T2F:
            return f"{self.src + 1}F"
        if kind == T2T:
            base = f"{self.src + 1}{self.dst + 1}"
            return f"{base}:{self.size}" if self.size else base
        return f"F{SUITS[self.src]}{self.dst + 1}"

    def __repr__(self) -> str:
        return f"Move.parse({str(self)!r})"

    @property
    def uncounted(self) -> Move:
        """The same move without a stated run size (`36:3` -> `36`)."""
        return self._replace(size=0) if self.size else self


def _parse(token: str) -> Move | None:
    if token == "D":
        return DRAW_MOVE
    if token == "R":
        return RECYCLE_MOVE
    if len(token) == 2:
        a, b = token[0], token[1]
        if a == "W":
            if b == "F":
                return Move(W2F)
            if b in _PILES:
                return Move(W2T, 0, _PILES.index(b))
            return None
        if a in _PILES:
            if b == "F":
                return Move(T2F, _PILES.index(a))
            if b in _PILES and a != b:
                return Move(T2T, _PILES.index(a), _PILES.index(b))
        return None
    if len(token) == 3 and token[0] == "F" and token[1] in SUITS and token[2] in _PILES:
        return Move(F2T, SUITS.index(token[1]), _PILES.index(token[2]))
    head, sep, count_text = token.partition(":")
    count = parse_count(count_text) if sep else None
    if count is not None and 1 <= count <= 13:
        move = _parse(head)
        if move is not None and move.kind == T2T:
            return move._replace(size=count)
    return None


DRAW_MOVE: Final = Move(DRAW)
RECYCLE_MOVE: Final = Move(RECYCLE)

ALL_MOVES: Final = frozenset(
    [DRAW_MOVE, RECYCLE_MOVE, Move(W2F)]
    + [Move(W2T, 0, dst) for dst in range(7)]
    + [Move(T2F, src) for src in range(7)]
    + [Move(T2T, s, d, n) for s in range(7) for d in range(7) if s != d for n in range(14)]
    + [Move(F2T, suit, dst) for suit in range(4) for dst in range(7)]
)
