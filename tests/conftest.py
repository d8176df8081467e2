"""Shared test helpers: paths to golden data and a readable way to set up positions."""

from __future__ import annotations

from pathlib import Path

DATA = Path(__file__).parent / "data"
