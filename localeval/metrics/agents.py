"""The agent metrics the judge reads a conversation for: agent goal accuracy and topic adherence.

The arithmetic and edge cases are Ragas 0.4.3's (``collections.AgentGoalAccuracyWithReference``,
``...WithoutReference``, ``TopicAdherence``):

* goal accuracy: one ask infers the user's goal and the end state from the transcript (the same ask for
  both metrics, so a run of both asks it once), a second compares the desired outcome (the reference, or
  the inferred goal) with the end state; the score is that 0/1 verdict. An empty reference is NaN
  (Ragas raises).
* topic adherence: the judge lists the topics of the human's turns (none: NaN, ``no_topics``); then, in
  one round, one ask per topic (did the AI refuse it?) and one that classifies every topic against the
  reference topics (exactly one boolean a topic, so Ragas' padding of a short list never happens).
  Answered and on topic is a true positive, answered and off topic a false positive, refused and on
  topic a false negative; precision, recall or F1, each with Ragas' ``eps = 1e-10``.
"""

from __future__ import annotations

from collections.abc import Sequence

from localeval.data.messages import transcript
from localeval.data.sample import Sample
from localeval.metrics.soft import note_soft
from localeval.nan import Nan
from localeval.prompts.agents import (
    GOAL,
    OUTCOME,
    REFUSED,
    TOPIC_MATCH,
    TOPICS,
    ConversationInput,
    OutcomeInput,
    RefusalInput,
    TopicMatchInput,
)
from localeval.steps import Ask, Steps

EPS = 1e-10  # Ragas' epsilon in every topic adherence formula
MODES = ("f1", "precision", "recall")


def _goal_accuracy(sample: Sample, trace: dict, with_reference: bool) -> Steps:
    conversation = sample.conversation
    if not conversation or (with_reference and not sample.reference):
        return Nan("missing_field")  # Ragas raises on an empty reference
    inferred = yield Ask(GOAL, ConversationInput(conversation=transcript(conversation)))
    desired = sample.reference if with_reference and sample.reference else inferred.user_goal
    judged = yield Ask(OUTCOME, OutcomeInput(desired=desired, arrived=inferred.end_state))
    verdict = int(judged.verdict)
    trace.update(user_goal=inferred.user_goal, end_state=inferred.end_state, desired=desired, verdict=verdict,
                 reason=judged.reason)
    note_soft(trace, lambda bits: float(bits[0]), [judged.verdict])
    return float(verdict)


def agent_goal_accuracy_with_reference(sample: Sample, trace: dict) -> Steps:
    """1.0 when the end state the judge infers from the conversation meets the reference outcome."""
    return (yield from _goal_accuracy(sample, trace, True))


def agent_goal_accuracy_without_reference(sample: Sample, trace: dict) -> Steps:
    """1.0 when the end state the judge infers meets the user's goal it infers from the same conversation."""
    return (yield from _goal_accuracy(sample, trace, False))


def adherence_score(answered: Sequence[bool], on_topic: Sequence[bool], mode: str = "f1") -> float:
    """Ragas' precision, recall or F1 of answered topics against on-topic ones, with ``eps`` in each formula.

    >>> adherence_score([True, True, False], [True, False, True], "precision")  # 1 / (1 + 1 + eps)
    0.499999999975
    >>> adherence_score([False], [False])  # nothing answered on topic: 0, not NaN
    0.0
    """
    pairs = list(zip(answered, on_topic, strict=True))
    tp = sum(1 for a, o in pairs if a and o)
    fp = sum(1 for a, o in pairs if a and not o)
    fn = sum(1 for a, o in pairs if not a and o)
    precision = tp / (tp + fp + EPS)
    recall = tp / (tp + fn + EPS)
    if mode == "precision":
        return precision
    if mode == "recall":
        return recall
    return 2 * (precision * recall) / (precision + recall + EPS)


def topic_adherence(sample: Sample, trace: dict, mode: str = "f1") -> Steps:
    """How far the AI answered the topics within the reference topics and refused the others."""
    conversation, reference = sample.conversation, sample.reference_topics
    if not conversation or not reference:
        return Nan("missing_field")  # Ragas raises on empty reference topics
    text = transcript(conversation)
    topics = list((yield Ask(TOPICS, ConversationInput(conversation=text))).topics)
    trace.update(topics=topics, answered=[], on_topic=[], reference_topics=list(reference))
    if not topics:
        return Nan("no_topics")  # Ragas: NaN
    *refusals, matched = yield [*(Ask(REFUSED, RefusalInput(conversation=text, topic=t)) for t in topics),
                                Ask(TOPIC_MATCH, TopicMatchInput(reference_topics=list(reference), topics=topics))]
    answered = [not r.refused for r in refusals]
    on_topic = [bool(v) for v in matched.on_topic]
    trace.update(answered=answered, on_topic=on_topic)
    return float(adherence_score(answered, on_topic, mode))
