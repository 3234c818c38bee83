"""compare and gate --baseline warn, without failing, where two runs' judges, settings or batch invariance differ."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from localeval.config import JudgeOptions, RunConfig
from localeval.prompts.base import Settings
from localeval.report.compare import compare_runs, comparison_to_dict, format_comparison
from localeval.report.gate import gate
from localeval.report.html import render_comparison

A = [0.2, 0.4, 0.6, 0.8] * 3  # 12 pairs: a verdict needs 10
B = [0.5, 0.6, 0.9, 1.0] * 3


def record(config: RunConfig | None = None, *, judge: str = "judge-x float32", invariant: bool | None = True,
           cache: str | None = None) -> dict[str, Any]:
    """A run record as evaluate writes it (``invariant=None``: a run written before the field)."""
    info: dict[str, Any] = {"judge": judge, "cache": cache,
                            "config": (config or RunConfig()).to_dict() | {"judge_fingerprint": judge}}
    if invariant is not None:
        info["invariance"] = {"batch_invariant": invariant, "note": "fp32 kernels" if invariant else "bf16 batches"}
    return info


def pair(make_run, info_a: dict[str, Any], info_b: dict[str, Any]):
    return (make_run("a", {"faithfulness": A}, info=info_a), make_run("b", {"faithfulness": B}, info=info_b))


def test_identical_configs_give_no_warning(make_run) -> None:
    a, b = pair(make_run, record(), record())
    c = compare_runs(a, b)
    assert c.warnings == [] and "Warnings" not in format_comparison(c)
    assert gate(b, baseline=a, no_worse=["faithfulness"]).warnings == []


def test_other_judges_are_named_with_both_fingerprints(make_run) -> None:
    a, b = pair(make_run, record(judge="qwen-7b bfloat16"), record(judge="qwen-7b float32"))
    (warning,) = compare_runs(a, b).warnings
    assert warning.startswith("the judges differ") and "qwen-7b bfloat16 in A, qwen-7b float32 in B" in warning


def test_each_deciding_setting_is_named_with_both_values(make_run) -> None:
    other = RunConfig(settings=Settings(votes=3), seed=1, long_context="truncate",
                      engine=JudgeOptions(batch_size=4, extra={"dtype": "bfloat16"}))
    a, b = pair(make_run, record(), record(other))
    warnings = compare_runs(a, b).warnings
    assert sorted(warnings) == sorted([
        "judge setting votes differs: 1 in A, 3 in B",
        "seed differs: 0 in A, 1 in B",
        "long_context differs: 'skip' in A, 'truncate' in B",
        "engine option batch_size differs: 16 in A, 4 in B",
        "engine option dtype differs: None in A, 'bfloat16' in B",
    ])


def test_settings_that_decide_no_answer_are_not_compared(make_run) -> None:
    ray = RunConfig(engine=JudgeOptions("ray-vllm"))
    quiet = RunConfig(on_missing="nan", chunk_size=7, engine=JudgeOptions("ray-vllm", ray_address="10.0.0.1:6379"))
    a, b = pair(make_run, record(ray), record(quiet))
    assert compare_runs(a, b).warnings == []


def test_a_judge_that_is_not_batch_invariant_asks_for_one_shared_cache(make_run) -> None:
    a, b = pair(make_run, record(), record(invariant=False))
    (warning,) = compare_runs(a, b).warnings
    assert warning.startswith("B's judge is not batch-invariant (bf16 batches)")
    assert "one shared --cache FILE" in warning
    result = gate(b, baseline=a, no_worse=["faithfulness"])
    assert result.passed and len(result.warnings) == 1  # a warning fails nothing
    assert result.warnings[0].startswith("the run's judge is not batch-invariant")


def test_runs_that_shared_one_cache_need_no_invariance_warning(make_run, tmp_path) -> None:
    shared = str(tmp_path / "shared.sqlite")
    a, b = pair(make_run, record(invariant=False, cache=shared), record(invariant=False, cache=shared))
    assert compare_runs(a, b).warnings == []
    a, b = pair(make_run, record(invariant=False, cache=shared), record(invariant=False, cache=shared + "2"))
    assert len(compare_runs(a, b).warnings) == 2


def test_a_run_not_written_by_evaluate_says_so(make_run) -> None:
    old = {"judge": "judge-x float32"}  # no config, no invariance: not written by evaluate
    a, b = pair(make_run, old, record())
    warnings = compare_runs(a, b).warnings
    assert any("settings that decide answers are not recorded for A" in w for w in warnings)
    assert len(warnings) == 1
    no_judge = pair(make_run, {"judge": None}, {"judge": None, "config": RunConfig().to_dict()})
    assert compare_runs(*no_judge).warnings == ["the settings that decide answers are not recorded for A (a run "
                                                "not written by evaluate), so they were not compared"]


def test_warnings_reach_the_json_html_and_text(make_run) -> None:
    a, b = pair(make_run, record(), record(replace(RunConfig(), seed=5), invariant=False))
    c = compare_runs(a, b)
    assert comparison_to_dict(c)["warnings"] == c.warnings and len(c.warnings) == 2
    text = format_comparison(c)
    assert "Warnings (the runs may differ by more than the change):" in text
    assert all(f"  - {w}" in text for w in c.warnings)
    assert "seed differs: 0 in A, 5 in B" in render_comparison(c)


def test_the_commands_print_warnings_and_keep_their_exit_codes(make_run, cli, capsys, tmp_path) -> None:
    a, b = pair(make_run, record(), record(judge="another judge"))
    out = tmp_path / "c.json"
    assert cli(["compare", str(a), str(b), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "Warnings" in printed and "the judges differ" in printed
    assert json.loads(out.read_text())["warnings"] == compare_runs(a, b).warnings
    assert cli(["gate", str(b), "--baseline", str(a), "--no-worse", "faithfulness"]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == "gate passed"
    assert captured.err.startswith("warning: the judges differ") and "another judge in the run" in captured.err
    assert cli(["gate", str(a), "--baseline", str(b), "--no-worse", "faithfulness"]) == 1  # A is worse: fails
    err = capsys.readouterr().err
    assert "detectably worse" in err and "warning: the judges differ" in err


def test_a_judge_mode_recorded_only_off_its_default_is_compared_with_the_default(make_run) -> None:
    small = RunConfig(settings=Settings(judge_mode="small"))
    assert "judge_mode" not in record()["config"]["settings"]  # the default run records what it did before
    a, b = pair(make_run, record(), record(small))
    assert compare_runs(a, b).warnings == ["judge setting judge_mode differs: 'ragas' in A, 'small' in B"]
