"""Diagnosis: the interpretation tables of the seed "ragas-metrics-source-analysis" as rules.

A rule reads the means of the answerable stratum (unanswerable samples are scored apart, see
``strata``) and fires only when the metrics it needs were computed. It fires on the run when the
means meet its condition, or on a subgroup when its condition holds on the scores of at least
``SAMPLE_SHARE`` of the samples (and ``MIN_SAMPLES``), which a mean over a mixed data set can hide.

Thresholds: a score is high at ``HIGH`` (0.7) or more and low under ``LOW`` (0.5); between the two
nothing fires. A rule compares each mean and score as it is printed, rounded to ``DIGITS`` (2) decimals, so
0.49999999995 (Ragas' 1e-10 epsilon on a 0.5) is 0.50 on both counts and not low. Noise sensitivity is a
share of wrong statements, where 0 is ideal: high at ``NOISE_HIGH`` (0.25) or more, low under ``NOISE_LOW``
(0.1). "Retrieval" is the best of the retrieval metrics computed (context precision and recall, Precision@K,
context entity recall, Ragas' context relevance, the id-based metrics), so retrieval is low only when all of
them are. The single-rating metrics (response groundedness, answer accuracy) and answer correctness have a
rule of their own, ``grounded_but_wrong``, the counterpart of ``wrong_documents``.

The agent rules read the agent metrics (tool calls, goal accuracy, topic adherence) with the same
thresholds. A family of rules (RAG or agent) counts for a run only when the run computed one of its
metrics: a RAG run is not told of agent rules it could not check, nor the other way round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from localeval.metrics.registry import base_name, metrics_in_role
from localeval.report.runs import Run, RunLike, as_run

HIGH, LOW = 0.7, 0.5
NOISE_HIGH, NOISE_LOW = 0.25, 0.1
SAMPLE_SHARE, MIN_SAMPLES = 0.2, 2
DIGITS = 2  # decimals a value is printed with, and compared at

CP, PK, CR = "context_precision", "precision_at_k", "context_recall"
FA, FC, AR = "faithfulness", "factual_correctness", "answer_relevancy"
NS, NSI = "noise_sensitivity", "noise_sensitivity_irrelevant"
RG, AC, AA = "response_groundedness", "answer_correctness", "answer_accuracy"
RETRIEVAL = "retrieval"
# The registry's retrieval metrics; the three the rules name first, in the order the evidence shows them.
RETRIEVAL_METRICS = (CP, CR, PK, *(m for m in metrics_in_role("retrieval") if m not in (CP, CR, PK)))
TA, TF, TOP = "tool_call_accuracy", "tool_call_f1", "topic_adherence"
GR, GW = "agent_goal_accuracy_with_reference", "agent_goal_accuracy_without_reference"
AGENT_METRICS = (TA, TF, GR, GW, TOP)

Values = Mapping[str, float]


def _hi(v: Values, *roles: str) -> bool:
    return all(v[r] >= HIGH for r in roles)


def _lo(v: Values, *roles: str) -> bool:
    return all(v[r] < LOW for r in roles)


def _any_hi(v: Values, *roles: str) -> bool:
    return any(v[r] >= HIGH for r in roles if r in v)


def _any_lo(v: Values, *roles: str) -> bool:
    return any(v[r] < LOW for r in roles if r in v)


def _noise_low(v: Values) -> bool:
    return all(v[r] < NOISE_LOW for r in (NS, NSI) if r in v)


@dataclass(frozen=True)
class Rule:
    """``needs``: groups of metrics, each group satisfied by any one of its members."""

    id: str
    title: str
    needs: tuple[tuple[str, ...], ...]
    condition: str  # the thresholds, as a reader checks them
    holds: Callable[[Values], bool]
    advice: str
    also: tuple[str, ...] = ()  # shown in the evidence when computed, not needed
    family: str = "rag"  # "rag" or "agent": the rules a run is told of are those of the families it computed

    def applies(self, computed: set[str] | Mapping[str, float]) -> bool:
        """Whether every group of needed metrics has a member in ``computed``."""
        return all(any(r in computed for r in group) for group in self.needs)


RULES: tuple[Rule, ...] = (
    Rule("topk_padded", "The right chunk ranks high, but the top-k is padded with irrelevant chunks",
         ((CP,), (PK,)), f"{CP} >= {HIGH} and {PK} < {LOW}", lambda v: _hi(v, CP) and _lo(v, PK),
         "Lower top-k, or raise the reranker's cutoff."),
    Rule("retriever_weak", "A problem with the retriever itself", ((CP,), (PK,)),
         f"{CP} < {LOW} and {PK} < {LOW}", lambda v: _lo(v, CP, PK),
         "Check the embedding model and the index; add a reranker."),
    Rule("recall_short", "Relevant chunks rank first, but evidence the answer needs is missing",
         ((CP,), (CR,)), f"{CP} >= {HIGH} and {CR} < {LOW}", lambda v: _hi(v, CP) and _lo(v, CR),
         "top-k is likely too small, or chunking splits the evidence: check the documents and "
         "the chunking strategy."),
    Rule("retrieval_broken", "Retrieval misses and misranks the evidence", ((CP,), (CR,)),
         f"{CP} < {LOW} and {CR} < {LOW}", lambda v: _lo(v, CP, CR),
         "The retrieval pipeline as a whole needs a check: embeddings, index, chunking, top-k."),
    Rule("wrong_documents", "Faithful to the retrieved documents, but the answer is wrong", ((FA,), (FC,)),
         f"{FA} >= {HIGH} and {FC} < {LOW}", lambda v: _hi(v, FA) and _lo(v, FC),
         "A retrieval problem: the documents were wrong or outdated, or the wrong ones were "
         "retrieved. Check context recall and the corpus.", (CR, CP)),
    Rule("grounded_but_wrong", "Rated grounded in the retrieved documents, but the answer is wrong",
         ((RG,), (AC, AA)), f"{RG} >= {HIGH} and ({AC} < {LOW} or {AA} < {LOW})",
         lambda v: _hi(v, RG) and _any_lo(v, AC, AA),
         "The single-rating view of wrong_documents: the answer follows documents that are wrong, outdated "
         "or off the question. Check context recall or context entity recall, and the corpus.",
         (FA, FC, CR, "context_entity_recall")),
    Rule("own_knowledge", "Right answers that the retrieved documents do not support", ((FA,), (FC,)),
         f"{FA} < {LOW} and {FC} >= {HIGH}", lambda v: _lo(v, FA) and _hi(v, FC),
         "The model answers from its own knowledge and ignores the retrieval results: tighten the "
         "prompt to answer from the context only, and check context recall.", (CR,)),
    Rule("plausible_but_wrong", "Sounds relevant, but the content is wrong or unsupported",
         ((AR,), (FA, FC)), f"{AR} >= {HIGH} and ({FA} < {LOW} or {FC} < {LOW})",
         lambda v: _hi(v, AR) and _any_lo(v, FA, FC),
         "The answers address the question but their facts are wrong: the most dangerous failure. "
         "Read the unsupported statements of the worst samples."),
    Rule("off_point", "Misses the point of the question, or dodges it", ((AR,), (FA, FC)),
         f"{AR} < {LOW} and ({FA} < {LOW} or {FC} < {LOW})", lambda v: _lo(v, AR) and _any_lo(v, FA, FC),
         "Check the generation prompt, and whether the questions are answerable from the corpus "
         "(mark those that are not with answerable: false)."),
    Rule("irrelevant_leak", "Irrelevant chunks are retrieved and their content leaks into answers",
         ((NSI,),), f"{NSI} >= {NOISE_HIGH}", lambda v: v[NSI] >= NOISE_HIGH,
         "A retrieval-cleanliness problem: check Precision@K and context precision first.", (PK, CP)),
    Rule("relevant_noise", "Relevant chunks are retrieved, but their details are over-generalized",
         ((NS,),), f"{NS} >= {NOISE_HIGH}", lambda v: v[NS] >= NOISE_HIGH,
         "Remove noise from the documents: check the chunking strategy, or the generation prompt's "
         "handling of conditions and details."),
    Rule("pure_hallucination", "Wrong answers not traceable to any retrieved chunk",
         ((NS, NSI), (FA, FC)), f"noise sensitivity < {NOISE_LOW} and ({FA} < {LOW} or {FC} < {LOW})",
         lambda v: _noise_low(v) and _any_lo(v, FA, FC),
         "Pure hallucination: the generator makes claims no chunk supports. Constrain it to the "
         "context, lower the temperature, or use a stronger generator."),
    Rule("made_up_without_retrieval", "Retrieval found nothing relevant, so the generator made things up",
         ((RETRIEVAL,), (FA,)), f"every retrieval metric < {LOW} and {FA} < {LOW}",
         lambda v: _lo(v, RETRIEVAL, FA), "Start by checking retrieval.", RETRIEVAL_METRICS),
    Rule("calls_right_goal_missed", "The agent makes the expected tool calls, but the user's goal is not reached",
         ((TA, TF), (GR, GW)), f"({TA} or {TF}) >= {HIGH} and ({GR} or {GW}) < {LOW}",
         lambda v: _any_hi(v, TA, TF) and _any_lo(v, GR, GW),
         "The tools are called right, but their results are misread or dropped: read the tool outputs and the "
         "last AI turns of the failing conversations.", family="agent"),
    Rule("goal_by_other_calls", "The goal is reached, but not with the reference tool calls", ((TA, TF), (GR, GW)),
         f"({GR} or {GW}) >= {HIGH} and ({TA} or {TF}) < {LOW}", lambda v: _any_hi(v, GR, GW) and _any_lo(v, TA, TF),
         "Either the reference calls are stricter than the task needs (try tool_call_accuracy:strict_order=false "
         "or :arg_comparison=levenshtein), or the agent takes detours: read the calls beside the reference ones.",
         family="agent"),
    Rule("calls_out_of_order", "The expected tool calls are made, in another order", ((TF,), (TA,)),
         f"{TF} >= {HIGH} and {TA} < {LOW}", lambda v: _hi(v, TF) and _lo(v, TA),
         "If the order of these calls does not matter, score tool_call_accuracy:strict_order=false; if it does, "
         "the agent plans its steps in the wrong order.", family="agent"),
    Rule("off_topic", "The assistant strays from its topics, or refuses its own", ((TOP,),), f"{TOP} < {LOW}",
         lambda v: _lo(v, TOP), "Score topic_adherence:mode=precision (answers off the reference topics) and "
         "mode=recall (refusals on them) to tell which, then tighten the assistant's scope.", family="agent"),
)


def _families(computed: set[str] | Mapping[str, str]) -> set[str]:
    """The rule families a run computed metrics of."""
    agent = any(m in computed for m in AGENT_METRICS)
    return ({"agent"} if agent else set()) | ({"rag"} if any(m not in AGENT_METRICS for m in computed) else set())


def rules_for(run: RunLike) -> tuple[Rule, ...]:
    """The rules a run is told of: those of the families (RAG, agent) whose metrics it computed."""
    families = _families(columns(as_run(run))) or {"rag"}
    return tuple(rule for rule in RULES if rule.family in families)


@dataclass(frozen=True)
class Finding:
    """A rule that fired: on the run's means, or on a subgroup of samples (``scope``)."""

    rule: str
    title: str
    scope: str  # "run" or "samples"
    condition: str
    evidence: dict[str, float]  # metric -> mean over the answerable stratum
    advice: str
    samples: list[str] = field(default_factory=list)  # ids where the rule holds on their own scores
    n: int = 0  # samples that have every needed score


def columns(run: Run) -> dict[str, str]:
    """Role (base metric name) -> the run's metric; the plain name wins over one with options."""
    out: dict[str, str] = {}
    for name in run.metric_names:
        role = base_name(name)
        if role not in out or name == role:
            out[role] = name
    return out


def _with_retrieval(values: dict[str, float]) -> dict[str, float]:
    """The values as printed (rounded to ``DIGITS``), and the best retrieval metric's as ``retrieval``."""
    values = {k: round(v, DIGITS) for k, v in values.items()}
    present = [values[m] for m in RETRIEVAL_METRICS if m in values]
    return {**values, RETRIEVAL: max(present)} if present else values


def _computed(cols: Mapping[str, str]) -> set[str]:
    return set(cols) | ({RETRIEVAL} if any(m in cols for m in RETRIEVAL_METRICS) else set())


def unchecked_rules(run: RunLike) -> list[str]:
    """Ids of the rules whose metrics the run did not compute."""
    computed = _computed(columns(as_run(run)))
    return [rule.id for rule in rules_for(run) if not rule.applies(computed)]


def needs_text(rule: Rule) -> str:
    """The metrics a rule needs, in words: ``faithfulness and (factual_correctness or answer_correctness)``."""
    def group(roles: tuple[str, ...]) -> str:
        if roles == (RETRIEVAL,):
            return f"a retrieval metric ({', '.join(RETRIEVAL_METRICS[:3])}, ...)"
        return roles[0] if len(roles) == 1 else "(" + " or ".join(roles) + ")"

    return " and ".join(group(g) for g in rule.needs)


def diagnose(run: RunLike) -> list[Finding]:
    """Every rule whose metrics were computed and whose condition holds, in RULES order."""
    r = as_run(run)
    cols = columns(r)
    means = {role: m for role, name in cols.items()
             if (m := r.mean(name, answerable_only=True)) is not None}
    run_values = _with_retrieval(means)
    per_sample: list[tuple[str, dict[str, float]]] = []
    for sample in r.samples:
        if sample.answerable is False:
            continue
        vals = {role: sc.value for role, name in cols.items()
                if (sc := sample.metrics.get(name)) is not None and sc.value is not None}
        per_sample.append((sample.id, _with_retrieval(vals)))
    computed = _computed(cols)
    findings = []
    for rule in RULES:
        if not rule.applies(computed):
            continue
        scored = [(i, v) for i, v in per_sample if rule.applies(v)]
        hits = [i for i, v in scored if rule.holds(v)]
        on_run = rule.applies(run_values) and rule.holds(run_values)
        on_samples = len(hits) >= max(MIN_SAMPLES, SAMPLE_SHARE * len(scored))
        if not (on_run or on_samples):
            continue
        shown = [role for group in rule.needs for role in group] + list(rule.also)
        evidence = {cols[role]: run_values[role] for role in dict.fromkeys(shown)
                    if role in cols and role in run_values}
        findings.append(Finding(rule.id, rule.title, "run" if on_run else "samples", rule.condition,
                                evidence, rule.advice, hits, len(scored)))
    return findings


def format_unchecked(run: RunLike) -> str:
    """The rules the run's metrics could not check, each with the metrics it needs; "" when every rule was."""
    ids = set(unchecked_rules(run))
    if not ids:
        return ""
    lines = [f"Not checked: {len(ids)} of {len(rules_for(run))} rules, for want of the metrics they need (add them "
             "to evaluate --metrics to check them; localeval metrics lists every metric):"]
    lines += [f"  [{rule.id}] needs {needs_text(rule)}" for rule in RULES if rule.id in ids]
    return "\n".join(lines)


def diagnosis_text(run: RunLike) -> str:
    """What ``localeval diagnose`` prints: the findings, then the rules left unchecked and what they need."""
    r = as_run(run)
    checked = len(rules_for(r)) - len(unchecked_rules(r))
    parts = [format_findings(diagnose(r), checked=checked, of=len(rules_for(r))), format_unchecked(r)]
    return "\n\n".join(p for p in parts if p)


def format_findings(findings: list[Finding], *, max_ids: int = 8, checked: int | None = None,
                    of: int = len(RULES)) -> str:
    """Plain text, one block per finding; ``checked``: how many of ``of`` rules the run's metrics could check."""
    if not findings:
        thresholds = (f"thresholds: high >= {HIGH}, low < {LOW}; noise sensitivity high >= {NOISE_HIGH}, "
                      f"low < {NOISE_LOW}")
        if checked == 0:
            return "No diagnosis rule could be checked: each needs metrics this run did not compute."
        if checked is None or checked == of:
            return f"No diagnosis rule fired ({thresholds})."
        return (f"No diagnosis rule fired; this run's metrics could check {checked} of the {of} rules "
                f"({thresholds}).")
    blocks = []
    for f in findings:
        where = "on the run's means" if f.scope == "run" else "on a subgroup of samples"
        ids = ", ".join(f.samples[:max_ids]) + (", ..." if len(f.samples) > max_ids else "")
        evidence = ", ".join(f"{m} {v:.{DIGITS}f}" for m, v in f.evidence.items())
        blocks.append("\n".join([
            f"[{f.rule}] {f.title} ({where})",
            f"  when:     {f.condition}",
            f"  evidence: {evidence}",
            f"  samples:  holds on {len(f.samples)} of {f.n}" + (f" ({ids})" if ids else ""),
            f"  advice:   {f.advice}",
        ]))
    return "\n\n".join(blocks)
