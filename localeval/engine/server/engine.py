"""The judge a server already runs: vLLM, SGLang, llama-server, Ollama or any OpenAI-compatible endpoint.

Built on one or more URLs serving the same model: each server's identity is read (``identity.py``), its
enforcement of schemas proved by a probe (``probe.py``), and then each round's asks are in flight together on every
server (``dispatch.py``), asks that share a prompt prefix sent one after the other so that the server's prefix
cache serves them. Every ask carries its schema in its server's spelling (``dialects.py``); tokens come from the
server's ``usage``, prompt lengths from its tokenizer where it has one (``tokens.py``), faults are retried or
reported as ``transport.py`` says, and a server gone ends the run with ``JudgeDied`` (the answers so far are in the
cache; the same command resumes).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from localeval.engine.base import Abilities, Choice, Engine, FinishReason, Invariance, Request, Result
from localeval.engine.options import web_url
from localeval.engine.server.auth import KEY_ENV, read_key
from localeval.engine.server.dialects import DIALECTS, Step
from localeval.engine.server.dispatch import run_round
from localeval.engine.server.identity import Identity, discover, root_of
from localeval.engine.server.probe import COMPACT_FIX, prove_enforced, soft_problem
from localeval.engine.server.tokens import ESTIMATE_BYTES, PromptCounter
from localeval.engine.server.transport import GaveUp, Gone, KeyRefused, Refused, Stopped, Transport
from localeval.errors import JudgeDied, LocalevalError

# Asks in flight on one server by default: enough to keep a vLLM or SGLang batch full; llama-server gets two a slot.
CONCURRENCY = {"vllm": 128, "vllm-legacy": 128, "sglang": 128, "ollama": 4, "openai": 16}
LLAMACPP_PER_SLOT = 2
TOO_LONG = re.compile(r"context (length|size|window)|too long|longer than|exceeds? the", re.IGNORECASE)
INVARIANCE = Invariance(False, "a judge server batches each ask with whatever else it serves at the time (other "
                               "clients' asks too), so a greedy answer may depend on what shares its batch")


@dataclass
class ServerSlot:
    """One server of the engine: its URL as given, its transport, what it said of itself, its asks in flight."""

    url: str
    transport: Transport
    identity: Identity
    concurrency: int


@dataclass(frozen=True)
class Part:
    """One request to a server for ask ``index``: ``n`` samples, seeded ``offset`` past the ask's seed."""

    index: int
    offset: int = 0
    n: int = 1


class ServerEngine(Engine):
    """A judge behind one or more OpenAI-compatible chat servers, as :class:`~localeval.engine.base.JudgeEngine`.

    ``urls``: each server's OpenAI base (``http://gpu-box:8000/v1``); ``kind``: auto (read from the server) or one
    of ``dialects.KINDS``; ``model``: the served model's id (default: the only one the server lists). The API key
    is read from ``api_key_file``, else the variable ``api_key_env`` (default ``LOCALEVAL_SERVER_API_KEY``);
    ``ca_file`` verifies TLS against an internal CA.
    ``concurrency``: asks in flight on each server (default by kind, ``CONCURRENCY``); ``timeout`` and
    ``retries`` apply to each request; ``max_model_len`` caps the window (for Ollama it is the ``num_ctx`` sent).
    """

    abilities = Abilities(soft="checked")  # a server gives usable log-probabilities, or not
    invariance = INVARIANCE

    def __init__(self, urls: str | Sequence[str], *, kind: str = "auto", model: str | None = None,
                 api_key_env: str | None = None, api_key_file: str | None = None, ca_file: str | None = None,
                 concurrency: int | None = None, timeout: float = 600.0, retries: int = 5,
                 max_model_len: int | None = None) -> None:
        given = [urls] if isinstance(urls, str) else list(urls)
        if not given:
            raise LocalevalError("the server engine needs the judge server's URL (--server-url http://HOST:PORT/v1)")
        if concurrency is not None and concurrency < 1:
            raise LocalevalError(f"--server-concurrency takes 1 or more asks in flight, not {concurrency}")
        self.urls = [_base(u) for u in given]
        self.kind, self.model, self.max_model_len = kind, model, max_model_len
        self.api_key_env, self.api_key_file, self.ca_file = api_key_env, api_key_file, ca_file
        self.concurrency, self.timeout, self.retries = concurrency, timeout, retries
        self.servers: list[ServerSlot] = []  # filled by connect()
        self.asks_sent = 0  # chat requests made for asks (the probes and retries are not counted)
        self.prompt_tokens = self.cached_prompt_tokens = 0
        self._soft_checked = False

    def connect(self) -> ServerEngine:
        """Read the API key, each server's identity and window, and prove it enforces schemas (network I/O);
        returns this engine, ready to answer. ``engine.build`` calls it."""
        if self.servers:
            return self
        key = self.api_key()
        for url in self.urls:
            transport = Transport(root_of(url), key=key, timeout=self.timeout, retries=self.retries,
                                  ca_file=self.ca_file, connections=self.concurrency or 256)
            identity = discover(transport, url, self.kind, self.model, self.max_model_len)
            self.servers.append(ServerSlot(url, transport, identity, _concurrency(identity, self.concurrency)))
        self.identity = _one_judge([s.identity for s in self.servers])
        self.dialect = DIALECTS[self.identity.kind]
        windows = [s.identity.window for s in self.servers if s.identity.window]
        self.context_window: int | None = min(windows) if windows else None
        self.counter = PromptCounter(self.servers[0].transport, replace(self.identity, window=self.context_window))
        compact = [prove_enforced(self._on(server), server.url, self.identity.kind, self.dialect.spelling)
                   for server in self.servers]
        self.notes = _notes(self.identity, self.context_window, all(compact))
        for note in self.notes:
            warnings.warn(note, stacklevel=2)
        return self

    def api_key(self) -> str | None:
        """The servers' API key (``auth.read_key``: a file or a variable, never an argument)."""
        return read_key(self.api_key_env, self.api_key_file)

    @property
    def fingerprint(self) -> str:
        """The served model's id, where its weights come from and the server's version, as the server says them."""
        return f"server:{self.identity.judge}"

    @property
    def http_requests(self) -> int:
        """HTTP requests sent to every server, probes and look-ups included."""
        return sum(s.transport.requests for s in self.servers)

    @property
    def prefix_cache_hit_rate(self) -> float:
        """The share of prompt tokens the servers said their prefix caches served (0 where they do not say)."""
        return self.cached_prompt_tokens / self.prompt_tokens if self.prompt_tokens else 0.0

    def count_prompt_tokens(self, request: Request) -> int:
        """The prompt's tokens: the server's count near the window, an estimate elsewhere (``tokens.py``)."""
        return self.counter(request)

    def require_soft(self) -> None:
        """Stop (LocalevalError) unless every server gives log-probabilities that make soft verdicts."""
        if not self._soft_checked:
            for server in self.servers:
                problem = soft_problem(self._on(server), server.url)
                if problem is not None:
                    raise LocalevalError(problem)
            self._soft_checked = True

    def generate(self, requests: list[Request], on_result: Callable[[int, Result], None] | None = None
                 ) -> list[Result]:
        """Answer every request, all in flight together; ``on_result`` as each answer arrives."""
        if any(r.soft for r in requests) and not self._soft_checked:
            try:
                self.require_soft()
            except LocalevalError as error:
                raise JudgeDied(str(error)) from None
        parts = {i: self._parts(i, requests[i]) for i in sorted(range(len(requests)),
                                                                key=lambda i: requests[i].messages)}
        got: dict[int, dict[int, Result]] = {i: {} for i in parts}
        results: list[Result | None] = [None] * len(requests)

        def done(part: Part, result: Result) -> None:
            got[part.index][part.offset] = result
            if len(got[part.index]) == len(parts[part.index]):
                merged = _merged(requests[part.index], [got[part.index][p.offset] for p in parts[part.index]])
                self.prompt_tokens += merged.prompt_tokens
                self.cached_prompt_tokens += merged.cached_prompt_tokens
                results[part.index] = merged
                if on_result is not None:
                    on_result(part.index, merged)

        jobs = [p for ps in parts.values() for p in ps]
        self.asks_sent += len(jobs)
        run_round(self.servers, jobs,
                  lambda server, part: self.ask(server, requests[part.index], part), done)
        return [r for r in results if r is not None]

    def ask(self, server: ServerSlot, request: Request, part: Part = Part(0)) -> Result:
        """One request to ``server``; a refusal or a server that gave up becomes this ask's result, a server gone
        raises (``transport.Gone``)."""
        body = self.dialect.body(server.identity.model, request, part.n, request.seed + part.offset, request.soft,
                                 server.identity.window)
        try:
            data = server.transport.post(self.dialect.path, body)
        except KeyRefused:
            raise
        except Refused as refused:
            if TOO_LONG.search(refused.message):
                return Result([Choice("", 0, "context_too_long")], prompt_tokens=self.counter(request))
            return Result([], 0, error=f"the judge server at {server.url} refused the ask ({refused})")
        except GaveUp as error:
            return Result([], 0, error=f"the judge server at {server.url} gave no answer: {error}")
        reply = self.dialect.parse(data)
        choices = [Choice(c.text, c.tokens, _finish(c.finish), _p1(c.steps) if request.soft else None)
                   for c in reply.completions]
        odd = sorted({str(c.finish) for c in reply.completions if _finish(c.finish) == "error"})
        problem = f"the judge server finished with {odd}" if odd else None
        if len(choices) != part.n:
            choices, problem = [], f"the judge server at {server.url} gave {len(choices)} answers for n={part.n}"
        prompt = reply.prompt_tokens if reply.prompt_tokens is not None else self.counter(request)
        return Result(choices, int(prompt), cached_prompt_tokens=reply.cached_tokens, error=problem)

    def close(self) -> None:
        for server in self.servers:
            server.transport.close()

    def _on(self, server: ServerSlot) -> Callable[[Request], Result]:
        """One ask to ``server`` outside a round (the probes): a server gone or a key refused is an error."""

        def ask(request: Request) -> Result:
            try:
                return self.ask(server, request)
            except KeyRefused as refused:
                raise LocalevalError(f"the judge server at {server.url} refused the API key ({refused}): export "
                                     f"it in {KEY_ENV} (or the variable --server-api-key-env names), or give "
                                     "--server-api-key-file") from None
            except (Gone, Stopped) as gone:
                raise LocalevalError(f"the judge server at {server.url} went away during the schema probe "
                                     f"({gone})") from None

        return ask

    def _parts(self, index: int, request: Request) -> list[Part]:
        """The requests one ask takes: one, or one per sample where the server takes one sample at a time."""
        if request.n == 1 or request.temperature == 0 or self.dialect.many:
            return [Part(index, 0, request.n if request.temperature > 0 else 1)]
        return [Part(index, k, 1) for k in range(request.n)]


def _merged(request: Request, results: list[Result]) -> Result:
    """One ask's result from its parts' (a greedy ask asked once for its ``n`` identical answers)."""
    failed = next((r for r in results if r.error is not None or not r.choices), None)
    if failed is not None:
        return failed
    choices = [c for r in results for c in r.choices]
    if request.temperature == 0 and len(choices) < request.n:
        choices = choices * request.n
    first = results[0]
    return Result(choices, first.prompt_tokens, cached_prompt_tokens=first.cached_prompt_tokens)


def _finish(reason: str | None) -> FinishReason:
    return "stop" if reason == "stop" else "length" if reason == "length" else "error"


def _p1(steps: list[Step] | None) -> tuple[float, ...] | None:
    """p(1) at each binary decision, from each position's top tokens (``engine.soft``: by the text's first char)."""
    if steps is None:
        return None
    from localeval.engine.soft import lead_of, p1_from_logprobs

    texts: list[str] = []
    indexed = []
    for step in steps:
        indexed.append({len(texts) + k: logprob for k, (_, logprob) in enumerate(step)})
        texts.extend(text for text, _ in step)
    return p1_from_logprobs(indexed, lambda i: lead_of(texts[i]))


def _base(url: str) -> str:
    """The OpenAI base of a URL given with or without its ``/v1``."""
    url = web_url(url).strip().rstrip("/")
    return url if url.endswith("/v1") else url + "/v1"


def _concurrency(identity: Identity, given: int | None) -> int:
    if given is not None:
        return given
    if identity.kind == "llamacpp":
        return LLAMACPP_PER_SLOT * (identity.slots or 4)
    return CONCURRENCY[identity.kind]


def _one_judge(identities: list[Identity]) -> Identity:
    """The judge every server serves; an error where two serve different ones (their answers would mix)."""
    first = identities[0]
    for other in identities[1:]:
        if other.judge != first.judge:
            raise LocalevalError(f"the judge servers do not serve one judge: {first.url} serves {first.judge}, "
                                 f"{other.url} serves {other.judge}; give URLs that serve the same model and version")
    return first


def _notes(identity: Identity, window: int | None, compact: bool) -> list[str]:
    """What the user should know of this server before trusting a run on it."""
    url, notes = identity.url, []
    if not identity.tokenizer:
        ollama = (f"; Ollama cuts a prompt longer than its num_ctx silently, so localeval sends num_ctx {window} "
                  "and fits asks to it by this estimate" if identity.kind == "ollama" else "")
        notes.append(f"the judge server at {url} offers no tokenizer: prompt lengths are estimated (a token every "
                     f"{ESTIMATE_BYTES} bytes, on the long side for English), so the long-context policy works on "
                     f"estimates{ollama}")
    if window is None:
        notes.append(f"the judge server at {url} does not say its context window: asks are sent unchecked, and one "
                     "it refuses as too long scores NaN (context_too_long); --max-model-len N checks them first")
    if not compact:
        notes.append(f"the judge server at {url} lets its grammar write free whitespace: answers spend tokens on "
                     f"blanks and their text differs from localeval's in-process engines ({COMPACT_FIX})")
    return notes


__all__ = ["CONCURRENCY", "INVARIANCE", "Part", "ServerEngine", "ServerSlot"]
