"""Klondike Live: real-time head-to-head Klondike Solitaire races on seeded deals."""

__version__ = "0.2.0"
