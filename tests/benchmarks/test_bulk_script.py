"""benchmarks/speed/bulk.py runs end to end on small sizes and writes what it measured."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow  # runs the script and its children in subprocesses
def test_bulk_measures_wall_overhead_and_peak_memory_per_size(tmp_path: Path) -> None:
    out = tmp_path / "bulk.json"
    done = subprocess.run([sys.executable, "-m", "benchmarks.speed.bulk", "--sizes", "30,70", "--chunk-size",
                           "20", "--out", str(out)], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["partial"] is False and [c["samples"] for c in data["cells"]] == [30, 70]
    assert [c["chunks"] for c in data["cells"]] == [{"size": 20, "count": 2}, {"size": 20, "count": 4}]
    assert all(c["judge_calls"] == 5 * c["samples"] and c["peak_mb"] > 10 for c in data["cells"])
    assert all(c["means"]["faithfulness"] == 1.0 for c in data["cells"])  # both statements are in the contexts
    assert "| 70 | none |" in done.stdout
