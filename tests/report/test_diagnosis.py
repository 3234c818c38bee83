"""Each diagnosis rule fires on a case built for it and not on its neighbour across one threshold."""

from __future__ import annotations

import pytest

from localeval.report.diagnosis import RULES, Finding, diagnose, diagnosis_text, format_findings, unchecked_rules

CP, PK, CR = "context_precision", "precision_at_k", "context_recall"
FA, FC, AR = "faithfulness", "factual_correctness", "answer_relevancy"
NS, NSI = "noise_sensitivity", "noise_sensitivity_irrelevant"
TA, TF, TOP = "tool_call_accuracy", "tool_call_f1", "topic_adherence"
GR, GW = "agent_goal_accuracy_with_reference", "agent_goal_accuracy_without_reference"

# rule -> (its case, the neighbour: one number moved across a threshold); every sample scores the same.
CASES: dict[str, tuple[dict[str, float], dict[str, float]]] = {
    "topk_padded": ({CP: 0.9, PK: 0.3}, {CP: 0.9, PK: 0.6}),
    "retriever_weak": ({CP: 0.3, PK: 0.3}, {CP: 0.6, PK: 0.3}),
    "recall_short": ({CP: 0.9, CR: 0.3}, {CP: 0.9, CR: 0.8}),
    "retrieval_broken": ({CP: 0.3, CR: 0.3}, {CP: 0.3, CR: 0.6}),
    "wrong_documents": ({FA: 0.9, FC: 0.3}, {FA: 0.6, FC: 0.3}),
    "grounded_but_wrong": ({"response_groundedness": 0.9, "answer_correctness": 0.3},
                           {"response_groundedness": 0.6, "answer_correctness": 0.3}),
    "own_knowledge": ({FA: 0.3, FC: 0.9}, {FA: 0.3, FC: 0.6}),
    "plausible_but_wrong": ({AR: 0.9, FA: 0.3}, {AR: 0.9, FA: 0.8}),
    "off_point": ({AR: 0.3, FC: 0.3}, {AR: 0.6, FC: 0.3}),
    "irrelevant_leak": ({NSI: 0.4}, {NSI: 0.2}),
    "relevant_noise": ({NS: 0.4}, {NS: 0.2}),
    "pure_hallucination": ({NS: 0.05, FA: 0.3}, {NS: 0.15, FA: 0.3}),
    "made_up_without_retrieval": ({CP: 0.3, CR: 0.2, FA: 0.3}, {CP: 0.3, CR: 0.8, FA: 0.3}),
    "calls_right_goal_missed": ({TA: 0.9, GR: 0.2}, {TA: 0.6, GR: 0.2}),
    "goal_by_other_calls": ({GW: 0.8, TF: 0.3}, {GW: 0.8, TF: 0.5}),
    "calls_out_of_order": ({TF: 0.9, TA: 0.2}, {TF: 0.9, TA: 0.5}),
    "off_topic": ({TOP: 0.3}, {TOP: 0.5}),
}


def _run(make_run, name: str, means: dict[str, float], n: int = 5):
    return make_run(name, {m: [v] * n for m, v in means.items()})


def _fired(run) -> dict[str, Finding]:
    return {f.rule: f for f in diagnose(run)}


def test_every_rule_has_a_case() -> None:
    assert set(CASES) == {r.id for r in RULES}


@pytest.mark.parametrize("rule", list(CASES))
def test_rule_fires_on_its_case_and_not_on_its_neighbour(make_run, rule: str) -> None:
    case, neighbour = CASES[rule]
    fired = _fired(_run(make_run, "case", case))
    assert rule in fired
    finding = fired[rule]
    assert finding.scope == "run" and finding.n == 5 and len(finding.samples) == 5
    assert all(finding.evidence[m] == pytest.approx(v) for m, v in case.items())
    assert finding.advice and finding.condition
    assert rule not in _fired(_run(make_run, "neighbour", neighbour))


@pytest.mark.parametrize("rule", ["topk_padded", "wrong_documents", "plausible_but_wrong", "irrelevant_leak"])
def test_rule_needs_its_metrics(make_run, rule: str) -> None:
    case, _ = CASES[rule]
    for dropped in case:
        rest = {m: v for m, v in case.items() if m != dropped}
        if rest:
            assert rule not in _fired(_run(make_run, f"without_{dropped}", rest))
            assert rule in unchecked_rules(_run(make_run, f"u_{dropped}", rest))


def test_metric_names_with_options_count(make_run) -> None:
    run = make_run("opts", {FA: [0.9] * 3, "factual_correctness(mode=precision)": [0.2] * 3})
    finding = _fired(run)["wrong_documents"]
    assert finding.evidence == {FA: pytest.approx(0.9),
                                "factual_correctness(mode=precision)": pytest.approx(0.2)}


def test_a_subgroup_fires_when_the_mean_does_not(make_run) -> None:
    pk = [0.2, 0.2, 0.2, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9, 0.9]  # mean 0.69: not low
    finding = _fired(make_run("sub", {CP: [0.9] * 10, PK: pk}))["topk_padded"]
    assert finding.scope == "samples" and finding.samples == ["q1", "q2", "q3"]
    lone = [0.2, *([0.9] * 9)]
    assert "topk_padded" not in _fired(make_run("lone", {CP: [0.9] * 10, PK: lone}))


def test_unanswerable_samples_are_left_out(make_run) -> None:
    ar = [0.9, 0.9, 0.9, 0.0, 0.0]  # two honest refusals score 0
    run = make_run("strata", {AR: ar, FA: [0.3] * 5}, answerable=[True, None, True, False, False])
    finding = _fired(run)["plausible_but_wrong"]
    assert finding.evidence[AR] == pytest.approx(0.9) and finding.n == 3
    assert "off_point" not in _fired(run)


def test_text_and_command(make_run, cli, capsys) -> None:
    run = _run(make_run, "text", CASES["topk_padded"][0])
    text = format_findings(diagnose(run))
    assert "[topk_padded]" in text and "context_precision 0.90" in text and "Lower top-k" in text
    assert "No diagnosis rule fired" in format_findings([])
    assert cli(["diagnose", str(run)]) == 0
    assert "[topk_padded]" in capsys.readouterr().out


def test_the_rules_a_run_could_not_check_are_named_with_the_metrics_they_need(make_run, cli, capsys) -> None:
    run = _run(make_run, "two", {FA: 0.8, AR: 0.8})  # only plausible_but_wrong and off_point can be checked
    assert cli(["diagnose", str(run)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("No diagnosis rule fired; this run's metrics could check 2 of the 13 rules (thresholds")
    assert "Not checked: 11 of 13 rules, for want of the metrics they need" in out
    listed = [line.strip() for line in out.splitlines() if line.startswith("  [")]
    assert len(listed) == 11
    assert "[topk_padded] needs context_precision and precision_at_k" in listed
    assert "[grounded_but_wrong] needs response_groundedness and (answer_correctness or answer_accuracy)" in listed
    assert ("[made_up_without_retrieval] needs a retrieval metric (context_precision, context_recall, "
            "precision_at_k, ...) and faithfulness") in listed
    assert not any(rule in out for rule in ("[plausible_but_wrong]", "[off_point]"))


def test_a_run_no_rule_can_read_says_so(make_run) -> None:
    run = _run(make_run, "none", {"answer_similarity": 0.8})
    text = diagnosis_text(run)
    assert text.startswith("No diagnosis rule could be checked: each needs metrics this run did not compute.")
    assert "Not checked: 13 of 13 rules" in text
    every = _run(make_run, "every", {CP: 0.9, PK: 0.3, CR: 0.9, FA: 0.9, FC: 0.9, AR: 0.9, NS: 0.0, NSI: 0.0,
                                      "response_groundedness": 0.9, "answer_correctness": 0.9})
    assert "Not checked" not in diagnosis_text(every)


def test_an_agent_run_is_told_of_the_agent_rules_only(make_run) -> None:
    text = diagnosis_text(_run(make_run, "agent", {TA: 0.8, TF: 0.8}))
    assert "could check 1 of the 4 rules" in text and "Not checked: 3 of 4 rules" in text
    assert "[off_topic] needs topic_adherence" in text and "[topk_padded]" not in text
    both = diagnosis_text(_run(make_run, "both", {TA: 0.8, TF: 0.8, FA: 0.8}))
    assert "Not checked: 16 of 17 rules" in both


def test_a_rule_compares_a_value_as_it_prints_it(make_run) -> None:
    """Ragas' 1e-10 epsilon: a mean of 0.49999999995 prints 0.50, so it is not under 0.5 either."""
    edge = 0.5 - 5e-11
    run = make_run("edge", {CP: [edge, edge], FA: [0.3, 0.3]})
    assert "made_up_without_retrieval" not in {f.rule for f in diagnose(run)}
    below = make_run("below", {CP: [0.494, 0.494], FA: [0.3, 0.3]})  # 0.49: printed, and compared, as low
    [finding] = [f for f in diagnose(below) if f.rule == "made_up_without_retrieval"]
    assert finding.scope == "run" and len(finding.samples) == 2
    assert "context_precision 0.49" in format_findings([finding])


def test_every_finding_s_printed_evidence_meets_its_condition(make_run) -> None:
    for values in ([0.5 - 5e-11] * 3, [0.7 - 1e-12] * 3, [0.25 - 1e-12] * 3, [0.1 - 1e-12] * 3):
        run = make_run("near", {m: values for m in (CP, CR, PK, FA, FC, AR, NS)})
        for f in diagnose(run):
            printed = {m: float(f"{v:.2f}") for m, v in f.evidence.items()}
            rule = next(r for r in RULES if r.id == f.rule)
            roles = {m.split("(")[0]: v for m, v in printed.items()}
            retrieval = [v for m, v in roles.items() if m in (CP, CR, PK)]
            roles.update({"retrieval": max(retrieval)} if retrieval else {})
            assert rule.holds(roles), (f.rule, printed)
