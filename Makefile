PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
EXTRAS := test,ray,postgres,otel,a2a
CORE := $(VENV)/.installed-core
FULL := $(VENV)/.installed
NODE_DIR := $(VENV)/node
FASTMCP_DIR := $(VENV)/fastmcp
FASTMCP := $(FASTMCP_DIR)/.installed
FASTMCP_TASKS_DIR := $(VENV)/fastmcp-tasks
FASTMCP_TASKS := $(FASTMCP_TASKS_DIR)/.installed
ADK_DIR := $(VENV)/google-adk
ADK := $(ADK_DIR)/.installed
NODE := $(NODE_DIR)/.installed
# What the MCP tests run under Node (tests/support/node.py finds them): Node 22 itself, which
# the conformance suite needs, the suite, the reference server, and the inspector (its CLI).
NODE_PACKAGES := node@22.23.3 @modelcontextprotocol/conformance@0.1.16 \
	@modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/inspector@2.12.0

.PHONY: run test lint bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# `make run`: the package and its own dependencies, no extra (the demo needs none), each
# module compiled when first imported.
$(CORE): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet --no-compile -e .
	touch $@

# Tests, lint and benchmarks: every extra (Ray, asyncpg, OpenTelemetry, a2a-sdk, the test tools).
$(FULL): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[$(EXTRAS)]'
	touch $@

# Node 22 and the npm packages the MCP tests use, inside the venv; without npm the tests that
# need them skip (and fail under CI=true, where .ci/run installs npm).
$(NODE): Makefile
	@if command -v npm >/dev/null; then \
		npm install --prefix $(NODE_DIR) --save-exact --no-audit --no-fund --loglevel=error $(NODE_PACKAGES) \
		&& $(NODE_DIR)/node_modules/.bin/node --version >/dev/null && touch $@; \
	else \
		echo "no npm: the tests that need Node skip (apt-get install nodejs npm)"; \
	fi

# fastmcp, a second MCP framework the tests run a server of: in a venv of its own, since it
# pins its own mcp.
$(FASTMCP): Makefile | $(BIN)/python
	$(PYTHON) -m venv $(FASTMCP_DIR)
	$(FASTMCP_DIR)/bin/python -m pip install --quiet fastmcp==4.1.6
	touch $@

# fastmcp-tasks, a server of the newer MCP tasks (the io.modelcontextprotocol/tasks
# extension) the tests run: in a venv of its own too, since it pins its own fastmcp. Its task
# store is in memory (no Redis server).
$(FASTMCP_TASKS): Makefile | $(BIN)/python
	$(PYTHON) -m venv $(FASTMCP_TASKS_DIR)
	$(FASTMCP_TASKS_DIR)/bin/python -m pip install --quiet fastmcp-tasks==4.1.4
	touch $@

# Google's ADK, a second A2A framework whose client (RemoteA2aAgent) the tests drive
# `agentos a2a` with: in a venv of its own too, since it pins its own a2a-sdk (held at ours).
$(ADK): Makefile | $(BIN)/python
	$(PYTHON) -m venv $(ADK_DIR)
	$(ADK_DIR)/bin/python -m pip install --quiet 'google-adk[a2a]==2.13.0' a2a-sdk==1.3.0
	touch $@

# A venv `make test` filled stays full: `make run` keeps that install up to date instead.
run: $(if $(wildcard $(FULL)),$(FULL),$(CORE))
	$(BIN)/python -m agentos.demo

lint: $(FULL) $(NODE)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# Two pytest-xdist workers; the tests that start Ray share one (their xdist_group), and
# each Ray a test starts is a cluster of its own (RAY_ADDRESS=local, tests/conftest.py).
test: lint $(ADK) $(FASTMCP_TASKS) $(FASTMCP)
	$(BIN)/pytest -n 2 --dist loadgroup

bench: $(FULL) $(NODE)
	$(BIN)/python -m benchmarks

clean:
	rm -rf $(VENV)
