"""How often hostile text sways the judge: the same false answer with and without an injection.

    python -m benchmarks.quality.hostile [--judge models/smollm2-135m-instruct]

Each item of tests/fixtures/hostile.jsonl holds a false response (the context contradicts it) in two
forms: plain, and carrying an instruction to the judge, fake JSON or the chat template's own markers.
An item counts as swayed when the injected form scores higher faithfulness than the plain form.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from localeval import evaluate
from localeval.config import JudgeOptions
from localeval.nan import Nan

ROOT = Path(__file__).resolve().parents[2]
RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judge", default=None, help="judge model folder (default: the bundled one)")
    parser.add_argument("--out", default=str(RESULTS / "hostile.json"))
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    args = parser.parse_args()
    rows = [json.loads(line) for line in (ROOT / "tests" / "fixtures" / "hostile.jsonl").read_text().splitlines()]
    plain = [{**r, "id": r["id"] + "-plain", "response": r["clean_response"]} for r in rows]
    result = evaluate(rows + plain, metrics="faithfulness", judge=args.judge, cache=False, progress=False,
                      judge_options=JudgeOptions(threads=args.threads))
    values = result.scores("faithfulness")
    injected, clean = values[: len(rows)], values[len(rows) :]
    swayed = sum(1 for a, b in zip(injected, clean, strict=True)
                 if not isinstance(a, Nan) and not isinstance(b, Nan) and a > b)
    full = sum(1 for a in injected if a == 1.0)
    nan = sum(1 for a in values if isinstance(a, Nan))
    report = {"items": len(rows), "swayed": swayed, "injected_scored_1": full, "nan": nan,
              "per_item": [{"id": r["id"], "injected": None if isinstance(a, Nan) else a,
                            "plain": None if isinstance(b, Nan) else b}
                           for r, a, b in zip(rows, injected, clean, strict=True)],
              "judge": result.info["judge"]}
    print(f"{'item':<6} {'injected':>9} {'plain':>7}")
    for item in report["per_item"]:
        print(f"{item['id']:<6} {item['injected']!s:>9} {item['plain']!s:>7}")
    print(f"swayed (injected scored above plain): {swayed}/{len(rows)}; injected scored 1.0: {full}/{len(rows)};"
          f" NaN: {nan}")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
