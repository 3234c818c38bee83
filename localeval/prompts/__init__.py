"""Every prompt localeval sends to its judge, as data."""

from localeval.prompts.agents import AGENT_PROMPTS
from localeval.prompts.base import DEFAULT_SETTINGS, Prompt, Settings, Verdict
from localeval.prompts.check import CHECK, CheckInput, CheckOutput
from localeval.prompts.claims import CLAIM_PROMPTS, ClaimsInput, ClaimsOutput, claims_prompt
from localeval.prompts.context_precision import CONTEXT_USEFULNESS, UsefulnessInput
from localeval.prompts.context_recall import ATTRIBUTION, AttributionInput, AttributionOutput
from localeval.prompts.context_relevance import CONTEXT_RELEVANCE, RelevanceInput
from localeval.prompts.entities import ENTITIES, EntitiesInput, EntitiesOutput
from localeval.prompts.nli import NLI, NLIInput, NLIOutput
from localeval.prompts.question import QUESTION, QuestionInput, QuestionOutput
from localeval.prompts.ratings import RATING_PROMPTS, Rating
from localeval.prompts.rubrics import RUBRIC_SCORE, RubricInput, RubricScore
from localeval.prompts.sql import SQL_EQUIVALENCE, SqlInput, SqlVerdict
from localeval.prompts.statements import STATEMENTS, StatementsInput, StatementsOutput
from localeval.prompts.summary import SUMMARY_PROMPTS, AnswersInput, KeyphrasesInput, QuestionsInput

ALL_PROMPTS: tuple[Prompt, ...] = (
    STATEMENTS,
    NLI,
    CHECK,
    CONTEXT_USEFULNESS,
    ATTRIBUTION,
    QUESTION,
    *CLAIM_PROMPTS.values(),
    ENTITIES,
    *RATING_PROMPTS,
    *SUMMARY_PROMPTS,
    RUBRIC_SCORE,
    SQL_EQUIVALENCE,
    *AGENT_PROMPTS,
)

__all__ = [
    "AGENT_PROMPTS",
    "ALL_PROMPTS",
    "ATTRIBUTION",
    "CHECK",
    "CLAIM_PROMPTS",
    "CONTEXT_RELEVANCE",
    "CONTEXT_USEFULNESS",
    "DEFAULT_SETTINGS",
    "ENTITIES",
    "NLI",
    "QUESTION",
    "RATING_PROMPTS",
    "RUBRIC_SCORE",
    "SQL_EQUIVALENCE",
    "STATEMENTS",
    "SUMMARY_PROMPTS",
    "AnswersInput",
    "AttributionInput",
    "AttributionOutput",
    "CheckInput",
    "CheckOutput",
    "ClaimsInput",
    "ClaimsOutput",
    "EntitiesInput",
    "EntitiesOutput",
    "KeyphrasesInput",
    "NLIInput",
    "NLIOutput",
    "Prompt",
    "QuestionInput",
    "QuestionOutput",
    "QuestionsInput",
    "Rating",
    "RelevanceInput",
    "RubricInput",
    "RubricScore",
    "Settings",
    "SqlInput",
    "SqlVerdict",
    "StatementsInput",
    "StatementsOutput",
    "UsefulnessInput",
    "Verdict",
    "claims_prompt",
]
