# One-time setup is folded into the targets: the first `make run` or `make test` creates
# .venv and installs the package with its dev tools; later runs reuse it. The install is
# editable and compiles the pure core (klondike_live/compiled.py) in place with mypyc;
# a change to setup.py or to any file of engine/, solver/, race/ or protocol/ installs
# it again, so a compiled module never outlives its source.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CLIENT := client_web/node_modules/.installed

.PHONY: run cluster test test-pure test-uvloop test-under-load lint typecheck client-test unit history-postgres cluster-test bench screenshots wheel clean

CORE_SOURCES := $(wildcard $(addprefix server/klondike_live/,engine/*.py solver/*.py race/*.py protocol/*.py compiled.py))

$(STAMP): pyproject.toml setup.py $(CORE_SOURCES)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	$(BIN)/python -m klondike_live.compiled
	touch $(STAMP)

# A second environment with the package installed as plain Python (not editable), for
# `make test-pure`.
PURE_VENV := .venv-pure
PURE_STAMP := $(PURE_VENV)/.installed
PURE_TESTS := tests/engine tests/solver tests/race tests/protocol tests/service

$(PURE_STAMP): pyproject.toml setup.py $(shell find server -name '*.py') $(CLIENT)
	$(PYTHON) -m venv $(PURE_VENV)
	$(PURE_VENV)/bin/pip install --quiet --upgrade pip
	KLONDIKE_PURE_PYTHON=1 $(PURE_VENV)/bin/pip install --quiet '.[dev]'
	$(PURE_VENV)/bin/python -m klondike_live.compiled
	touch $(PURE_STAMP)

# The browser client's npm packages (msgpack), served to the page from node_modules.
$(CLIENT): client_web/package.json client_web/package-lock.json
	npm ci --prefix client_web --no-audit --no-fund --loglevel=error
	touch $(CLIENT)

## run: a server node on http://127.0.0.1:8765/ with its own embedded Valkey (Ctrl-C stops it)
run: $(STAMP) $(CLIENT)
	$(BIN)/klondike-live serve $(ARGS)

## cluster: a local Valkey Cluster (3 masters, 1 replica each) and three nodes on it, on
## http://127.0.0.1:8765/, :8766/ and :8767/ (Ctrl-C stops the nodes, then the cluster)
cluster: $(STAMP) $(CLIENT)
	$(BIN)/klondike-live cluster $(ARGS)

## test: everything CI checks: lint, format, types, client unit tests, all Python and browser
## tests (on the compiled core), and the engine to service tiers again on the pure one
test: lint typecheck client-test unit history-postgres cluster-test test-pure

lint: $(STAMP) $(CLIENT)
	$(BIN)/ruff check server tests bench tools docs/examples
	$(BIN)/ruff format --check server tests bench tools docs/examples
	cd client_web && node_modules/.bin/prettier --check --log-level=warn src test locales index.html style.css eslint.config.js tsconfig.json
	cd client_web && node_modules/.bin/tsc -p . && node_modules/.bin/tsc -p test && node_modules/.bin/eslint src test eslint.config.js

typecheck: $(STAMP)
	$(BIN)/mypy

client-test: $(CLIENT)
	node --test client_web/test/

# Two workers: the browser tests in order on one, everything else beside them (the
# browser group, tests/conftest.py); most of a test's time is spent waiting.
unit: $(STAMP) $(CLIENT)
	$(BIN)/pytest -n 2 --dist loadgroup

# The tests that read or write history (tests/history runs both backends by itself)
# again, with every node's history database on PostgreSQL (tests/postgres.py starts it).
HISTORY_TESTS := tests/service tests/server/test_analysis_http.py tests/server/test_bots.py \
	tests/server/test_comeback.py tests/server/test_daily_attempts.py tests/server/test_daily_days.py \
	tests/server/test_deleted_everywhere.py \
	tests/server/test_daily_gate.py tests/server/test_gateway.py \
	tests/server/test_history_http.py tests/server/test_http_api.py \
	tests/server/test_play_from_here.py tests/server/test_player_stats.py \
	tests/server/test_protocol_conformance.py tests/server/test_redaction_http.py \
	tests/server/test_retention.py

## history-postgres: the tests that read or write history, on PostgreSQL
history-postgres: $(STAMP)
	KLONDIKE_TEST_DATABASE=postgresql $(BIN)/pytest -q -n 2 -p no:cacheprovider $(HISTORY_TESTS)

## cluster-test: the server and daily tests again, on a local Valkey Cluster (3 masters, 1 replica each)
cluster-test: $(STAMP)
	KLONDIKE_TEST_CLUSTER=1 $(BIN)/pytest -q -p no:cacheprovider tests/server tests/daily

## test-pure: the engine, solver, race, protocol and service tests on the package installed
## as plain Python (KLONDIKE_PURE_PYTHON=1, in .venv-pure), the tests importing it from there
test-pure: $(PURE_STAMP)
	KLONDIKE_TEST_CORE=pure $(PURE_VENV)/bin/pytest -q -n 2 -p no:cacheprovider $(PURE_TESTS)

## test-uvloop: the server and live service tests again, with the tests' own event loop
## uvloop instead of asyncio's (the nodes they start run on uvloop in both runs; not part
## of `make test`)
test-uvloop: $(STAMP)
	KLONDIKE_TEST_LOOP=uvloop $(BIN)/pytest -q -p no:cacheprovider -n 2 --dist loadgroup tests/server tests/service

## test-under-load: the Python and browser tests, then the cluster run, with
## KLONDIKE_TEST_TIMEOUT_SCALE=3 while two busy loops (stress-ng, or Python) share the cores
## (not part of `make test`)
test-under-load: $(STAMP) $(CLIENT)
	$(BIN)/python tools/under_load.py --busy 2 --scale 3 \
		"$(BIN)/pytest -n 2 --dist loadgroup" \
		"KLONDIKE_TEST_CLUSTER=1 $(BIN)/pytest -q -p no:cacheprovider tests/server tests/daily"

## screenshots: refresh docs/screenshots/ (the browser tests take them)
screenshots: $(STAMP) $(CLIENT)
	KLONDIKE_SCREENSHOTS=docs $(BIN)/pytest tests/browser -q

## bench: the benchmarks (not tests); results go to docs/benchmarks.md
bench: $(STAMP)
	$(BIN)/python bench/bench_engine.py

## wheel: dist/klondike_live-<version>-<python>-<platform>.whl (compiled core; -py3-none-any
## when built as plain Python), the browser client inside it
wheel: $(STAMP) $(CLIENT)
	rm -rf build dist
	$(BIN)/pip wheel --quiet --no-deps --wheel-dir dist .

clean:
	rm -rf $(VENV) $(PURE_VENV) client_web/node_modules .pytest_cache .mypy_cache .ruff_cache .hypothesis build
	find server -name '*.so' -delete
