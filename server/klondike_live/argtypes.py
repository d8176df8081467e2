"""Argument types shared by the command line's subcommands (argparse `type=` callables).

Each turns one argument's text into a value or raises `argparse.ArgumentTypeError`
with a message quoting the text; nothing else.
"""

from __future__ import annotations

import argparse
import math


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
