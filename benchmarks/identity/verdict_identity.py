"""How often a faster judge setting gives the same verdicts as float32 greedy, on a fixed set of asks.

    python -m benchmarks.identity.verdict_identity --clapnq 8 --wikieval 25 --threads 1 \\
        --candidates float32,bfloat16,reason=80,reason=40

First localeval scores ClapNQ samples (six metrics) and both answers of WikiEval ``ff.csv``
questions (faithfulness, response relevancy) with the judge in float32, recording every ask it
sends and every answer. Then each candidate setting answers exactly those asks again (the same
prompts: no drift from earlier answers), in one engine call:

* ``float32``: the same setting replayed, in a different batch layout: the noise floor;
* ``bfloat16`` (or any ``--dtype`` the engine takes): another model path;
* ``reason=N``: the same model with every ``reason`` string bounded to N characters in the schema
  (the default bounds are 160 to 200); ``bfloat16+reason=N`` combines both;
* ``drafts=N``: the transformers engine's draft tokens per step (``float32+drafts=0``: one token at a
  time, the decoding the default's draft tokens must reproduce).

A verdict is every integer in an answer's JSON (0/1 verdicts, ratings, the noncommittal flag), at its
place; an ask's verdicts are identical when all of them are. Asks that answer with text only
(statements, claims, questions) are counted apart, identical when the whole text is. Writes
``benchmarks/identity/results/verdict_identity.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchmarks.harness.bench import add_judge_arguments, describe_machine, localeval_models, machine_line, write_json
from benchmarks.harness.clapnq import build_samples
from localeval.engine.base import Request, Result

RESULTS = Path(__file__).resolve().parent / "results"

CLAPNQ_METRICS = ("faithfulness", "answer_relevancy", "context_precision", "context_recall",
                  "factual_correctness", "noise_sensitivity")
WIKIEVAL_METRICS = ("faithfulness", "answer_relevancy")


class Recorder:
    """A judge engine that passes every call on and keeps each request with its result."""

    def __init__(self, engine: Any) -> None:
        self.engine = engine
        self.asks: list[tuple[Request, Result]] = []
        self.seconds = 0.0

    @property
    def fingerprint(self) -> str:
        return str(self.engine.fingerprint)

    @property
    def context_window(self) -> int | None:
        return self.engine.context_window  # type: ignore[no-any-return]

    def count_prompt_tokens(self, request: Request) -> int:
        return int(self.engine.count_prompt_tokens(request))

    def generate(self, requests: list[Request], on_result: Any = None) -> list[Result]:
        started = time.perf_counter()
        results: list[Result] = self.engine.generate(requests, on_result)
        self.seconds += time.perf_counter() - started
        self.asks += [(r, res) for r, res in zip(requests, results, strict=True) if res.error is None]
        return results


def wikieval_samples(n: int) -> list[Any]:
    """Both answers of the first ``n`` WikiEval ``ff.csv`` questions, as samples (question, context, answer)."""
    from localeval.agree.pair_files import default_pairs_folder, pair_samples, read_pairs

    return pair_samples("ff", read_pairs(default_pairs_folder() / "ff.csv")[:n])


def bound_reasons(schema: Any, chars: int) -> Any:
    """The schema with every ``reason`` string's maxLength lowered to ``chars``."""
    if isinstance(schema, list):
        return [bound_reasons(s, chars) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: bound_reasons(v, chars) for k, v in schema.items()}
    reason = out.get("properties", {}).get("reason")
    if isinstance(reason, dict) and reason.get("type") == "string":
        out["properties"]["reason"] = {**reason, "maxLength": min(chars, reason.get("maxLength", chars))}
    return out


def nodes(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """Every value inside parsed JSON with its path (``.key``, ``[i]``), the outermost first."""
    yield path, value
    if isinstance(value, dict):
        for k, v in value.items():
            yield from nodes(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from nodes(v, f"{path}[{i}]")


def verdicts(text: str) -> list[tuple[str, int]] | None:
    """Every integer of a JSON answer with its path; None when the text is not JSON."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return None
    return [(path, int(v)) for path, v in nodes(data) if isinstance(v, bool | int)]


def reason_chars(text: str) -> list[int]:
    """The length of every ``reason`` in a JSON answer."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return []
    return [len(v) for path, v in nodes(data) if path.endswith(".reason") and isinstance(v, str)]


@dataclass(frozen=True)
class Candidate:
    label: str
    dtype: str  # the transformers engine's --dtype
    reason_chars: int | None  # None: the prompts' own bounds
    drafts: int | None = None  # the engine's --drafts (None: its default)

    @classmethod
    def parse(cls, text: str) -> Candidate:
        dtype, chars, drafts = "float32", None, None
        for part in text.split("+"):
            if part.startswith("reason="):
                chars = int(part.removeprefix("reason="))
            elif part.startswith("drafts="):
                drafts = int(part.removeprefix("drafts="))
            else:
                dtype = part
        return cls(text, dtype, chars, drafts)


def compare(reference: list[tuple[Request, Result]], answers: list[Result]) -> dict[str, Any]:
    """Verdict identity and text identity of ``answers`` against the reference answers, per prompt too."""
    counts: Counter[str] = Counter()
    per_prompt: dict[str, Counter[str]] = {}
    for (request, ref), new in zip(reference, answers, strict=True):
        mine = per_prompt.setdefault(request.label, Counter())
        for a, b in zip(ref.choices, new.choices, strict=False):
            va, vb = verdicts(a.text), verdicts(b.text)
            kind = "verdict" if va else "text"
            same = (va == vb) if kind == "verdict" else (a.text == b.text)
            for c in (counts, mine):
                c[f"{kind}_asks"] += 1
                c[f"{kind}_same"] += int(same)
            if kind == "verdict":
                pairs = dict(vb or [])
                counts["verdicts"] += len(va or [])
                counts["verdicts_same"] += sum(pairs.get(p) == v for p, v in va or [])
    def share(c: Counter[str], kind: str) -> float | None:
        return round(c[f"{kind}_same"] / c[f"{kind}_asks"], 4) if c[f"{kind}_asks"] else None

    return {
        "verdict_asks": counts["verdict_asks"], "verdict_asks_identical": share(counts, "verdict"),
        "verdicts": counts["verdicts"],
        "verdicts_identical": round(counts["verdicts_same"] / counts["verdicts"], 4) if counts["verdicts"] else None,
        "text_asks": counts["text_asks"], "text_asks_identical": share(counts, "text"),
        "per_prompt": {name: {"verdict_asks": c["verdict_asks"], "identical": share(c, "verdict"),
                              "text_asks": c["text_asks"], "text_identical": share(c, "text")}
                       for name, c in sorted(per_prompt.items())},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--clapnq", type=int, default=8, help="ClapNQ samples (six metrics)")
    parser.add_argument("--wikieval", type=int, default=25,
                        help="WikiEval ff.csv questions, both answers (faithfulness, relevancy)")
    parser.add_argument("--candidates", default="float32,bfloat16,reason=80",
                        help="comma-separated settings: a dtype, reason=N, or both joined by +")
    add_judge_arguments(parser)
    parser.add_argument("--out", default=str(RESULTS / "verdict_identity.json"))
    args = parser.parse_args(argv)
    if args.engine == "vllm":
        raise SystemExit("verdict_identity.py compares settings of the transformers engine (scripted: a dry run)")

    import localeval
    from localeval.api import load_judge
    from localeval.config import JudgeOptions

    machine = describe_machine()
    judge_dir, embedder, options = localeval_models(args)

    def engine_for(dtype: str, drafts: int | None = None) -> Any:
        if args.engine == "scripted":  # a fresh rule-based judge: every setting answers alike
            return localeval_models(args)[0]
        extra = {"dtype": dtype, **({} if drafts is None else {"drafts": drafts})}
        return load_judge(judge_dir, (options or JudgeOptions()).with_options(**extra))

    started = time.perf_counter()
    recorder = Recorder(engine_for("float32"))
    load_seconds = time.perf_counter() - started
    runs = [(build_samples(args.clapnq, seed=0, top_k=3), CLAPNQ_METRICS),
            (wikieval_samples(args.wikieval), WIKIEVAL_METRICS)]
    for samples, metrics in runs:
        if samples:
            localeval.evaluate(samples, metrics=list(metrics), judge=recorder, embedder=embedder, cache=False)
    reference = recorder.asks
    print(f"recorded {len(reference)} asks in {recorder.seconds:.0f} s (+{load_seconds:.0f} s loading); "
          f"machine: {machine_line(machine)}", flush=True)
    lengths = [n for _, res in reference for c in res.choices for n in reason_chars(c.text)]
    bounds = [s.get("maxLength") for req, _ in reference for s in _reason_schemas(req.schema)]
    at_bound = sum(n >= min(bounds or [10**9]) for n in lengths)
    reasons = {"count": len(lengths), "mean_chars": round(sum(lengths) / len(lengths), 1) if lengths else None,
               "at_or_over_smallest_bound": at_bound, "bounds": sorted(set(b for b in bounds if b))}
    print(f"reasons in the float32 answers: {reasons}", flush=True)
    results: list[dict[str, Any]] = []
    header = {"command": "python -m benchmarks.identity.verdict_identity "
                         + " ".join(sys.argv[1:] if argv is None else argv),
              "machine": machine, "asks": len(reference), "reference_seconds": round(recorder.seconds, 1),
              "reference_completion_tokens": sum(c.completion_tokens for _, r in reference for c in r.choices),
              "reasons": reasons}
    candidates = args.candidates.split(",")
    for text in candidates:
        cand = Candidate.parse(text)
        started = time.perf_counter()
        engine = engine_for(cand.dtype, cand.drafts)
        loading = time.perf_counter() - started
        asks = [req if cand.reason_chars is None else replace(req, schema=bound_reasons(req.schema, cand.reason_chars))
                for req, _ in reference]
        started = time.perf_counter()
        answers = engine.generate(asks)
        seconds = time.perf_counter() - started
        row = {"candidate": cand.label, "dtype": cand.dtype, "reason_chars": cand.reason_chars,
               "load_seconds": round(loading, 2), "generate_seconds": round(seconds, 1),
               "completion_tokens": sum(c.completion_tokens for r in answers for c in r.choices),
               "errors": sum(r.error is not None for r in answers), **compare(reference, answers)}
        results.append(row)
        print(f"{cand.label:<22} verdict asks identical {row['verdict_asks_identical']} of {row['verdict_asks']}, "
              f"verdicts {row['verdicts_identical']} of {row['verdicts']}, text asks {row['text_asks_identical']} "
              f"of {row['text_asks']}; {row['generate_seconds']} s, {row['completion_tokens']} completion tokens",
              flush=True)
        del engine
        out = write_json(args.out, {**header, "partial": len(results) < len(candidates), "candidates": results})
    print(f"wrote {out}")
    return 0


def _reason_schemas(schema: Any) -> list[dict[str, Any]]:
    """Every ``reason`` string schema inside ``schema``."""
    return [v for path, v in nodes(schema) if path.endswith(".properties.reason") and isinstance(v, dict)]


if __name__ == "__main__":
    raise SystemExit(main())
