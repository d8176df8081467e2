"""Shared test configuration. Golden data paths are in `testdata.py`."""
