# plansmith: every target installs what it needs itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install demo test test-fast test-loaded test-clean-clone check bench clean compiled test-compiled
.DEFAULT_GOAL := install

# The lab server (src/plansmith/domains/lab/server.py) runs in its own venv:
# opentrons 9.1.2 imports on Python 3.11 (10.x does not) and pins jsonschema<4.18,
# which clashes with the mcp 2.x of the main venv. See docs/lab.md.
LAB_PYTHON ?= $(shell command -v python3.11 || echo $(PYTHON))
LAB_VENV   := .venv-lab
LAB_STAMP  := $(LAB_VENV)/.installed-stamp
# its pins: the one list, which an installed plansmith's own build of the lab venv reads too
LAB_REQUIREMENTS := src/plansmith/domains/lab/requirements-lab.txt

.PHONY: lab-venv npm-servers inspector-cli

$(LAB_STAMP): $(LAB_REQUIREMENTS)
	$(LAB_PYTHON) -m venv $(LAB_VENV)
	$(LAB_VENV)/bin/pip install --quiet --upgrade pip
	$(LAB_VENV)/bin/pip install --quiet -r $(LAB_REQUIREMENTS)
	touch $(LAB_STAMP)

lab-venv: $(LAB_STAMP)

# The LangGraph agent test (tests/domains/code/test_code_langgraph.py) runs in its own venv:
# langchain-mcp-adapters 0.3.2 needs mcp<2, which clashes with the mcp 2.x of the main venv.
LC_PYTHON ?= $(shell command -v python3.11 || echo $(PYTHON))
LC_VENV   := .venv-lc
LC_STAMP  := $(LC_VENV)/.installed-stamp

.PHONY: lc-venv

$(LC_STAMP):
	$(LC_PYTHON) -m venv $(LC_VENV)
	$(LC_VENV)/bin/pip install --quiet --upgrade pip
	$(LC_VENV)/bin/pip install --quiet 'langgraph==1.2.12' 'langchain-core==1.6.5' \
		'langchain-mcp-adapters==0.3.2' 'mcp==1.30.0'
	touch $(LC_STAMP)

lc-venv: $(LC_STAMP)

# The MCP reference servers (filesystem, memory) that integration tests and the
# notes-to-git example drive, pinned by tests/servers/_npm/package-lock.json. Without npm
# the tests that need them are skipped, each saying how to install them.
NPM_DIR   := tests/servers/_npm
NPM_STAMP := $(NPM_DIR)/node_modules/.installed-stamp

$(NPM_STAMP): $(NPM_DIR)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix $(NPM_DIR) --no-audit --no-fund --loglevel=error && touch $(NPM_STAMP); \
	else echo "make: npm not found: the tests of the npm MCP reference servers will be skipped" >&2; fi

npm-servers: $(NPM_STAMP)

# The official MCP Inspector, whose CLI mode (one process per call) drives `plansmith mcp
# --detach-runs` in tests/mcp/test_face_inspector.py, pinned by
# tests/mcp/_inspector/package-lock.json. Without npm that test is skipped, saying how to
# install it.
INSPECTOR_DIR   := tests/mcp/_inspector
INSPECTOR_STAMP := $(INSPECTOR_DIR)/node_modules/.installed-stamp

$(INSPECTOR_STAMP): $(INSPECTOR_DIR)/package-lock.json
	@if command -v npm >/dev/null 2>&1; then \
		npm ci --prefix $(INSPECTOR_DIR) --no-audit --no-fund --loglevel=error && touch $(INSPECTOR_STAMP); \
	else echo "make: npm not found: the MCP Inspector test will be skipped" >&2; fi

inspector-cli: $(INSPECTOR_STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP) $(LAB_STAMP)
	$(BIN)/plansmith demo

test: $(STAMP) $(LAB_STAMP) $(LC_STAMP) $(NPM_STAMP) $(INSPECTOR_STAMP)
	scripts/test $(PYTEST_ARGS)

# The same suite less the end-to-end tests marked `e2e` (whole demos, browsers, wheels,
# kill-and-resume): for the edit-test loop. `make test` runs them all.
test-fast: $(STAMP) $(LAB_STAMP) $(LC_STAMP) $(NPM_STAMP) $(INSPECTOR_STAMP)
	scripts/test --no-cov -m "not e2e"

# The whole suite with every core kept busy by stress-ng (Debian's `stress-ng`).
test-loaded: $(STAMP) $(LAB_STAMP) $(LC_STAMP) $(NPM_STAMP) $(INSPECTOR_STAMP)
	scripts/test-loaded $(PYTEST_ARGS)

# What a user's fresh clone does: HEAD cloned into a temporary folder with nothing beside
# it (no folder of the team beside it), then `make test` there.
test-clean-clone:
	scripts/test-clean-clone

check: $(STAMP)
	scripts/check

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

# The compiled build (mypyc) in .venv-compiled, and the tests of what it compiles run
# against it; see docs/execution.md, "The compiled build".
compiled: $(STAMP)
	scripts/build-compiled

test-compiled: compiled $(LAB_STAMP) $(NPM_STAMP) $(INSPECTOR_STAMP)
	scripts/test-compiled

clean:
	rm -rf $(VENV) .venv-lab .venv-lc .venv-compiled build .pytest_cache .mypy_cache .ruff_cache .hypothesis .coverage

