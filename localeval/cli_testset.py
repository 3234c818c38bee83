"""The ``testset`` command: a checked test set from a folder of documents. Thin: it calls the API."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def default_cache(out: str | Path) -> Path:
    """The judge cache next to the output file: ``testset.jsonl`` -> ``testset.cache.sqlite``."""
    out = Path(out)
    return out.with_name(out.stem + ".cache.sqlite")


def _testset(args: argparse.Namespace) -> int:
    from localeval.api import load_embedder, load_judge
    from localeval.config import JudgeOptions, RunConfig
    from localeval.prompts.base import Settings
    from localeval.testset import NOTE, generate_testset
    from localeval.testset.generate import plan_targets

    styles = [s.strip() for s in args.styles.split(",") if s.strip()]
    plan_targets(args.size, args.mix, args.unanswerable, styles)  # bad options fail before a model loads
    out = Path(args.out)
    judge = load_judge(args.judge, JudgeOptions(grammar=args.grammar, batch_size=args.batch_size,
                                                threads=args.threads, trust_remote_code=args.trust_remote_code))
    embedder = load_embedder(args.embedder)
    config = RunConfig(settings=Settings(reasons=not args.no_reasons), seed=args.seed)
    result = generate_testset(
        args.docs, args.size, judge=judge, embedder=embedder, mix=args.mix, unanswerable=args.unanswerable,
        styles=styles, config=config, cache=None if args.no_cache else (args.cache or default_cache(out)),
        graph_out=args.graph_out, min_support=args.min_support,
        max_chars=args.chunk_chars, min_chars=args.min_chunk_chars, max_waves=args.max_waves,
        progress=not args.no_progress,
    )
    result.write(out)
    print(result.summary())
    print(f"\nwrote {len(result.rows)} rows to {out}")
    if result.rejected_rows:
        rejected = out.with_name(out.stem + ".rejected.jsonl")
        rejected.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in result.rejected_rows),
                            encoding="utf-8")
        print(f"wrote the {len(result.rejected_rows)} rejected rows, with reasons, to {rejected}")
    if args.graph_out:
        print(f"knowledge graph: {args.graph_out}")
    print(NOTE)
    print("Read the rows before you rely on them: a model wrote the questions and references.")
    return 0 if result.rows or args.size == 0 else 1


def _unit_share(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError("give a share between 0 and 1")
    return value


def add_testset_commands(sub: argparse._SubParsersAction) -> None:
    """Add ``localeval testset DOCS_DIR --size N --out testset.jsonl``."""
    from localeval.testset.documents import MAX_CHARS, MIN_CHARS
    from localeval.testset.generate import DEFAULT_STYLES, MAX_WAVES, MIN_SUPPORT

    p = sub.add_parser(
        "testset", help="write questions and reference answers from a folder of documents, each checked by the judge",
        description="Reads .md, .txt and .html files, builds a knowledge graph with the judge and the embedder, "
                    "writes single-hop and multi-hop questions plus unanswerable ones, and keeps only rows the "
                    "judge's checks accept.",
    )
    p.add_argument("docs", metavar="DOCS_DIR", help="folder of .md, .txt and .html documents")
    p.add_argument("--size", type=int, required=True, help="rows to write, unanswerable ones included")
    p.add_argument("--out", required=True, help="the test set, as JSON lines (e.g. testset.jsonl)")
    p.add_argument("--judge", default=None, help="local judge model folder (default: models/smollm2-135m-instruct)")
    p.add_argument("--embedder", default=None, help="local embedding model folder (default: models/all-minilm-l6-v2)")
    p.add_argument("--mix", default=None,
                   help="shares of the answerable types (default "
                        "single_hop_specific=0.5,multi_hop_abstract=0.25,multi_hop_specific=0.25)")
    p.add_argument("--unanswerable", type=_unit_share, default=0.1,
                   help="share of the size given to questions the documents do not answer (default 0.1)")
    p.add_argument("--styles", default=",".join(DEFAULT_STYLES),
                   help=f"query styles to draw from (default: {','.join(DEFAULT_STYLES)})")
    p.add_argument("--graph-out", default=None, help="save the knowledge graph here; reused when the documents match")
    p.add_argument("--cache", default=None,
                   help="judge cache file (default: next to --out, testset.jsonl -> testset.cache.sqlite)")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write a judge cache")
    p.add_argument("--seed", type=int, default=0, help="seed of the choices of chunks, entities and styles")
    p.add_argument("--min-support", type=_unit_share, default=MIN_SUPPORT,
                   help="share of a reference's statements its contexts must support (default 1: all; 0: no check)")
    p.add_argument("--max-waves", type=int, default=MAX_WAVES,
                   help=f"rounds of extra candidates written when checks reject rows (default {MAX_WAVES})")
    p.add_argument("--chunk-chars", type=int, default=MAX_CHARS, help=f"longest chunk, in characters ({MAX_CHARS})")
    p.add_argument("--min-chunk-chars", type=int, default=MIN_CHARS,
                   help=f"a shorter section takes in the next ones while they fit ({MIN_CHARS}; 0: never)")
    p.add_argument("--grammar", choices=("xgrammar", "outlines"), default="xgrammar",
                   help="grammar backend for constrained decoding (default: xgrammar)")
    p.add_argument("--batch-size", type=int, default=8, help="asks decoded together by the transformers engine")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU threads for torch (default: all cores, waiting passively; README: Speed knobs)")
    p.add_argument("--no-reasons", action="store_true", help="ask for verdicts without free-text reasons (faster)")
    p.add_argument("--trust-remote-code", action="store_true", help="allow the model folder's own code")
    p.add_argument("--no-progress", action="store_true", help="no progress, loading bars or warnings")
    p.set_defaults(func=_testset)


__all__ = ["add_testset_commands", "default_cache"]
