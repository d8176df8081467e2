# One-time setup is folded into the targets: the first `make run` or `make test` creates
# .venv and installs the package with its dev tools; later runs reuse it.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck unit bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

## run: a server node on http://127.0.0.1:8765/ with its own embedded Valkey (Ctrl-C stops it)
run: $(STAMP)
	$(BIN)/klondike-live serve $(ARGS)

## test: everything CI checks: lint, format, types, all tests
test: lint typecheck unit

lint: $(STAMP)
	$(BIN)/ruff check server tests bench docs/examples
	$(BIN)/ruff format --check server tests bench docs/examples

typecheck: $(STAMP)
	$(BIN)/mypy

unit: $(STAMP)
	$(BIN)/pytest

## bench: the benchmarks (not tests); results go to docs/benchmarks.md
bench: $(STAMP)
	$(BIN)/python bench/bench_engine.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis
