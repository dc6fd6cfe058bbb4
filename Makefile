# Every target creates .venv and installs what it needs: a fresh clone needs only python3 and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test lint format bench-ledger bench-nli clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=25.1"
	# torch first, pinned: 2.13.0 is the CPU build on this machine's disk; any other version (or an
	# unpinned torch pulled in by transformers) would download a multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	$(BIN)/python -m pip install --quiet -e ".[nli]" --group dev
	touch $(STAMP)

demo: $(STAMP)  ## the main job for now: a changing timeline in an embedded ledger
	rm -f build/demo-ledger.sqlite build/demo-ledger.sqlite-wal build/demo-ledger.sqlite-shm
	mkdir -p build
	$(BIN)/temporal-rag demo --ledger build/demo-ledger.sqlite

test: $(STAMP)  ## every test, benchmarks included as smoke runs (no timing asserted)
	$(BIN)/python -m pytest --benchmark-disable

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench-ledger: $(STAMP)  ## ledger write/read figures (pytest-benchmark; prints medians)
	$(BIN)/python -m pytest benchmarks --benchmark-only --benchmark-columns=median,mean,stddev,rounds -q

bench-nli: $(STAMP)  ## NLI detector figures: pairs/s with a tiny model, pre-filter savings
	$(BIN)/python -m pytest benchmarks/bench_nli.py --benchmark-only --benchmark-columns=median,mean,stddev,rounds -q

clean:
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache .benchmarks
