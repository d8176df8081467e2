"""Game records: the `klondike-game 1` text and its replay.

```
klondike-game 1
variant: draw=3 passes=3 f2t=no
seed: <seed string>            (or a `klondike-deal 1` block of 8 more lines)
moves: D D W3 36 1F ...        (may continue on lines starting with whitespace)
result: won                    (optional: won, resigned, timeout, unfinished)
```

`GameRecord.parse` checks the text (unknown header lines are rejected, not ignored)
but keeps move tokens as written, so that a malformed token is reported by `replay`
with its index like any other bad move. `replay()` rebuilds the game through the
checked `Board.play` and checks the declared result: `won` must be what the moves give,
and the other results are accepted only for a game the moves do not win.

A seed is written as the rest of its line with surrounding blanks stripped, so a seed
that starts or ends with whitespace cannot be written in a record.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from klondike_live.engine.board import Board
from klondike_live.engine.deal import DEAL_HEADER, Deal, content_lines, parse_deal_lines
from klondike_live.engine.errors import (
    InvalidValueError,
    NotationError,
    RecordResultError,
    ReplayError,
)
from klondike_live.engine.moves import Move
from klondike_live.engine.position import parse_variant_line
from klondike_live.engine.variant import Variant

RECORD_HEADER: Final = "klondike-game 1"
RESULTS: Final = ("won", "resigned", "timeout", "unfinished")

__all__ = ["RESULTS", "GameRecord", "RecordResultError"]


@dataclass(frozen=True, slots=True)
class GameRecord:
    """A game: its variant, its deal (by seed or in full), its move tokens and result.

    Built with both a seed and a deal, or neither, or with an unknown result, it raises
    `InvalidValueError`.
    """

    variant: Variant
    seed: str | None = None
    deal: Deal | None = None
    moves: tuple[str, ...] = field(default=())
    result: str | None = None

    def __post_init__(self) -> None:
        if (self.seed is None) == (self.deal is None):
            given = "both" if self.seed is not None else "neither"
            raise InvalidValueError(f"a game record has a seed or a deal, not {given}")
        if self.result is not None and self.result not in RESULTS:
            raise InvalidValueError(
                f"unknown result {self.result!r}: expected one of {', '.join(RESULTS)}"
            )

    def starting_deal(self) -> Deal:
        """The deal the game starts from."""
        if self.deal is not None:
            return self.deal
        assert self.seed is not None  # guaranteed by __post_init__
        return Deal.from_seed(self.seed)

    def replay(self) -> Board:
        """Replay the moves through the checked path; the board after the last move.

        Raises `ReplayError` (index, token, reason) at the first move that does not
        parse or is illegal, and `RecordResultError` when the declared result is false.
        """
        board = Board(self.starting_deal(), self.variant)
        for index, token in enumerate(self.moves, start=1):
            try:
                move = Move.parse(token)
            except NotationError:
                raise ReplayError(index, token, "not a move token of the notation") from None
            reason = board.illegal_reason(move)
            if reason is not None:
                raise ReplayError(index, token, reason)
            board.push(move)
        won = board.is_won()
        if self.result == "won" and not won:
            left = 52 - board.foundation_count
            raise RecordResultError(
                f"the record says won, but the moves leave {left} cards off the foundations"
            )
        if self.result not in (None, "won") and won:
            raise RecordResultError(f"the record says {self.result}, but the moves win the game")
        return board

    @classmethod
    def parse(cls, text: str) -> GameRecord:
        """Parse record text; errors name the line and the problem."""
        return _parse_record(text)

    def __str__(self) -> str:
        rows = [RECORD_HEADER, f"variant: {self.variant}"]
        if self.deal is not None:
            rows.append(str(self.deal).rstrip("\n"))
        else:
            rows.append(f"seed: {self.seed}")
        rows.append(f"moves: {' '.join(self.moves)}".rstrip())
        if self.result is not None:
            rows.append(f"result: {self.result}")
        return "\n".join(rows) + "\n"


def _parse_record(text: str) -> GameRecord:
    lines = content_lines(text, keep_indent=True)
    if not lines:
        raise NotationError(f"empty record: expected the line {RECORD_HEADER!r}")
    number, first = lines[0]
    if first.strip() != RECORD_HEADER:
        raise NotationError(f"expected {RECORD_HEADER!r}, found {first.strip()!r}", line=number)
    values: dict[str, tuple[int, str]] = {}
    moves: list[str] = []
    deal: Deal | None = None
    last_key = ""
    i = 1
    while i < len(lines):
        number, line = lines[i]
        i += 1
        if line[:1].isspace():
            if last_key != "moves":
                raise NotationError(
                    "only the 'moves:' line may continue on an indented line", line=number
                )
            moves += line.split()
            continue
        if line.strip() == DEAL_HEADER:
            if deal is not None or "deal" in values:
                raise NotationError("a second deal block", line=number)
            block = [(n, text.strip()) for n, text in lines[i - 1 : i + 8]]
            deal = parse_deal_lines(block)
            values["deal"] = (number, "")
            i += 8
            last_key = "deal"
            continue
        key, sep, rest = line.partition(":")
        key = key.strip()
        if not sep or key not in ("variant", "seed", "moves", "result"):
            raise NotationError(f"unknown record line {line.strip()!r}", line=number)
        if key in values:
            raise NotationError(f"a second '{key}:' line", line=number)
        values[key] = (number, rest.strip())
        last_key = key
        if key == "moves":
            moves += rest.split()
    if "variant" not in values:
        raise NotationError("missing the 'variant:' line", line=lines[-1][0])
    variant = parse_variant_line(values["variant"])
    if "seed" in values and deal is not None:
        raise NotationError("a record has a seed or a deal block, not both", line=values["seed"][0])
    if "seed" not in values and deal is None:
        raise NotationError("missing the 'seed:' line or deal block", line=lines[-1][0])
    result = None
    if "result" in values:
        number, result = values["result"]
        if result not in RESULTS:
            raise NotationError(
                f"unknown result {result!r}: expected one of {', '.join(RESULTS)}", line=number
            )
    if "seed" in values and not values["seed"][1]:
        raise NotationError("empty seed", line=values["seed"][0])
    if "seed" in values and not _is_utf8(values["seed"][1]):
        raise NotationError(
            f"bad seed {values['seed'][1]!r}: not UTF-8 text", line=values["seed"][0]
        )
    seed = values["seed"][1] if "seed" in values else None
    return GameRecord(variant=variant, seed=seed, deal=deal, moves=tuple(moves), result=result)


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
