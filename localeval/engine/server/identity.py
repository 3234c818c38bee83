"""Who answers at a judge server's URL: its kind, the model it serves, its version, its window and tokenizer.

The kind is read where each server says it: the ``owned_by`` of its ``/v1/models`` cards (``vllm``, ``sglang``,
``llamacpp``), then its own endpoint (vLLM's ``/version``, SGLang's ``/get_server_info``, llama-server's
``/props``), and Ollama's ``/api/version``; anything else that lists models is taken as a plain OpenAI-compatible
server. A kind the user names is taken at their word (the probe still checks that schemas are enforced).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from localeval.engine.server.dialects import KINDS
from localeval.engine.server.transport import GaveUp, Gone, KeyRefused, Refused, Transport
from localeval.errors import LocalevalError

OLLAMA_WINDOW = 4096  # Ollama's default num_ctx, used (and sent) when neither the user nor the model says more
STRUCTURED_OUTPUTS_SINCE = (0, 10, 2)  # the vLLM that first took structured_outputs
CHAT_TOKENIZE = "chat"  # POST /tokenize with messages (vLLM, SGLang)
TEMPLATE_TOKENIZE = "template"  # POST /apply-template, then /tokenize of its prompt (llama-server)


@dataclass(frozen=True)
class Identity:
    """What a server said of itself; ``source`` is where its weights come from where it says (vLLM's ``root``,
    llama-server's model file, Ollama's digest), ``slots`` how many asks it decodes at once where it says."""

    url: str
    kind: str
    model: str
    source: str = ""
    version: str = ""
    window: int | None = None
    tokenizer: str = ""  # CHAT_TOKENIZE, TEMPLATE_TOKENIZE, or "" (prompt lengths estimated)
    slots: int | None = None

    @property
    def judge(self) -> str:
        """The judge's identity for the cache and the summary: kind, model, its source and the server's version."""
        parts = [self.kind, self.model] + ([self.source] if self.source and self.source != self.model else [])
        return ":".join([*parts, self.version or "unversioned"])


def root_of(url: str) -> str:
    """The server's address without the OpenAI ``/v1`` the user gives (``http://gpu:8000/v1`` -> ``http://gpu:8000``)."""
    return url.rstrip("/").removesuffix("/v1")


def discover(transport: Transport, url: str, kind: str = "auto", model: str | None = None,
             max_model_len: int | None = None) -> Identity:
    """The identity of the server behind ``transport`` (``url`` as the user gave it, for messages)."""
    if kind not in ("auto", *KINDS):
        raise LocalevalError(f"unknown server kind {kind!r}; use auto or one of {', '.join(KINDS)}")
    cards = _cards(transport, url, required=kind not in ("auto", "ollama"))
    if kind == "auto":
        kind = _kind(transport, cards, url)
    if kind == "ollama":
        return _ollama(transport, url, model, max_model_len)
    card = _card(cards, model, url)
    found = Identity(url, kind, str(card["id"]), source=str(card.get("root") or ""),
                     window=_int(card.get("max_model_len")))
    if kind in ("vllm", "vllm-legacy"):
        found = _vllm(transport, found)
    elif kind == "sglang":
        found = _sglang(transport, found)
    elif kind == "llamacpp":
        found = _llamacpp(transport, found)
    return _capped(found, max_model_len)


def _cards(transport: Transport, url: str, required: bool) -> list[dict[str, Any]]:
    try:
        listed = transport.get("/v1/models", retries=1)
    except Gone as gone:
        if "CERTIFICATE" in str(gone).upper():
            raise LocalevalError(f"the judge server at {url} has a TLS certificate not trusted here ({gone}); give "
                                 "the CA that signed it with --server-ca-file") from None
        raise LocalevalError(f"the judge server at {url} cannot be reached ({gone}); is it up, and is this its "
                             f"OpenAI base URL (it answers GET {root_of(url)}/v1/models)?") from None
    except KeyRefused as error:
        raise _refused(url, error) from None
    except (Refused, GaveUp) as error:
        if required:
            raise LocalevalError(f"the judge server at {url} does not list its models ({error}); is this its "
                                 f"OpenAI base URL?") from None
        return []
    cards = listed.get("data") if isinstance(listed, dict) else None
    return [c for c in cards or [] if isinstance(c, dict) and "id" in c]


def _kind(transport: Transport, cards: list[dict[str, Any]], url: str) -> str:
    owners = {str(c.get("owned_by", "")).lower() for c in cards}
    for kind in ("vllm", "sglang", "llamacpp"):
        if kind in owners:
            return kind
    if _answers(transport, "/api/version"):
        return "ollama"
    if not cards:
        raise LocalevalError(f"the judge server at {url} lists no models; name its kind with --server-kind")
    return "openai"


def _card(cards: list[dict[str, Any]], model: str | None, url: str) -> dict[str, Any]:
    ids = [str(c["id"]) for c in cards]
    if model is not None:
        for card in cards:
            if card["id"] == model:
                return card
        raise LocalevalError(f"the judge server at {url} does not serve {model!r}; it serves: {', '.join(ids)}")
    if len(cards) != 1:
        raise LocalevalError(f"the judge server at {url} serves {len(cards)} models ({', '.join(ids) or 'none'}); "
                             "name the judge with --server-model")
    return cards[0]


def _vllm(transport: Transport, found: Identity) -> Identity:
    version = str((_answers(transport, "/version") or {}).get("version", ""))
    kind = found.kind
    if kind == "vllm" and version and _version(version) < STRUCTURED_OUTPUTS_SINCE:
        kind = "vllm-legacy"  # it takes guided_json, not structured_outputs
    return _with(found, kind=kind, version=version, tokenizer=_tokenizer(transport, found.model))


def _sglang(transport: Transport, found: Identity) -> Identity:
    info = _answers(transport, "/get_server_info") or {}
    source = str((_answers(transport, "/get_model_info") or {}).get("model_path") or found.source)
    window = found.window or _int(info.get("context_length"))
    return _with(found, version=str(info.get("version", "")), source=source, window=window,
                 slots=_int(info.get("max_running_requests")), tokenizer=_tokenizer(transport, found.model))


def _llamacpp(transport: Transport, found: Identity) -> Identity:
    props = _answers(transport, "/props") or {}
    settings = props.get("default_generation_settings") or {}
    window = _int(settings.get("n_ctx")) or _int(props.get("n_ctx")) or found.window
    template = _answers(transport, "/apply-template", {"messages": [{"role": "user", "content": "hi"}]})
    return _with(found, version=str(props.get("build_info", "")), source=str(props.get("model_path", "")),
                 window=window, slots=_int(props.get("total_slots")),
                 tokenizer=TEMPLATE_TOKENIZE if isinstance(template, dict) and "prompt" in template else "")


def _ollama(transport: Transport, url: str, model: str | None, max_model_len: int | None) -> Identity:
    version = str((_answers(transport, "/api/version") or {}).get("version", ""))
    tags = [t for t in ((_answers(transport, "/api/tags") or {}).get("models") or []) if isinstance(t, dict)]
    names = [str(t.get("name") or t.get("model")) for t in tags]
    if model is None:
        if len(names) != 1:
            raise LocalevalError(f"the Ollama server at {url} has {len(names)} models ({', '.join(names) or 'none'}); "
                                 "name the judge with --server-model")
        model = names[0]
    elif model not in names and f"{model}:latest" not in names:
        raise LocalevalError(f"the Ollama server at {url} has no model {model!r}; it has: {', '.join(names)} "
                             f"(`ollama pull {model}` there)")
    tag = next((t for t in tags if t.get("name") in (model, f"{model}:latest")), {})
    shown = _answers(transport, "/api/show", {"model": model}) or {}
    trained = next((_int(v) for k, v in (shown.get("model_info") or {}).items() if k.endswith(".context_length")), None)
    told = re.search(r"^num_ctx\s+(\d+)", str(shown.get("parameters") or ""), re.M)
    window = max_model_len or (int(told.group(1)) if told else OLLAMA_WINDOW)
    if trained:
        window = min(window, trained)
    return Identity(url, "ollama", model, source=str(tag.get("digest", "")), version=version, window=window)


def _tokenizer(transport: Transport, model: str) -> str:
    counted = _answers(transport, "/tokenize", {"model": model, "messages": [{"role": "user", "content": "hi"}]})
    return CHAT_TOKENIZE if isinstance(counted, dict) and "count" in counted else ""


def _answers(transport: Transport, path: str, body: dict[str, Any] | None = None) -> Any:
    """What ``path`` answers (a POST of ``body`` where given), or None where the server does not have it."""
    try:
        return transport.send("POST" if body is not None else "GET", path, body, retries=1)
    except KeyRefused as error:
        raise _refused(transport.root, error) from None
    except (Refused, GaveUp):
        return None


def _refused(url: str, error: Exception) -> LocalevalError:
    return LocalevalError(f"the judge server at {url} refused the API key ({error}): export the key in "
                          "LOCALEVAL_SERVER_API_KEY (or the variable --server-api-key-env names), or give "
                          "--server-api-key-file")


def _capped(found: Identity, max_model_len: int | None) -> Identity:
    if max_model_len is None:
        return found
    return _with(found, window=min(found.window, max_model_len) if found.window else max_model_len)


def _with(found: Identity, **changes: Any) -> Identity:
    return replace(found, **changes)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None else None
    except (TypeError, ValueError):
        return None


__all__ = ["CHAT_TOKENIZE", "OLLAMA_WINDOW", "TEMPLATE_TOKENIZE", "Identity", "discover", "root_of"]
