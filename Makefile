# recgraph — setup, main job and tests. Every install step lives here.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.recgraph-installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LANGGRAPH_CLI_NO_ANALYTICS := 1
export LANGGRAPH_NO_VERSION_CHECK := true
export ANONYMIZED_TELEMETRY := False

BENCH_ARGS ?= --methods all --dataset ml-100k --users 200 --candidates 10 --seed 0 --out runs/bench

.PHONY: setup bench test lint clean

setup: $(STAMP)

# CPU torch first: sentence-transformers would otherwise pull a multi-GB CUDA build.
# recbole without its dependencies: we only read ml-100k's files from its wheel.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	$(BIN)/pip install --quiet --no-deps recbole==1.2.1
	$(BIN)/pip install --quiet -e '.[dev,local]'
	touch $(STAMP)

bench: setup
	$(BIN)/recgraph bench $(BENCH_ARGS)

test: setup
	$(BIN)/ruff check .
	$(BIN)/pytest

lint: setup
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .cache runs
