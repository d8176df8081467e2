"""Where the golden data files live (tests/data)."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parent / "data"
