#!/usr/bin/env bash
# Create benchmarks/.ragas-venv: Ragas 0.4.3 in its own environment, never a dependency of localeval.
# Usage: bash benchmarks/ragas/setup_ragas.sh [python]   (idempotent; rerun to repair)
set -euo pipefail
benchmarks="$(cd "$(dirname "$0")/.." && pwd)"
venv="$benchmarks/.ragas-venv"
py="${1:-python3}"
stamp="$venv/.installed"
if [[ -f "$stamp" ]]; then
  echo "ragas venv ready: $venv"
  exit 0
fi
test -x "$venv/bin/python" || "$py" -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
# The CPU build of torch first: without it, sentence-transformers pulls a multi-gigabyte CUDA build.
"$venv/bin/pip" install -q torch==2.13.0
# `import ragas` 0.4.3 fails with newer langchain-community releases; 0.3.31 is the one that works.
"$venv/bin/pip" install -q ragas==0.4.3 langchain-community==0.3.31 transformers sentence-transformers
# The libraries of Ragas' "all" extra its model-free string metrics use (tests/metrics/vectors/README-strings.md).
"$venv/bin/pip" install -q sacrebleu==2.6.0 rouge-score==0.1.2 rapidfuzz==3.14.6
"$venv/bin/python" -c "import ragas, transformers, sentence_transformers; print('ragas', ragas.__version__)"
touch "$stamp"
echo "ragas venv ready: $venv"
