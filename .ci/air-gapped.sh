#!/usr/bin/env bash
# CI: the air-gapped install. Builds the wheelhouse (scripts/wheelhouse.sh), then, with no network at all
# (a new network namespace, `unshare -rn`) and no pip configuration, installs from that folder alone into a new
# venv, prepares the bundled models, checks both with `localeval models check`, and evaluates the demo data.
# WHEELHOUSE=DIR reuses a folder built before. Exits non-zero on the first failure.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
started=$(date +%s)
say() { echo "air-gapped: $*"; }

house=${WHEELHOUSE:-$TMP/wheelhouse}
if [[ ! -f $house/install.sh ]]; then
    # CI's pip reaches the registries through its own configuration: torch's CPU wheel comes from there.
    TORCH_INDEX_URL= bash "$ROOT/scripts/wheelhouse.sh" "$house" 2>&1 | grep -v '^WARNING: Location' || true
fi
[[ -f $house/install.sh ]] || { echo "air-gapped: FAILED: no wheelhouse in $house" >&2; exit 1; }
built=$(date +%s)
say "wheelhouse ready ($(du -sh "$house" | cut -f1)) in $((built - started)) s"

cat >"$TMP/offline.sh" <<OFFLINE
set -euo pipefail
export PIP_CONFIG_FILE=/dev/null XDG_CACHE_HOME="$TMP/cache" OMP_NUM_THREADS=1
unset LOCALEVAL_MODELS PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL
python3 -c 'import socket; s = socket.socket(); s.settimeout(3); s.connect(("pypi.org", 443))' 2>/dev/null \
    && { echo "air-gapped: FAILED: the network is reachable" >&2; exit 1; }
echo "air-gapped: ok: no network"
bash "$house/install.sh" "$TMP/venv"
"$TMP/venv/bin/python" -c 'import importlib.util as u, sys; sys.exit(u.find_spec("triton") is not None)' \
    || { echo "air-gapped: FAILED: triton was installed" >&2; exit 1; }
echo "air-gapped: ok: no triton"
for name in smollm2-135m-instruct all-minilm-l6-v2; do
    "$TMP/venv/bin/localeval" models check "\$name"
done
cd "$TMP"
"$TMP/venv/bin/localeval" evaluate "$ROOT/examples/rag_demo.jsonl" --metrics faithfulness,mrr --out "$TMP/run" \
    --threads 1 --no-progress
"$TMP/venv/bin/python" -c 'import json, sys; m = json.load(open(sys.argv[1]))["metrics"]; \
print("air-gapped: ok: faithfulness", m["faithfulness"]["mean"], "mrr", m["mrr"]["mean"])' "$TMP/run/summary.json"
OFFLINE
if unshare -rn true 2>/dev/null; then
    unshare -rn bash "$TMP/offline.sh"
else
    echo "air-gapped: FAILED: unshare -rn is not available here, so the network cannot be cut" >&2
    exit 1
fi
say "all checks passed: wheelhouse $((built - started)) s, offline install and run $(($(date +%s) - built)) s"
