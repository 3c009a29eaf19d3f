# plansmith: every target installs what it needs itself.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp

.PHONY: install demo test check bench clean compiled test-compiled
.DEFAULT_GOAL := install

# The lab server (src/plansmith/domains/lab/server.py) runs in its own venv:
# opentrons 9.1.2 imports on Python 3.11 (10.x does not) and pins jsonschema<4.18,
# which clashes with the mcp 2.x of the main venv. See docs/lab.md.
LAB_PYTHON ?= $(shell command -v python3.11 || echo $(PYTHON))
LAB_VENV   := .venv-lab
LAB_STAMP  := $(LAB_VENV)/.installed-stamp

.PHONY: lab-venv

$(LAB_STAMP):
	$(LAB_PYTHON) -m venv $(LAB_VENV)
	$(LAB_VENV)/bin/pip install --quiet --upgrade pip
	$(LAB_VENV)/bin/pip install --quiet 'opentrons==9.1.2' 'mcp==1.9.4' 'pydantic<2.12'
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

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev,bench]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP) $(LAB_STAMP)
	$(BIN)/plansmith demo

test: $(STAMP) $(LAB_STAMP) $(LC_STAMP)
	scripts/test

check: $(STAMP)
	scripts/check

bench: $(STAMP)
	$(BIN)/python bench/run_all.py

# The compiled build (mypyc) in .venv-compiled, and the tests of what it compiles run
# against it; see docs/execution.md, "The compiled build".
compiled: $(STAMP)
	scripts/build-compiled

test-compiled: compiled $(LAB_STAMP)
	scripts/test-compiled

clean:
	rm -rf $(VENV) .venv-lab .venv-lc .venv-compiled build .pytest_cache .mypy_cache .ruff_cache .hypothesis .coverage

