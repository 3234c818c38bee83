"""Every metric's one definition, in one table: its steps, the sample fields it needs, its options, and what
reports need to know; Ragas' other names for some of them; the metrics a run scores by default."""

from __future__ import annotations

from typing import Any

from localeval.metrics.agents import (
    MODES,
    agent_goal_accuracy_with_reference,
    agent_goal_accuracy_without_reference,
    topic_adherence,
)
from localeval.metrics.answer_correctness import answer_correctness, semantic_similarity
from localeval.metrics.answer_relevancy import answer_relevancy
from localeval.metrics.context_precision import context_precision, context_utilization, precision_at_k
from localeval.metrics.context_recall import context_recall
from localeval.metrics.definition import MetricDef
from localeval.metrics.entity_recall import context_entity_recall
from localeval.metrics.factual_correctness import factual_correctness
from localeval.metrics.faithfulness import faithfulness
from localeval.metrics.faithfulness_small import faithfulness_small
from localeval.metrics.instance_rubrics import instance_rubrics
from localeval.metrics.noise_sensitivity import noise_sensitivity
from localeval.metrics.ratings import answer_accuracy, ragas_context_relevance, response_groundedness
from localeval.metrics.retrieval import hit_rate, id_context_precision, id_context_recall, mrr, ndcg
from localeval.metrics.sql_equivalence import sql_semantic_equivalence
from localeval.metrics.string_contexts import non_llm_context_precision, non_llm_context_recall
from localeval.metrics.strings import (
    MEASURES,
    ROUGE_MODES,
    ROUGE_TYPES,
    bleu_score,
    chrf_score,
    exact_match,
    non_llm_string_similarity,
    quoted_spans_alignment,
    rouge_score,
    string_presence,
)
from localeval.metrics.summary_score import summary_score
from localeval.metrics.tool_calls import ARG_COMPARISONS, tool_call_accuracy, tool_call_f1

Q, CTX, RESP, REF = "user_input", "retrieved_contexts", "response", "reference"
CONV, TOPIC_REFS = "conversation", "reference_topics"
TOOL_CALLS = (CONV, "reference_tool_calls")
TOOL_FACTS: dict[str, Any] = {"judge": False, "trace": "tool_calls", "role": None}
IDS = ("retrieved_context_ids", "reference_context_ids")

FAITHFUL_WORDS = ("response statements checked against the contexts", "supported", "unsupported")
RECALL_WORDS = ("reference statements checked against the contexts", "attributed", "not in the contexts")
IDS_FACTS: dict[str, Any] = {"judge": False, "trace": "ids", "role": "retrieval"}
REF_CTX = "reference_contexts"
PAIR = (REF, RESP)
NO_MODEL: dict[str, Any] = {"judge": False}
STRING_CONTEXTS = {"distance_measure": "levenshtein", "threshold": 0.5}
QUOTE_WORDS = ("quoted spans of the response, looked up in the contexts", "found", "not in the contexts")
REF_CTX_WORDS = ("reference contexts, each against its closest retrieved context", "retrieved", "missed")

METRICS: dict[str, MetricDef] = {
    "context_precision": MetricDef(context_precision, (Q, CTX, REF), (CTX,),
                                   summary="average precision of chunks judged useful for the reference",
                                   trace="chunks", role="retrieval"),
    # judged against the response, not a reference: the diagnosis leaves it out
    "context_utilization": MetricDef(context_utilization, (Q, CTX, RESP), (CTX,),
                                     summary="context precision judged against the response", trace="chunks"),
    "precision_at_k": MetricDef(precision_at_k, (Q, CTX, REF), (CTX,), {"k": None},
                                summary="share of the top-k chunks judged useful", trace="chunks", role="retrieval"),
    "context_recall": MetricDef(context_recall, (Q, CTX, REF), (CTX,),
                                summary="share of reference statements the contexts support",
                                trace="statements", trace_words=RECALL_WORDS, role="retrieval"),
    "faithfulness": MetricDef(faithfulness, (Q, CTX, RESP), (CTX,),
                              summary="share of response statements the contexts support",
                              trace="statements", trace_words=FAITHFUL_WORDS, role="generation",
                              modes={"small": faithfulness_small}, mode_embedder=True),
    "answer_relevancy": MetricDef(answer_relevancy, (Q, RESP), (), {"strictness": 3, "empty": "zero"},
                                  {"empty": ("zero", "nan")}, embedder=True,
                                  summary="cosine of generated questions to the input", trace="questions",
                                  role="generation"),
    "factual_correctness": MetricDef(
        factual_correctness, (RESP, REF), (),
        {"mode": "f1", "beta": 1.0, "atomicity": "low", "coverage": "low", "empty": "zero"},
        {"mode": ("f1", "precision", "recall"), "atomicity": ("low", "high"), "coverage": ("low", "high"),
         "empty": ("zero", "nan")},
        summary="claim-level precision/recall/F-beta of response vs reference", trace="claims",
        verdicts_key="response_verdicts", role="generation"),
    "noise_sensitivity": MetricDef(noise_sensitivity, (Q, CTX, RESP, REF), (CTX,),
                                   {"mode": "relevant"}, {"mode": ("relevant", "irrelevant")},
                                   summary="wrong statements supported by relevant chunks", trace="noise",
                                   higher_is_better=False, role="generation"),
    "context_entity_recall": MetricDef(context_entity_recall, (CTX, REF), (CTX,),
                                       summary="share of the reference's named entities the contexts name",
                                       role="retrieval"),
    "context_relevance": MetricDef(ragas_context_relevance, (Q, CTX), (CTX,),
                                   summary="two judges rate the contexts' relevance to the question (0-2)",
                                   role="retrieval"),
    "answer_accuracy": MetricDef(answer_accuracy, (Q, RESP, REF), (),
                                 summary="two judges rate the response against the reference (0/2/4)",
                                 role="generation"),
    "response_groundedness": MetricDef(response_groundedness, (RESP, CTX), (CTX,),
                                       summary="two judges rate how far the contexts support the response (0-2)",
                                       role="generation"),
    "answer_correctness": MetricDef(answer_correctness, (Q, RESP, REF), (), {"beta": 1.0, "weight": 0.25},
                                    embedder=True, trace="claims", verdicts_key="response_verdicts",
                                    summary="statement F-beta vs the reference, weighted with semantic similarity",
                                    role="generation"),
    "semantic_similarity": MetricDef(semantic_similarity, (RESP, REF), (), {"threshold": None}, judge=False,
                                     embedder=True, summary="cosine of response and reference embeddings"),
    "id_context_precision": MetricDef(id_context_precision, IDS, IDS, summary="retrieved ids that are reference ids",
                                      **IDS_FACTS),
    "id_context_recall": MetricDef(id_context_recall, IDS, IDS, summary="reference ids that were retrieved",
                                   **IDS_FACTS),
    "hit_rate": MetricDef(hit_rate, IDS, IDS, {"k": None}, summary="any reference id in top k", **IDS_FACTS),
    "mrr": MetricDef(mrr, IDS, IDS, {"k": None}, summary="1/rank of the first reference id", **IDS_FACTS),
    "ndcg": MetricDef(ndcg, IDS, IDS, {"k": None}, summary="NDCG at k, binary relevance", **IDS_FACTS),
    "exact_match": MetricDef(exact_match, PAIR, summary="1 when the response equals the reference", **NO_MODEL),
    "string_presence": MetricDef(string_presence, PAIR, summary="1 when the reference occurs in the response",
                                 **NO_MODEL),
    "non_llm_string_similarity": MetricDef(non_llm_string_similarity, PAIR, (), {"distance_measure": "levenshtein"},
                                           {"distance_measure": MEASURES},
                                           summary="1 minus the normalised edit distance to the reference",
                                           **NO_MODEL),
    "bleu_score": MetricDef(bleu_score, PAIR, summary="BLEU of the response against the reference (sacrebleu)",
                            **NO_MODEL),
    "rouge_score": MetricDef(rouge_score, PAIR, (), {"rouge_type": "rougeL", "mode": "fmeasure"},
                             {"rouge_type": ROUGE_TYPES, "mode": ROUGE_MODES},
                             summary="ROUGE of the response against the reference (rouge-score)", **NO_MODEL),
    "chrf_score": MetricDef(chrf_score, PAIR, summary="character n-gram F-score (chrF) against the reference "
                            "(sacrebleu)", **NO_MODEL),
    "quoted_spans_alignment": MetricDef(quoted_spans_alignment, (RESP, CTX), (), {"casefold": "true",
                                        "min_span_words": 3}, {"casefold": ("true", "false")},
                                        summary="share of the response's quoted spans found in the contexts",
                                        trace="statements", trace_words=QUOTE_WORDS, role="generation",
                                        **NO_MODEL),
    "non_llm_context_precision": MetricDef(
        non_llm_context_precision, (CTX, REF_CTX), (REF_CTX,), STRING_CONTEXTS,
        {"distance_measure": MEASURES}, summary="average precision of chunks similar to a reference context",
        trace="chunks", role="retrieval", **NO_MODEL),
    "non_llm_context_recall": MetricDef(
        non_llm_context_recall, (CTX, REF_CTX), (CTX, REF_CTX), STRING_CONTEXTS, {"distance_measure": MEASURES},
        summary="share of reference contexts similar to a retrieved chunk", trace="statements",
        trace_words=REF_CTX_WORDS, role="retrieval", **NO_MODEL),
    # the last judged single-turn metrics: their steps in summary_score.py, instance_rubrics.py, sql_equivalence.py
    "summary_score": MetricDef(summary_score, ("reference_contexts", "response"), ("reference_contexts",),
                               {"length_penalty": "true", "coeff": 0.5}, {"length_penalty": ("true", "false")},
                               summary="key-fact questions the summary answers, blended with its brevity",
                               trace="summary", role="generation"),
    "instance_specific_rubrics": MetricDef(instance_rubrics, ("rubrics",),
                                           summary="the level the judge picks on the sample's own rubric",
                                           trace="rubric"),
    "sql_semantic_equivalence": MetricDef(sql_semantic_equivalence, ("response", "reference"),
                                          summary="1 when the judge finds both SQL queries return the same",
                                          trace="sql"),
    # the agent metrics that compare tool calls, no model
    "tool_call_accuracy": MetricDef(
        tool_call_accuracy, TOOL_CALLS, (), {"strict_order": "true", "arg_comparison": "exact"},
        {"strict_order": ("true", "false"), "arg_comparison": ARG_COMPARISONS},
        summary="tool calls made vs the reference, pair by pair: names in line, arguments compared", **TOOL_FACTS),
    "tool_call_f1": MetricDef(tool_call_f1, TOOL_CALLS, summary="F1 of the tool calls made vs the reference calls "
                              "(name and arguments exact, as sets)", **TOOL_FACTS),
    # the agent metrics the judge reads a conversation for
    "agent_goal_accuracy_with_reference": MetricDef(
        agent_goal_accuracy_with_reference, (CONV, REF),
        summary="1 when the conversation's end state meets the reference outcome (judged)", trace="goal"),
    "agent_goal_accuracy_without_reference": MetricDef(
        agent_goal_accuracy_without_reference, (CONV,),
        summary="1 when the conversation's end state meets the user's inferred goal (judged)", trace="goal"),
    "topic_adherence": MetricDef(
        topic_adherence, (CONV, TOPIC_REFS), (TOPIC_REFS,), {"mode": "f1"}, {"mode": MODES},
        summary="F1/precision/recall of topics answered within the reference topics", trace="topics"),
}
ALIASES: dict[str, tuple[str, dict[str, Any]]] = {
    "response_relevancy": ("answer_relevancy", {}),
    "noise_sensitivity_irrelevant": ("noise_sensitivity", {"mode": "irrelevant"}),
    "noise_sensitivity_relevant": ("noise_sensitivity", {"mode": "relevant"}),
    "context_precision_without_reference": ("context_utilization", {}),
    "non_llm_context_precision_with_reference": ("non_llm_context_precision", {}),  # Ragas' name
    "string_present": ("string_presence", {}),  # Ragas' name for StringPresence's score
    "instance_rubrics": ("instance_specific_rubrics", {}),  # Ragas' legacy name
    "agent_goal_accuracy": ("agent_goal_accuracy_with_reference", {}),  # Ragas' AgentGoalAccuracy
}

DEFAULT_METRICS = (
    "context_precision",
    "context_recall",
    "faithfulness",
    "answer_relevancy",
    "factual_correctness",
    "noise_sensitivity",
)
