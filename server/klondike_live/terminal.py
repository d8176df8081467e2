"""A readable terminal picture of a board: Unicode suits, ANSI colours when wanted.

Pure text in, text out; whether to colour is the caller's decision (`use_colour`
reads the terminal and the `NO_COLOR` convention).
"""

from __future__ import annotations

import os
from typing import TextIO

from klondike_live.engine import Board
from klondike_live.engine.cards import RANK, RANKS, RED, SUIT, SUIT_SYMBOLS

_RESET = "\x1b[0m"
_RED = "\x1b[31;1m"
_DIM = "\x1b[2m"
_WIDTH = 5


def use_colour(stream: TextIO) -> bool:
    """Colour only on a terminal that is not `dumb`, and never when NO_COLOR is set."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("TERM") == "dumb":
        return False
    return stream.isatty()


def _face(card: int) -> str:
    rank = "10" if RANK[card] == 10 else RANKS[RANK[card] - 1]
    return f"{rank}{SUIT_SYMBOLS[SUIT[card]]}"


def _cell(card: int | None, *, colour: bool, face_down: bool = False) -> str:
    if card is None:
        text = "·" if not face_down else ""
        return f"{text:^{_WIDTH}}"
    if face_down:
        text = f"{'░░░':^{_WIDTH}}"
        return f"{_DIM}{text}{_RESET}" if colour else text
    text = f"{_face(card):>4} "
    if colour and RED[card]:
        return f"{_RED}{text}{_RESET}"
    return text


def render(board: Board, *, colour: bool = False) -> str:
    """The board as lines of text: header, stock/waste/foundations, then the columns."""
    passes = "∞" if board.variant.unlimited else str(board.variant.passes)
    lines = [
        f"Klondike  {board.variant}   pass {board.pass_number}/{passes}"
        f"   moves {len(board.moves)}   score {board.score}",
        "",
    ]
    stock = f"[{len(board.stock):>2}]" if board.stock else "[  ]"
    shown = board.waste[-board.variant.draw :] if board.waste else ()
    waste = "".join(_cell(c, colour=colour) for c in shown) or f"{'·':^{_WIDTH}}"
    foundations = []
    for suit, rank in enumerate(board.foundations):
        if rank:
            foundations.append(_cell(suit * 13 + rank - 1, colour=colour))
        else:
            foundations.append(f"{'[' + SUIT_SYMBOLS[suit] + ']':^{_WIDTH}}")
    pad = " " * max(1, 4 * _WIDTH - len(stock) - 1 - _visible_len(waste))
    lines.append(f"{stock} {waste}{pad}{''.join(foundations)}".rstrip())
    lines.append("")
    lines.append("".join(f"{k:^{_WIDTH}}" for k in range(1, 8)).rstrip())
    height = max((len(p) for p in board.tableau), default=0)
    for row in range(max(height, 1)):
        cells = []
        for pile, down in zip(board.tableau, board.face_down, strict=True):
            if row < len(pile):
                cells.append(_cell(pile[row], colour=colour, face_down=row < down))
            elif row == 0:
                cells.append(_cell(None, colour=colour))
            else:
                cells.append(" " * _WIDTH)
        lines.append("".join(cells).rstrip())
    return "\n".join(lines) + "\n"


def _visible_len(text: str) -> int:
    """Length of `text` without ANSI escape sequences."""
    length = 0
    escape = False
    for ch in text:
        if ch == "\x1b":
            escape = True
        elif escape:
            escape = ch != "m"
        else:
            length += 1
    return length
