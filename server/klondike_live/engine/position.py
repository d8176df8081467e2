"""Position text: the full (all-seeing) `klondike-position 1` form of a board.

```
klondike-position 1
variant: draw=3 passes=3 f2t=no
pass: 1
1: #TD #AS 8H 7C
...
stock: <cards, top first>
waste: <cards, bottom first>
foundations: C3 D2 H0 S1
```

`format_position(board)` and `parse_position(text)` round-trip. An empty pile is written
as its label alone (`3:`). The redacted form a viewer gets lives in `view.py`; both share
the line reader here.
"""

from __future__ import annotations

from klondike_live.engine.board import Board
from klondike_live.engine.cards import SUITS, Card
from klondike_live.engine.counts import parse_count
from klondike_live.engine.deal import content_lines
from klondike_live.engine.errors import InvalidValueError, NotationError
from klondike_live.engine.variant import Variant

POSITION_HEADER = "klondike-position 1"
POSITION_LABELS = ("variant", "pass", *"1234567", "stock", "waste", "foundations")


def _line(label: str, tokens: list[str]) -> str:
    return f"{label}: {' '.join(tokens)}" if tokens else f"{label}:"


def format_foundations(foundations: tuple[int, ...]) -> str:
    """`C3 D2 H0 S1`."""
    return " ".join(f"{suit}{rank}" for suit, rank in zip(SUITS, foundations, strict=True))


def format_position(board: Board) -> str:
    """The full position text of `board`, face-down cards marked with `#`."""
    rows = [POSITION_HEADER, f"variant: {board.variant}", f"pass: {board.pass_number}"]
    for k, (pile, down) in enumerate(zip(board.tableau, board.face_down, strict=True)):
        tokens = [("#" if i < down else "") + str(card) for i, card in enumerate(pile)]
        rows.append(_line(str(k + 1), tokens))
    rows.append(_line("stock", [str(c) for c in board.stock]))
    rows.append(_line("waste", [str(c) for c in board.waste]))
    rows.append(f"foundations: {format_foundations(board.foundations)}")
    return "\n".join(rows) + "\n"


def read_labelled_lines(text: str, header: str) -> dict[str, tuple[int, str]]:
    """Split position-shaped text into `{label: (line number, rest of line)}`.

    Checks the header, that every label of `POSITION_LABELS` appears exactly once and in
    order, and that there is nothing else. Blank lines and `#` comment lines are skipped
    (a tableau line may start with a `#` card only after its label, so this is safe).
    """
    lines = content_lines(text)
    if not lines:
        raise NotationError(f"empty position text: expected the line {header!r}")
    number, first = lines[0]
    if first != header:
        raise NotationError(f"expected {header!r}, found {first!r}", line=number)
    found: dict[str, tuple[int, str]] = {}
    for (number, line), label in zip(lines[1:], POSITION_LABELS, strict=False):
        name, sep, rest = line.partition(":")
        if not sep or name.strip() != label:
            raise NotationError(f"expected '{label}:', found {line!r}", line=number)
        found[label] = (number, rest.strip())
    if len(lines) - 1 < len(POSITION_LABELS):
        missing = POSITION_LABELS[len(lines) - 1]
        raise NotationError(f"missing the '{missing}:' line", line=lines[-1][0])
    if len(lines) - 1 > len(POSITION_LABELS):
        number, line = lines[len(POSITION_LABELS) + 1]
        raise NotationError(f"unexpected line after 'foundations:': {line!r}", line=number)
    return found


def parse_variant_line(entry: tuple[int, str]) -> Variant:
    """The variant of a `variant:` line, errors carrying its line number."""
    number, rest = entry
    try:
        return Variant.parse(rest)
    except NotationError as exc:
        raise NotationError(exc.message, line=number) from None


def parse_pass_line(entry: tuple[int, str], variant: Variant) -> int:
    """The pass number of a `pass:` line, checked against the variant's limit."""
    number, rest = entry
    pass_number = parse_count(rest)
    if pass_number is None or pass_number < 1:
        raise NotationError(f"bad pass {rest!r}: expected 1, 2, ...", line=number)
    if not variant.unlimited and pass_number > variant.passes:
        raise NotationError(f"pass {rest} is beyond the variant's {variant.passes}", line=number)
    return pass_number


def parse_foundations_line(entry: tuple[int, str]) -> tuple[tuple[int, ...], int]:
    """`C3 D2 H0 S1` (plus one `##` per card the viewer may not know) -> ranks, unknowns."""
    number, rest = entry
    tokens = rest.split()
    hidden = 0
    while tokens and tokens[-1] == "##":
        tokens.pop()
        hidden += 1
    ranks = []
    for suit, token in zip(SUITS, tokens, strict=False):
        rank = parse_count(token[1:])
        if token[:1] not in (suit, suit.lower()) or rank is None:
            raise NotationError(
                f"bad foundation {token!r}: expected {suit}0..{suit}13", line=number
            )
        if not 0 <= rank <= 13:
            raise NotationError(f"bad foundation {token!r}: a suit holds 0..13 cards", line=number)
        ranks.append(rank)
    if len(tokens) != 4:
        raise NotationError("expected four foundations: C<n> D<n> H<n> S<n>", line=number)
    return tuple(ranks), hidden


def parse_card_token(token: str, number: int) -> Card:
    """A card token of a position line, errors carrying the line number."""
    try:
        return Card.parse(token)
    except NotationError as exc:
        raise NotationError(exc.message, line=number) from None


def parse_position(text: str) -> Board:
    """Parse full position text into a board with no history (its `deal` is None)."""
    found = read_labelled_lines(text, POSITION_HEADER)
    variant = parse_variant_line(found["variant"])
    pass_number = parse_pass_line(found["pass"], variant)
    tableau: list[tuple[Card, ...]] = []
    face_down: list[int] = []
    for k in range(1, 8):
        number, rest = found[str(k)]
        cards: list[Card] = []
        down = 0
        for token in rest.split():
            if token.startswith("#"):
                if token == "##":
                    raise NotationError(
                        "'##' (an unknown card) has no place in a full position", line=number
                    )
                if len(cards) != down:
                    raise NotationError(
                        f"face-down {token} above a face-up card in pile {k}", line=number
                    )
                down += 1
                token = token[1:]
            cards.append(parse_card_token(token, number))
        tableau.append(tuple(cards))
        face_down.append(down)
    stock_line, waste_line = found["stock"], found["waste"]
    stock = tuple(parse_card_token(t, stock_line[0]) for t in stock_line[1].split())
    waste = tuple(parse_card_token(t, waste_line[0]) for t in waste_line[1].split())
    foundations, hidden = parse_foundations_line(found["foundations"])
    if hidden:
        raise NotationError("'##' has no place in a full position", line=found["foundations"][0])
    try:
        return Board.from_parts(
            variant, tuple(tableau), tuple(face_down), stock, waste, foundations, pass_number
        )
    except InvalidValueError as exc:
        raise NotationError(str(exc), line=found["foundations"][0]) from None
