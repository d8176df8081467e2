"""What the command line's subcommands share: their exit statuses and argument types.

Each argument type (an argparse `type=` callable) turns one argument's text into a
value or raises `argparse.ArgumentTypeError` with a message quoting the text; nothing
else.
"""

from __future__ import annotations

import argparse
import math
from typing import Final

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
"""The command ran and failed: a check did not pass, a step failed, a solver bug."""
EXIT_BAD_INPUT: Final = 2


def positive_seconds(text: str) -> float:
    """A finite number of seconds above zero."""
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not (value > 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, not {text!r}")
    return value


def positive_int(text: str) -> int:
    """A whole number of at least 1, in ASCII digits."""
    if text.isascii() and text.isdigit() and int(text) >= 1:
        return int(text)
    raise argparse.ArgumentTypeError(f"expected a positive whole number, not {text!r}")
