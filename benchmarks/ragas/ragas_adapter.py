"""A thin local judge for Ragas 0.4.3's collections metrics: transformers generates, we parse.

Runs only in ``benchmarks/.ragas-venv`` (made by ``bash benchmarks/ragas/setup_ragas.sh``), never in
localeval's environment. This is how a Ragas user runs a local model without a server: the metric
classes in ``ragas.metrics.collections`` accept only an ``InstructorBaseRagasLLM`` (two methods,
``generate`` and ``agenerate(prompt: str, response_model)``, returning the parsed pydantic object)
and a ``BaseRagasEmbedding`` (``embed_text``/``aembed_text``; the batch methods have defaults).
Ragas hands over one prompt string at a time and awaits each answer, so there is nothing to batch:
the adapter generates greedily with the model's chat template, one request at a time, and extracts
the first JSON object in the text that validates as the response model. Ragas' own defaults are
kept (``InstructorModelArgs``: max_tokens 1024, temperature 0.01, here greedy). An answer that does
not parse raises ``ParseError``; the runner turns any exception into NaN, as Ragas' executor does
with ``raise_exceptions=False``, and counts why.
"""

from __future__ import annotations

import json
import os
import time
import typing as t
from collections import defaultdict
from dataclasses import asdict, dataclass

os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")  # no analytics calls from an offline benchmark
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

from pydantic import BaseModel, ValidationError
from ragas.embeddings import HuggingFaceEmbeddings
from ragas.llms.base import InstructorBaseRagasLLM

M = t.TypeVar("M", bound=BaseModel)
DEFAULT_MAX_TOKENS = 1024  # ragas.llms.base.InstructorModelArgs.max_tokens


class ParseError(ValueError):
    """The judge's text held no JSON object that fits the metric's response model."""


@dataclass
class CallStats:
    """What the judge did for one metric."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0
    parse_errors: int = 0
    truncated: int = 0  # generations that hit max_tokens
    embed_texts: int = 0
    embed_seconds: float = 0.0


def first_object_end(text: str) -> int | None:
    """Index just past the first complete top-level JSON object in ``text``, or None while it is open."""
    depth, in_string, escaped = 0, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"' and depth:
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if not depth:
                return i + 1
    return None


def extract_json(text: str, response_model: type[M]) -> M:
    """The first JSON object in ``text`` that validates as ``response_model`` (chatter around it is fine)."""
    decoder = json.JSONDecoder()
    problem = "no JSON object in the answer"
    start = text.find("{")
    while start != -1:
        try:
            value, _ = decoder.raw_decode(text, start)
        except json.JSONDecodeError as error:
            problem = f"invalid JSON: {error.msg}"
        else:
            try:
                return response_model.model_validate(value)
            except ValidationError as error:
                problem = f"JSON does not fit {response_model.__name__}: {error.error_count()} error(s)"
        start = text.find("{", start + 1)
    raise ParseError(f"{problem}; answer began {text[:120]!r}")


class LocalTransformersLLM(InstructorBaseRagasLLM):
    """A local causal LM behind Ragas' instructor interface; counts calls and tokens per metric."""

    def __init__(self, model_dir: str, max_tokens: int = DEFAULT_MAX_TOKENS, threads: int | None = None,
                 device: str | None = None, json_stop: bool = True) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        if threads:
            torch.set_num_threads(threads)
        self.device = device or ("cuda" if torch.cuda.is_available() else "cpu")
        self.tokenizer = AutoTokenizer.from_pretrained(model_dir)
        dtype = torch.bfloat16 if self.device == "cuda" else torch.float32
        self.model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=dtype).to(self.device).eval()
        self.max_tokens = max_tokens
        # Stop once the first JSON object closes, as a JSON-mode server would; it only cuts chatter
        # after the object, which the parser ignores anyway (False: generate until EOS or max_tokens).
        self.json_stop = json_stop
        self.log: t.Callable[[str], None] | None = None  # called after each generation
        self.metric = "unknown"  # the runner sets the metric being scored, for the accounting
        self.stats: dict[str, CallStats] = defaultdict(CallStats)
        self.texts: list[tuple[str, str]] = []  # (metric, raw answer) of failed parses, for the report

    def complete(self, prompt: str) -> str:
        """Greedy generation for one prompt sent as the user turn (as InstructorLLM sends it)."""
        import torch

        stats = self.stats[self.metric]
        started = time.perf_counter()
        chat = self.tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
        )
        encoded = self.tokenizer(chat, return_tensors="pt", add_special_tokens=False).to(self.device)
        prompt_length = int(encoded["input_ids"].shape[1])
        stop = [_ObjectClosed(self.tokenizer, prompt_length)] if self.json_stop else []
        with torch.inference_mode():
            output = self.model.generate(
                **encoded, max_new_tokens=self.max_tokens, do_sample=False, stopping_criteria=stop,
                pad_token_id=self.tokenizer.pad_token_id or self.tokenizer.eos_token_id,
            )
        new = output[0, encoded["input_ids"].shape[1]:]
        stats.calls += 1
        stats.prompt_tokens += int(encoded["input_ids"].shape[1])
        stats.completion_tokens += int(new.shape[0])
        stats.truncated += int(new.shape[0] >= self.max_tokens)
        stats.seconds += time.perf_counter() - started
        if self.log is not None:
            self.log(f"  {self.metric}: {prompt_length} prompt + {int(new.shape[0])} completion tokens, "
                     f"{time.perf_counter() - started:.1f} s")
        return self.tokenizer.decode(new, skip_special_tokens=True)

    def generate(self, prompt: str, response_model: type[M]) -> M:
        text = self.complete(prompt)
        try:
            return extract_json(text, response_model)
        except ParseError:
            self.stats[self.metric].parse_errors += 1
            self.texts.append((self.metric, text[:400]))
            raise

    async def agenerate(self, prompt: str, response_model: type[M]) -> M:
        # Blocking on purpose: one local model serves one request at a time.
        return self.generate(prompt, response_model)


class _ObjectClosed:
    """A transformers stopping criterion: true once the generated text holds a complete JSON object."""

    def __init__(self, tokenizer: t.Any, prompt_length: int) -> None:
        self.tokenizer = tokenizer
        self.prompt_length = prompt_length

    def __call__(self, input_ids: t.Any, scores: t.Any, **kwargs: t.Any) -> t.Any:
        import torch

        text = self.tokenizer.decode(input_ids[0, self.prompt_length:], skip_special_tokens=True)
        done = first_object_end(text) is not None
        return torch.full((input_ids.shape[0],), done, dtype=torch.bool, device=input_ids.device)


class LocalEmbeddings(HuggingFaceEmbeddings):
    """Ragas' own sentence-transformers provider on a local folder, with the texts and time counted."""

    def __init__(self, model_dir: str, llm: LocalTransformersLLM) -> None:
        super().__init__(model=model_dir, device=llm.device)
        self._llm = llm  # where the current metric's stats live

    def _count(self, n: int, seconds: float) -> None:
        stats = self._llm.stats[self._llm.metric]
        stats.embed_texts += n
        stats.embed_seconds += seconds

    def embed_text(self, text: str, **kwargs: t.Any) -> list[float]:
        started = time.perf_counter()
        out = super().embed_text(text, **kwargs)
        self._count(1, time.perf_counter() - started)
        return out

    def embed_texts(self, texts: list[str], **kwargs: t.Any) -> list[list[float]]:
        started = time.perf_counter()
        out = super().embed_texts(texts, **kwargs)
        self._count(len(texts), time.perf_counter() - started)
        return out

    async def aembed_text(self, text: str, **kwargs: t.Any) -> list[float]:
        return self.embed_text(text, **kwargs)

    async def aembed_texts(self, texts: list[str], **kwargs: t.Any) -> list[list[float]]:
        return self.embed_texts(texts, **kwargs)


# localeval's metric name -> (Ragas collections class, the sample fields its ascore takes)
METRICS: dict[str, tuple[str, tuple[str, ...]]] = {
    "faithfulness": ("Faithfulness", ("user_input", "response", "retrieved_contexts")),
    "answer_relevancy": ("AnswerRelevancy", ("user_input", "response")),
    "context_precision": ("ContextPrecision", ("user_input", "reference", "retrieved_contexts")),
    "context_recall": ("ContextRecall", ("user_input", "retrieved_contexts", "reference")),
    "factual_correctness": ("FactualCorrectness", ("response", "reference")),
    "noise_sensitivity": ("NoiseSensitivity", ("user_input", "response", "reference", "retrieved_contexts")),
}


def build_metric(name: str, llm: LocalTransformersLLM, embeddings: LocalEmbeddings) -> t.Any:
    """A Ragas collections metric with its default settings."""
    from ragas.metrics import collections

    cls = getattr(collections, METRICS[name][0])
    return cls(llm=llm, embeddings=embeddings) if name == "answer_relevancy" else cls(llm=llm)


def nan_reason(error: BaseException) -> str:
    """A short reason for a failed score, to count NaNs by."""
    if isinstance(error, ParseError):
        return "parse_error"
    if isinstance(error, ValueError) and ("missing" in str(error) or "empty" in str(error)):
        return "invalid_input"
    return type(error).__name__


async def score_one(metric: t.Any, name: str, sample: dict[str, t.Any],
                    llm: LocalTransformersLLM) -> tuple[float | None, str | None]:
    """One sample's value (None when NaN) and NaN reason."""
    llm.metric = name
    try:
        result = await metric.ascore(**{f: sample[f] for f in METRICS[name][1]})
    except Exception as error:  # as Ragas' executor with raise_exceptions=False: a failure is a NaN
        return None, nan_reason(error)
    value = float(result.value) if result.value is not None else float("nan")
    return (None, "nan_result") if value != value else (value, None)


def stats_dict(stats: CallStats) -> dict[str, t.Any]:
    out = asdict(stats)
    out["seconds"] = round(stats.seconds, 3)
    out["embed_seconds"] = round(stats.embed_seconds, 3)
    return out
