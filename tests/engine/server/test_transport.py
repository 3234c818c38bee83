"""HTTP to a judge server as a network client must do it (``transport.py``): retries with backoff and jitter on
dropped connections, 429 (Retry-After honoured) and 5xx, a cap, a timeout per request, 4xx never retried, the key
sent as a bearer token and never shown, TLS verified (an internal CA by option)."""

from __future__ import annotations

import email.utils
import subprocess
import time
from pathlib import Path

import pytest

from localeval.engine.server.identity import root_of
from localeval.engine.server.transport import GaveUp, Gone, KeyRefused, Refused, Transport, retry_after

CHAT = "/v1/chat/completions"
BODY = {"model": "judge", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 8}


def _transport(server, **options) -> tuple[Transport, list[float]]:
    waits: list[float] = []
    return Transport(root_of(server.url), sleep=waits.append, **options), waits


def test_a_5xx_and_a_dropped_connection_are_tried_again_with_growing_jittered_waits(played) -> None:
    server = played("vllm", faults=["500", "drop", "503"])
    transport, waits = _transport(server, retries=3)
    assert transport.post(CHAT, BODY)["choices"][0]["message"]["content"]
    assert len(server.chats()) == 4 and transport.requests == 4
    assert 0.25 <= waits[0] <= 0.5 and 0.5 <= waits[1] <= 1.0 and 1.0 <= waits[2] <= 2.0  # 0.5 s doubled, x U(.5, 1)


def test_a_429_waits_as_long_as_retry_after_says(played) -> None:
    transport, waits = _transport(played("vllm", faults=["429:7"]))
    transport.post(CHAT, BODY)
    assert waits == [7.0]


def test_retry_after_reads_seconds_or_an_http_date_and_caps_the_wait() -> None:
    assert retry_after("3") == 3.0 and retry_after(None) is None and retry_after("soon") is None
    assert retry_after("86400") == 300.0
    later = email.utils.formatdate(time.time() + 60, usegmt=True)
    assert 55 <= (retry_after(later) or 0) <= 60


def test_after_the_cap_a_5xx_gives_up_on_the_ask_and_no_connection_means_the_server_is_gone(played) -> None:
    transport, waits = _transport(played("vllm", faults=["500"] * 3), retries=2)
    with pytest.raises(GaveUp, match=r"answered HTTP 500 3 times: Internal Server Error"):
        transport.post(CHAT, BODY)
    assert len(waits) == 2
    server = played("vllm")
    server.stop()
    gone, _ = _transport(server, retries=1)
    with pytest.raises(Gone, match=r"ConnectError: .* \(2 tries\)"):
        gone.post(CHAT, BODY)


def test_a_request_that_outlasts_its_timeout_is_tried_again_then_given_up(played) -> None:
    server = played("vllm", faults=["slow:1", "slow:1"])
    transport, _ = _transport(server, retries=1, timeout=0.3)
    with pytest.raises(GaveUp, match=r"no answer from .* within 0.3 s, 2 times"):
        transport.post(CHAT, BODY)


def test_a_4xx_is_the_servers_answer_and_is_never_retried(played) -> None:
    server = played("vllm", faults=["refuse"])
    transport, waits = _transport(server)
    with pytest.raises(Refused) as refused:
        transport.post(CHAT, BODY)
    assert refused.value.status == 400 and "Invalid JSON schema" in refused.value.message
    assert waits == [] and len(server.chats()) == 1


def test_the_key_goes_as_a_bearer_token_and_a_wrong_one_is_refused_without_being_shown(played) -> None:
    server = played("vllm", key="s3cret-key")
    good, _ = _transport(server, key="s3cret-key")
    good.get("/v1/models")
    assert server.seen[-1][3]["Authorization"] == "Bearer s3cret-key"
    bad, _ = _transport(server, key="wrong-key")
    with pytest.raises(KeyRefused) as refused:
        bad.get("/v1/models")
    assert refused.value.status == 401 and "wrong-key" not in str(refused.value)
    assert bad.redact("echoed wrong-key back") == "echoed *** back"


def _certificate(folder: Path) -> tuple[str, str]:
    """A self-signed certificate for 127.0.0.1 (its own CA), made with the openssl command."""
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return str(cert), str(key)


def test_tls_is_verified_by_default_and_an_internal_ca_is_trusted_when_given(played, tmp_path) -> None:
    cert, key = _certificate(tmp_path)
    server = played("vllm", tls=(cert, key))
    assert server.url.startswith("https://")
    unverified, _ = _transport(server, retries=0)
    with pytest.raises(Gone, match=r"CERTIFICATE_VERIFY_FAILED|certificate verify failed"):
        unverified.get("/v1/models")
    trusted, _ = _transport(server, retries=0, ca_file=cert)
    assert trusted.get("/v1/models")["data"][0]["id"] == "judge"
