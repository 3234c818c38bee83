"""The agreement report on a run written by the scripted judge, checked against hand-computed numbers;
and the ``agree`` command through a throwaway parser."""

from __future__ import annotations

import csv
import json
import math
import re
from pathlib import Path

import pytest

import localeval
from localeval.agree.report import agree, format_agreement
from localeval.cli import main
from localeval.config import JudgeOptions, RunConfig
from localeval.data.errors import DataError
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.errors import LocalevalError
from localeval.prompts.base import Settings

Z95 = 1.959963984540054

# The word-overlap judge gives faithfulness a 0.5 [1, 0], b 1.0 [1], c 0.0 [0], d 2/3 [1, 1, 0],
# e 0.5 [1, 0], f 0.0 [0] (verdicts per statement in brackets).
ROWS = [
    {"id": "a", "question": "Where does the river Alpha flow?",
     "answer": "The river Alpha flows into the northern sea. It is very long.",
     "contexts": ["The river Alpha flows into the northern sea."]},
    {"id": "b", "question": "What colour are bananas?", "answer": "Bananas are yellow when ripe.",
     "contexts": ["Bananas are yellow when ripe."]},
    {"id": "c", "question": "How tall is the Gamma tower?", "answer": "The Gamma tower weighs eleven thousand tonnes.",
     "contexts": ["The Gamma tower is 300 metres tall."]},
    {"id": "d", "question": "What do cats do?",
     "answer": "Cats sleep a lot. Cats hunt small mice. Cats dislike water baths.",
     "contexts": ["Cats sleep a lot.", "Cats hunt small mice at night."]},
    {"id": "e", "question": "What is Delta?", "answer": "Delta is a river town. Delta exports copper wire.",
     "contexts": ["Delta is a river town."]},
    {"id": "f", "question": "Who?", "answer": "Nobody knows anything here.", "contexts": ["Apples grow on trees."]},
]
LABELS = [
    {"id": "a", "faithfulness": 0.5}, {"id": "b", "faithfulness": 1},  # wide
    {"id": "c", "metric": "faithfulness", "label": 0}, {"id": "d", "metric": "faithfulness", "label": 1},
    {"id": "e", "metric": "faithfulness", "label": 0},
    {"id": "zz", "metric": "faithfulness", "label": 1},  # not in the run: left out
    # verdicts (human, judge): a (1, 1) (1, 0); d (1, 1) (0, 1) (0, 0); e (0, 0) at 1; c (0, 0)
    {"id": "a", "metric": "faithfulness", "index": 0, "label": 1},
    {"id": "a", "metric": "faithfulness", "index": 1, "label": 1},
    {"id": "d", "metric": "faithfulness", "index": 0, "label": 1},
    {"id": "d", "metric": "faithfulness", "index": 1, "label": 0},
    {"id": "d", "metric": "faithfulness", "index": 2, "label": 0},
    {"id": "e", "metric": "faithfulness", "index": 1, "label": 0},
    {"id": "c", "metric": "faithfulness", "index": 0, "label": 0},
]


@pytest.fixture
def run(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    localeval.evaluate(ROWS, metrics="faithfulness", judge=ScriptedEngine(rule_script), out=out, progress=False)
    return out


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_sample_level_numbers_by_hand(tmp_path: Path, run: Path) -> None:
    report = agree(_write(tmp_path / "labels.jsonl", LABELS), run)
    m = report.get("faithfulness")
    assert m is not None and (m.labels, m.n, m.unmatched) == (6, 5, 1) and not m.binary
    # pass/fail at 0.5: human (1, 1, 0, 1, 0), judge (1, 1, 0, 1, 1): 4 of 5 agree
    # chance: human passes 3/5, judge 4/5: 0.6*0.8 + 0.4*0.2 = 0.56; kappa (0.8 - 0.56) / 0.44 = 6/11
    assert m.accuracy.value == pytest.approx(0.8)
    assert m.kappa.value == pytest.approx(6 / 11)
    # human (.5, 1, 0, 1, 0), judge (.5, 1, 0, 2/3, .5): centred (0, .5, -.5, .5, -.5) and
    # (-1/30, 7/15, -8/15, 2/15, -1/30): products 7/12, squares 1 and 47/90
    assert m.pearson is not None and m.pearson.value == pytest.approx((7 / 12) / math.sqrt(47 / 90))
    # ranks human (3, 4.5, 1.5, 4.5, 1.5), judge (2.5, 5, 1, 4, 2.5): products 8.25, squares 9 and 9.5
    assert m.spearman is not None and m.spearman.value == pytest.approx(8.25 / math.sqrt(9 * 9.5))
    for e in (m.accuracy, m.kappa, m.pearson, m.spearman):
        assert e.ci is not None and e.ci[0] <= e.ci[1]
    # PPI: judge mean over the 6 = 4/9; residuals (0, 0, 0, 1/3, -1/2): mean -1/30 -> 37/90
    # var_f = 246/324 / 5; var_r = 320/900 / 4
    p = m.ppi
    assert p is not None and (p.n_total, p.n_labelled) == (6, 5)
    assert p.judge_mean == pytest.approx(4 / 9) and p.estimate == pytest.approx(37 / 90)
    half = Z95 * math.sqrt(246 / 324 / 5 / 6 + 320 / 900 / 4 / 5)
    assert p.ci == pytest.approx((37 / 90 - half, 37 / 90 + half))
    assert p.labels_mean == pytest.approx(0.5)
    assert p.labels_to_halve is None  # var_f/N = 0.0253 is more than a quarter of 0.0431


def test_verdict_level_confusion_by_hand(tmp_path: Path, run: Path) -> None:
    report = agree(_write(tmp_path / "labels.jsonl", LABELS), run)
    v = report.get("faithfulness", "verdict")
    assert v is not None and v.n == 7
    assert v.confusion == [[3, 1], [1, 2]]  # rows human 0/1, columns judge 0/1
    # observed 5/7; both pass 3/7: chance 9/49 + 16/49 = 25/49; kappa (35 - 25) / 24
    assert v.accuracy.value == pytest.approx(5 / 7)
    assert v.kappa.value == pytest.approx(5 / 12)
    assert v.ppi is None and v.spearman is None


def test_text_and_dict(tmp_path: Path, run: Path) -> None:
    report = agree(_write(tmp_path / "labels.jsonl", LABELS), run, resamples=200, seed=3)
    text = format_agreement(report)
    assert "faithfulness  sample" in text and "faithfulness  verdict" in text
    assert "0.80 [" in text and "human 0" in text and "corrected mean (PPI)" in text
    assert "0.411 [" in text and "not by labels alone" in text
    assert "faithfulness (sample) 1" in text  # the label for zz
    data = json.loads(json.dumps(report.to_dict()))
    sample = data["metrics"][0]
    assert sample["unmatched"] == 1 and sample["ppi"]["estimate"] == pytest.approx(37 / 90)
    assert isinstance(sample["kappa"]["ci"], list) and data["resamples"] == 200


def test_binary_labels_have_no_correlations(tmp_path: Path, run: Path) -> None:
    labels = [{"id": i, "faithfulness": v} for i, v in zip("bcf", (1, 0, 1), strict=True)]
    m = agree(_write(tmp_path / "labels.jsonl", labels), run).get("faithfulness")
    assert m is not None and m.binary and m.spearman is None and m.pearson is None
    assert m.accuracy.value == pytest.approx(2 / 3)


def test_mismatches_are_errors(tmp_path: Path, run: Path) -> None:
    with pytest.raises(LocalevalError, match="does not have"):
        agree(_write(tmp_path / "a.jsonl", [{"id": "a", "context_recall": 1}]), run)
    with pytest.raises(LocalevalError, match=r"no label .* matches"):
        agree(_write(tmp_path / "b.jsonl", [{"id": "nope", "faithfulness": 1}]), run)
    with pytest.raises(DataError, match=r"row 1, field 'index': 5 is past the end.*positions 0 to 1"):
        agree(_write(tmp_path / "c.jsonl", [{"id": "a", "metric": "faithfulness", "index": 5, "label": 1}]), run)


# --- the command -------------------------------------------------------------------------------


def _agree_cli(argv: list[str]) -> int:
    return main(["agree", *argv])


def test_cli_prints_the_report_and_writes_json(tmp_path: Path, run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    labels = _write(tmp_path / "labels.jsonl", LABELS)
    assert _agree_cli([str(labels), str(run), "--json", str(tmp_path / "out.json"), "--resamples", "100"]) == 0
    out = capsys.readouterr().out
    assert "corrected mean (PPI)" in out and "wrote" in out
    data = json.loads((tmp_path / "out.json").read_text())
    assert data["agreement"]["metrics"][0]["n"] == 5 and "pairs" not in data


@pytest.mark.parametrize(("argv", "message"), [
    ([], "give LABELS RUN"),
    (["labels.jsonl"], "also give the run folder"),
    (["labels.jsonl", "run", "--judge", "models/x"], "--judge only apply with --pairs"),
    (["--pairs", "/no/such/folder"], "no such folder"),
])
def test_cli_errors(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert _agree_cli(argv) == 2  # a usage error
    err = capsys.readouterr().err
    assert err.startswith("localeval: ") and re.search(message, err), err


def test_cli_pairs_with_a_scripted_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:

    folder = tmp_path / "pairs"
    folder.mkdir()
    with (folder / "ff.csv").open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["question", "context", "answer", "label"])
        for row in ROWS[:3]:
            writer.writerow([row["question"], row["contexts"][0], row["answer"], 1])
            writer.writerow([row["question"], row["contexts"][0], "Purple elephants dance quietly.", 0])
    loaded: list[object] = []

    def load_judge(judge: object, options: object = None, log_dir: object = None) -> ScriptedEngine:
        loaded.append(judge)
        loaded.append(options)
        return ScriptedEngine(rule_script)

    monkeypatch.setattr("localeval.run.models.load_judge", load_judge)
    assert _agree_cli(["--pairs", str(folder), "--judge", "models/j", "--limit", "2", "--threads", "1",
                       "--batch-size", "4", "--no-progress", "--json", str(tmp_path / "p.json")]) == 0
    out = capsys.readouterr().out
    judge, options = loaded
    assert judge == "models/j" and "ff.csv" in out and "faithfulness" in out
    assert isinstance(options, JudgeOptions)
    assert (options.engine, options.options.threads, options.options.batch_size) == ("transformers", 1, 4)
    data = json.loads((tmp_path / "p.json").read_text())
    assert data["pairs"]["files"][0]["pairs"] == 2 and data["pairs"]["files"][0]["accuracy"] == 1.0


def test_cli_pairs_without_a_folder_uses_the_default(monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from localeval.agree import pair_run, pair_table

    seen: dict[str, object] = {}

    def fake_run_pairs(folder: object, judge: object, embedder: object, **options: object) -> pair_table.PairsReport:
        seen.update(folder=folder, judge=judge, embedder=embedder, **options)
        return pair_table.PairsReport(folder="default", judge="fake", files=[], settings={}, wall_seconds=0.0)

    monkeypatch.setattr(pair_run, "run_pairs", fake_run_pairs)
    assert _agree_cli(["--pairs", "--no-reasons", "--max-examples", "1"]) == 0
    assert seen["folder"] is None and seen["judge"] is None and seen["limit"] is None
    config = seen["config"]
    assert isinstance(config, RunConfig)
    settings = config.settings
    assert isinstance(settings, Settings) and not settings.reasons and settings.max_examples == 1
    assert "judge: fake" in capsys.readouterr().out
