#!/usr/bin/env bash
# Benchmarks on a machine with a GPU: speed and NaN rate against Ragas, then WikiEval agreement,
# with localeval on the vLLM engine. Ragas runs through its transformers adapter on the same GPU. Then the
# judge server path: vLLM's OpenAI server on the judge, localeval's server engine and Ragas both pointed at it.
#
#   bash benchmarks/gpu.sh models/Qwen2.5-7B-Instruct [N] [EMBEDDER]
#
# Needs: pip install -e '.[vllm]' in localeval's environment, benchmarks/ragas/setup_ragas.sh for Ragas
# (skipped with SKIP_RAGAS=1). The ClapNQ and WikiEval files are in the repository.
set -euo pipefail
judge="${1:?usage: bash benchmarks/gpu.sh MODEL_FOLDER [N] [EMBEDDER]}"
n="${2:-50}"
embedder="${3:-models/all-minilm-l6-v2}"
cd "$(dirname "$0")/.."
python="${PYTHON:-python}"
name="$(basename "$judge")"
# each figure beside its question: speed (and the server's) in speed/results/, agreement in quality/results/
results="benchmarks/speed/results/gpu-$name"
agreement="benchmarks/quality/results/gpu-$name"
mkdir -p "$results" "$agreement"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader || true

ragas_args=()
if [[ "${SKIP_RAGAS:-0}" == 1 ]]; then
  ragas_args+=(--skip-ragas)
else
  bash benchmarks/ragas/setup_ragas.sh
  ragas_args+=(--ragas-time-limit "${RAGAS_TIME_LIMIT:-3600}" --ragas-json "$results/ragas_run.json")
fi

"$python" -m benchmarks.speed.speed_vs_ragas --n "$n" --judge "$judge" --embedder "$embedder" --engine vllm \
  "${ragas_args[@]}" --run-dir "runs/bench-gpu-$name" --out "$results/speed_vs_ragas.json" \
  | tee "$results/speed_vs_ragas.txt"

"$python" -m benchmarks.quality.agreement --judge "$judge" --embedder "$embedder" --engine vllm \
  --out "$agreement/agreement.json" | tee "$agreement/agreement.txt"

# The judge server engine: vLLM's OpenAI server on the same judge, localeval and Ragas pointed at it, then the
# server engine against the offline engine on the same asks and against a plain load (SKIP_SERVER=1 skips it).
if [[ "${SKIP_SERVER:-0}" != 1 ]]; then
  server_ragas=()
  [[ "${SKIP_RAGAS:-0}" == 1 ]] && server_ragas+=(--skip-ragas)
  "$python" -m benchmarks.speed.server_vs_ragas --n "$n" --judge "$judge" --embedder "$embedder" --dtype auto \
    --window "${WINDOW:-8192}" --compile "${server_ragas[@]}" --out "$results/server_vs_ragas.json" \
    | tee "$results/server_vs_ragas.txt"
  "$python" -m benchmarks.speed.server_bench --n "$n" --judge "$judge" --dtype auto --window "${WINDOW:-8192}" \
    --compile --out "$results/server_bench.json" | tee "$results/server_bench.txt"
fi

if [[ "${SCALING:-0}" == 1 ]]; then
  "$python" -m benchmarks.speed.scaling --sizes "${SIZES:-10,50,200,1000}" --top-k 1,3,5 --judge "$judge" \
    --embedder "$embedder" --engine vllm --out "$results/scaling.json" | tee "$results/scaling.txt"
fi
echo "results in $results/ and $agreement/"
