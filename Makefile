PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
EXTRAS := test,ray,postgres,otel
CORE := $(VENV)/.installed-core
FULL := $(VENV)/.installed

.PHONY: run test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# `make run`: the package and its own dependencies, no extra (the demo needs none), each
# module compiled when first imported.
$(CORE): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e .
	touch $@

# Tests, lint and benchmarks: every extra (Ray, asyncpg, OpenTelemetry, the test tools).
$(FULL): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $@

# A venv `make test` filled stays full: `make run` keeps that install up to date instead.
run: $(if $(wildcard $(FULL)),$(FULL),$(CORE))
	$(BIN)/python -m agentos.demo

lint: $(FULL)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest

bench: $(FULL)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV)
