"""Which judge settings move agreement with humans: one WikiEval pairs run per setting, one table.

    python -m benchmarks.quality.judge_settings --limit 10 --threads 1

Settings compared (each against the default: reasons on, every few-shot example, greedy verdicts):
no reason before the verdict (``--no-reasons``), fewer few-shot examples (``max_examples`` 0 and 1),
and the majority of 3 sampled verdicts at temperature 0.7 (``--votes 3``). The judge is loaded once.
Writes ``benchmarks/quality/results/judge_settings.json``: accuracy per file, judge calls, completion tokens
and seconds for every setting.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.harness.bench import add_judge_arguments, describe_machine, localeval_models, machine_line, write_json

RESULTS = Path(__file__).resolve().parent / "results"

SETTINGS: dict[str, dict[str, Any]] = {
    "default (reasons, all examples, greedy)": {},
    "no reasons": {"reasons": False},
    "no few-shot examples": {"max_examples": 0},
    "one few-shot example": {"max_examples": 1},
    "3 votes at temperature 0.7": {"votes": 3, "temperature": 0.7},
}


def default_row(paths: list[Path], limit: int) -> dict[str, Any]:
    """The default setting's figures on the first ``limit`` pairs of full agreement.py runs."""
    import json

    files = []
    for path in paths:
        data = json.loads(path.read_text())
        settings = data["settings"]
        if (settings.get("reasons") is False or settings.get("max_examples") is not None
                or settings.get("votes", 1) != 1):
            raise SystemExit(f"{path} was not run with the default settings")
        if settings.get("offset", 0) != 0:
            raise SystemExit(f"{path} starts at question {settings['offset']}, not at the first")
        files += default_files(data, limit)
    return {"name": next(iter(SETTINGS)), "from": ", ".join(map(str, paths)), "settings": {}, "files": files,
            "wall_seconds": sum(f["wall_seconds"] for f in files)}


def _finished(path: Path) -> bool:
    """An agreement.py result that is there and whole (it writes ``"partial": true`` until its last file)."""
    import json

    try:
        return json.loads(path.read_text()).get("partial") is not True
    except (OSError, ValueError):  # not there yet, or caught while being written
        return False


def default_files(data: dict[str, Any], limit: int) -> list[dict[str, Any]]:
    from localeval.agree.pair_count import count_pairs

    files = []
    for f in data["files"]:
        scores = f["scores"][:limit]
        count = count_pairs([g for g, _ in scores], [b for _, b in scores])
        share = limit / max(1, f["pairs"])  # calls, tokens and time: the file's, scaled to these pairs
        files.append({"file": f["file"], "accuracy": count.accuracy, "pairs": count.pairs,
                      "judge_calls": round(f["judge_calls"] * share), "completion_tokens":
                      round(f["completion_tokens"] * share), "wall_seconds": f["wall_seconds"] * share})
    return files


def table(rows: list[dict[str, Any]]) -> str:
    files = [f["file"] for f in rows[0]["files"]]
    head = f"{'setting':<40}" + "".join(f" {name:>8}" for name in files) + f" {'calls':>6} {'tokens':>7} {'seconds':>8}"
    lines = [head, "-" * len(head)]
    for row in rows:
        accuracy = "".join(f" {f['accuracy']:>8.2f}" for f in row["files"])
        calls = sum(f["judge_calls"] for f in row["files"])
        tokens = sum(f["completion_tokens"] for f in row["files"])
        lines.append(f"{row['name']:<40}{accuracy} {calls:>6} {tokens:>7} {row['wall_seconds']:>8.1f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", default=None, help="folder with ff.csv, ar.csv, cr.csv "
                        "(default: localeval/agree/wikieval_pairs, shipped in the package)")
    parser.add_argument("--files", default="ff,ar,cr", help="which pair files")
    parser.add_argument("--limit", type=int, default=10, help="first N questions of each file")
    parser.add_argument("--only", default=None, help="comma-separated setting numbers to run (1 = default)")
    parser.add_argument("--default-from", default=None, metavar="JSON[,JSON]",
                        help="take the default setting's row from an agreement.py result with the same judge "
                             "(its first --limit pairs: the same greedy answers) instead of running it again")
    add_judge_arguments(parser)
    parser.add_argument("--out", default=str(RESULTS / "judge_settings.json"))
    args = parser.parse_args(argv)

    from localeval.agree.pair_run import run_pairs
    from localeval.api import load_judge
    from localeval.config import RunConfig
    from localeval.prompts import Settings

    machine = describe_machine()
    print(f"machine: {machine_line(machine)}", flush=True)
    judge, embedder, options = localeval_models(args)
    if isinstance(judge, str):
        judge = load_judge(judge, options)
    chosen = list(SETTINGS.items())
    if args.only:
        chosen = [chosen[int(i) - 1] for i in args.only.split(",")]
    header = {"command": "python -m benchmarks.quality.judge_settings "
                         + " ".join(sys.argv[1:] if argv is None else argv),
              "machine": machine, "limit": args.limit}
    rows: list[dict[str, Any]] = []
    if args.default_from:
        chosen = [(name, values) for name, values in chosen if values]
    for name, values in chosen:
        report = run_pairs(args.pairs, judge, embedder, limit=args.limit, config=RunConfig(settings=Settings(**values)),
                           files=args.files.split(","))
        rows.append({"name": name, **report.to_dict()})
        print(f"{name}: " + ", ".join(f"{f.file} {f.accuracy:.2f}" for f in report.files)
              + f" ({report.wall_seconds:.0f} s)", flush=True)
        write_json(args.out, {**header, "settings": rows, "finished": False})  # a stopped run keeps its rows
    if args.default_from:  # read last: an agreement run started beside this one may still be writing it
        paths = [Path(p) for p in args.default_from.split(",")]
        while not all(_finished(p) for p in paths):
            print(f"waiting for {', '.join(map(str, paths))}", file=sys.stderr, flush=True)
            time.sleep(60)
        rows.insert(0, default_row(paths, args.limit))
    print()
    print(table(rows))
    print("accuracy: pairwise, ties and NaN count half; chance 0.5; paper (gpt-3.5): ff 0.95, ar 0.78, cr 0.70")
    out = write_json(args.out, {**header, "settings": rows, "finished": True})
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
