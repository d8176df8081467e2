"""Variants: draw count, pass limit and foundation-to-tableau moves.

The text form is the notation's `draw=3 passes=3 f2t=no`. Defaults follow the rules as
written: draw-1 allows a single pass, draw-3 three passes, and foundation cards stay put.
"""

from __future__ import annotations

from dataclasses import dataclass

from klondike_live.engine.counts import parse_count
from klondike_live.engine.errors import InvalidValueError, NotationError

UNLIMITED = 0
"""The `passes` value meaning no limit on recycling the waste."""


@dataclass(frozen=True, slots=True)
class Variant:
    """Immutable game options.

    `passes` is the total number of passes through the stock; `UNLIMITED` (0) means any
    number. Left out, it takes the rules-as-written default for `draw` (1 or 3). Other
    values raise `InvalidValueError`.
    """

    draw: int = 1
    passes: int = -1
    f2t: bool = False

    def __reduce__(self) -> tuple[type[Variant], tuple[object, ...]]:
        # Pickled through __init__: mypyc builds a compiled class by its __init__ alone.
        return (Variant, (self.draw, self.passes, self.f2t))

    def __post_init__(self) -> None:
        if self.draw not in (1, 3):
            raise InvalidValueError(f"bad draw {self.draw!r}: expected 1 or 3")
        if self.passes == -1:
            object.__setattr__(self, "passes", default_passes(self.draw))
        elif self.passes < 0:
            raise InvalidValueError(
                f"bad passes {self.passes!r}: expected 1, 2, ... or UNLIMITED (0)"
            )

    @property
    def unlimited(self) -> bool:
        """True when the waste may be recycled any number of times."""
        return self.passes == UNLIMITED

    @classmethod
    def parse(cls, text: str) -> Variant:
        """Parse `draw=3 passes=3 f2t=no`; keys may come in any order, missing ones default.

        A missing `passes` takes the default of the given `draw`.
        """
        values: dict[str, str] = {}
        for item in text.split():
            key, sep, value = item.partition("=")
            if not sep or key not in ("draw", "passes", "f2t"):
                raise NotationError(f"bad variant setting {item!r}: expected draw=, passes=, f2t=")
            if key in values:
                raise NotationError(f"variant setting {key!r} given twice")
            values[key] = value
        draw_text = values.get("draw", "1")
        if draw_text not in ("1", "3"):
            raise NotationError(f"bad draw {draw_text!r}: expected 1 or 3")
        draw = int(draw_text)
        passes_text = values.get("passes")
        if passes_text is None:
            passes = default_passes(draw)
        elif passes_text == "unlimited":
            passes = UNLIMITED
        else:
            count = parse_count(passes_text)
            if count is None or count < 1:
                raise NotationError(f"bad passes {passes_text!r}: expected 1, 2, ... or unlimited")
            passes = count
        f2t_text = values.get("f2t", "no")
        if f2t_text not in ("yes", "no"):
            raise NotationError(f"bad f2t {f2t_text!r}: expected yes or no")
        return cls(draw=draw, passes=passes, f2t=f2t_text == "yes")

    def __str__(self) -> str:
        passes = "unlimited" if self.passes == UNLIMITED else str(self.passes)
        return f"draw={self.draw} passes={passes} f2t={'yes' if self.f2t else 'no'}"


def default_passes(draw: int) -> int:
    """Total passes through the stock allowed by the rules as written."""
    return 3 if draw == 3 else 1
