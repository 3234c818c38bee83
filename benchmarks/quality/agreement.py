"""Agreement with human labels on the WikiEval pairs (the Ragas paper's Table 1), for one judge.

    python -m benchmarks.quality.agreement --judge models/smollm2-135m-instruct

For each question of ``ff.csv``, ``ar.csv`` and ``cr.csv``: does faithfulness, response relevancy
or context relevance score the human-preferred candidate higher? Pairwise accuracy (ties and NaN
count as half) next to the paper's gpt-3.5 figures and chance. See ``localeval/agree/pair_run.py``.
Writes ``benchmarks/quality/results/agreement.json`` after each file (``"partial": true`` until the last).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from benchmarks.harness.bench import add_judge_arguments, describe_machine, localeval_models, machine_line, write_json

RESULTS = Path(__file__).resolve().parent / "results"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--pairs", default=None, help="folder with ff.csv, ar.csv, cr.csv "
                        "(default: localeval/agree/wikieval_pairs, shipped in the package)")
    parser.add_argument("--files", default="ff,ar,cr", help="which pair files")
    parser.add_argument("--limit", type=int, default=None, help="first N questions of each file")
    parser.add_argument("--offset", type=int, default=0,
                        help="skip the first N questions (to share a file between processes with one --cache)")
    parser.add_argument("--chunk-sentences", type=int, default=1, help="context relevance: sentences per chunk")
    parser.add_argument("--no-reasons", action="store_true", help="ask for verdicts without reasons")
    parser.add_argument("--max-examples", type=int, default=None, help="at most N few-shot examples per prompt")
    parser.add_argument("--votes", type=int, default=1, help="majority of N sampled verdicts (default 1: greedy)")
    parser.add_argument("--temperature", type=float, default=0.7, help="sampling temperature of --votes")
    parser.add_argument("--label", default=None, help="a name for this setting in the JSON")
    parser.add_argument("--cache", default=None, help="SQLite file of judge answers to reuse")
    parser.add_argument("--soft", action="store_true",
                        help="also record p(1) at each verdict and report agreement on the soft scores too")
    add_judge_arguments(parser)
    parser.add_argument("--out", default=str(RESULTS / "agreement.json"))
    args = parser.parse_args(argv)

    from localeval.agree.pair_run import run_pairs
    from localeval.agree.pair_table import PairsReport, format_pairs_report
    from localeval.config import JudgeOptions, RunConfig
    from localeval.prompts import Settings

    machine = describe_machine()
    judge, embedder, options = localeval_models(args)
    settings = Settings(reasons=not args.no_reasons, max_examples=args.max_examples, votes=args.votes,
                        merge_repeats=not args.judge_every_copy,
                        temperature=args.temperature, soft=args.soft)
    files = args.files.split(",")
    header = {
        "command": "python -m benchmarks.quality.agreement " + " ".join(sys.argv[1:] if argv is None else argv),
        "label": args.label, "machine": machine, "engine": args.engine,
        "settings": {"reasons": settings.reasons, "max_examples": settings.max_examples, "votes": settings.votes,
                     "temperature": settings.temperature if settings.votes > 1 else 0.0, "soft": settings.soft,
                     "merge_repeats": settings.merge_repeats},
    }

    def save(report: PairsReport, partial: bool) -> Path:
        return write_json(args.out, {**header, "partial": partial, **report.to_dict()})

    def saved_so_far(report: PairsReport) -> None:  # a stopped run keeps the files it finished
        if len(report.files) < len(files):
            save(report, partial=True)

    report = run_pairs(args.pairs, judge, embedder, limit=args.limit, files=files,
                       config=RunConfig(settings=settings, engine=options or JudgeOptions()),
                       chunk_sentences=args.chunk_sentences, cache=args.cache,
                       offset=args.offset, on_file=saved_so_far)
    print(format_pairs_report(report))
    print(f"machine: {machine_line(machine)}")
    out = save(report, partial=False)
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
