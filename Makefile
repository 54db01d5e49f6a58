# recgraph — setup, main job and tests. Every install step lives here.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.recgraph-installed
# ml-100k ships inside recbole's wheel: downloaded (never installed) to where
# world/recbole_wheel.py looks by default, <venv>/wheels (override: RECGRAPH_RECBOLE_WHEEL).
RECBOLE_WHEEL := $(VENV)/wheels/recbole-1.2.1-py3-none-any.whl
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export LANGGRAPH_CLI_NO_ANALYTICS := 1
export LANGGRAPH_NO_VERSION_CHECK := true
export ANONYMIZED_TELEMETRY := False

# llama-cpp-python compiles llama.cpp from source. Its default build targets the build machine's CPU
# (-march=native: AMX on recent Xeons), and that build crashed with SIGSEGV on its first decode in
# these VMs; a portable AVX2/FMA/F16C build runs. It is built once per machine into LLAMA_WHEELS
# (outside the venv, so every clone reuses it) and installed from there.
LLAMA_VERSION := 0.3.36
LLAMA_WHEELS  ?= $(HOME)/.cache/recgraph/wheels
LLAMA_CMAKE   := -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON

BENCH_ARGS ?= --methods all --dataset ml-100k --users 200 --candidates 10 --seed 0 --workers 2 --out runs/bench

.PHONY: setup bench test lint clean

setup: $(STAMP) $(RECBOLE_WHEEL)

# CPU torch first: sentence-transformers would otherwise pull a multi-GB CUDA build.
# A recbole installed by an older set-up is removed: its missing dependencies made pip print
# a dependency-conflict error on every install (-qq: silent when it is not there).
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet torch==2.13.0
	ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || \
	  CMAKE_ARGS="$(LLAMA_CMAKE)" $(BIN)/pip wheel --quiet --no-deps --no-cache-dir \
	    llama-cpp-python==$(LLAMA_VERSION) -w $(LLAMA_WHEELS)
	$(BIN)/pip install --quiet --no-index --no-deps $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(BIN)/pip uninstall -qq --yes recbole
	$(BIN)/pip install --quiet -e '.[dev,local]'
	# MiniLM exported to ONNX once per environment (torch is needed for this step only); every
	# RECGRAPH_HOME then finds it (world/minilm_onnx.py: SHIPPED_MODELS).
	$(BIN)/python -m world.minilm_export $(VENV)/share/recgraph/models
	touch $(STAMP)

# Downloaded once; the stamp is only needed for the venv's pip (order-only).
$(RECBOLE_WHEEL): | $(STAMP)
	$(BIN)/pip download --quiet --no-deps --dest $(VENV)/wheels recbole==1.2.1

bench: setup
	$(BIN)/recgraph bench $(BENCH_ARGS)

test: setup
	$(BIN)/ruff check .
	$(BIN)/pytest

lint: setup
	$(BIN)/ruff check .

clean:
	rm -rf $(VENV) .cache runs
