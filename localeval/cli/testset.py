"""The ``testset`` command: a checked test set from a folder of documents. Thin: it calls the API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from localeval.cli.command import command, usage_errors
from localeval.cli.shared import CACHE_FILE, ENGINE, JUDGE, NO_CACHE, PROGRESS, Shared
from localeval.testset.documents import MAX_CHARS, MIN_CHARS
from localeval.testset.generate import DEFAULT_STYLES, MAX_WAVES, MIN_SUPPORT

HELP = ("Reads .md, .txt and .html files, builds a knowledge graph with the judge and the embedder, writes "
        "single-hop and multi-hop questions plus unanswerable ones, and keeps only rows the judge's checks accept. "
        "The judge cache defaults to a file next to --out (testset.jsonl -> testset.cache.sqlite).")


def default_cache(out: str | Path) -> Path:
    """The judge cache next to the output file: ``testset.jsonl`` -> ``testset.cache.sqlite``."""
    out = Path(out)
    return out.with_name(out.stem + ".cache.sqlite")


def _unit_share(value: float) -> float:
    if not 0 <= value <= 1:
        raise typer.BadParameter("give a share between 0 and 1")
    return value


def add_testset_commands(app: typer.Typer) -> None:
    """Add ``localeval testset DOCS_DIR --size N --out testset.jsonl``."""

    @command(app, "testset", JUDGE, NO_CACHE, CACHE_FILE, PROGRESS, ENGINE, help=HELP,
             short_help="write questions and reference answers from a folder of documents, each checked by the judge")
    def testset(
        docs: Annotated[str, typer.Argument(metavar="DOCS_DIR", help="folder of .md, .txt and .html documents")],
        size: Annotated[int, typer.Option("--size", help="rows to write, unanswerable ones included")],
        out: Annotated[str, typer.Option("--out", help="the test set, as JSON lines (e.g. testset.jsonl)")],
        shared: Shared,
        mix: Annotated[str | None, typer.Option(
            "--mix", help="shares of the answerable types, TYPE=SHARE separated by commas (default: "
                          "single_hop_specific=0.5, multi_hop_abstract=0.25, multi_hop_specific=0.25)")] = None,
        unanswerable: Annotated[float, typer.Option(
            "--unanswerable", callback=_unit_share,
            help="share of the size given to questions the documents do not answer")] = 0.1,
        styles: Annotated[str, typer.Option(
            "--styles", help="query styles to draw from")]
        = ",".join(DEFAULT_STYLES),
        graph_out: Annotated[str | None, typer.Option(
            "--graph-out", help="save the knowledge graph here; reused when the documents match")] = None,
        seed: Annotated[int, typer.Option(
            "--seed", help="seed of the choices of chunks, entities and styles, and of sampled generations")] = 0,
        min_support: Annotated[float, typer.Option(
            "--min-support", callback=_unit_share,
            help="share of a reference's statements its contexts must support (1: all; 0: no check)")]
        = MIN_SUPPORT,
        max_waves: Annotated[int, typer.Option(
            "--max-waves", help="rounds of extra candidates written when checks reject rows")]
        = MAX_WAVES,
        chunk_chars: Annotated[int, typer.Option(
            "--chunk-chars", help="longest chunk, in characters")] = MAX_CHARS,
        min_chunk_chars: Annotated[int, typer.Option(
            "--min-chunk-chars", help="a shorter section takes in the next ones while they fit (0: never)")]
        = MIN_CHARS,
    ) -> int:
        from localeval.run import models
        from localeval.store.run_folder import write_atomic
        from localeval.testset import NOTE, generate_testset
        from localeval.testset.generate import plan_targets

        chosen = [s.strip() for s in styles.split(",") if s.strip()]
        with usage_errors():  # bad options fail before a model loads
            plan_targets(size, mix, unanswerable, chosen)
        config = shared.judge_config(seed)
        judge = models.load_judge(config.judge, config.engine)
        embedder = models.load_embedder(config.embedder)
        result = generate_testset(
            docs, size, judge=judge, embedder=embedder, config=config, mix=mix, unanswerable=unanswerable,
            styles=chosen, cache=None if shared.no_cache else (shared.cache or default_cache(out)),
            graph_out=graph_out, min_support=min_support, max_chars=chunk_chars, min_chars=min_chunk_chars,
            max_waves=max_waves, progress=not shared.no_progress,
        )
        result.write(out)
        print(result.summary())
        print(f"\nwrote {len(result.rows)} rows to {out}")
        if result.rejected_rows:
            rejected = Path(out).with_name(Path(out).stem + ".rejected.jsonl")
            write_atomic(rejected, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in result.rejected_rows))
            print(f"wrote the {len(result.rejected_rows)} rejected rows, with reasons, to {rejected}")
        if graph_out:
            print(f"knowledge graph: {graph_out}")
        print(NOTE)
        print("Read the rows before you rely on them: a model wrote the questions and references.")
        return 0 if result.rows or size == 0 else 1
