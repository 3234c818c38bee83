"""The server engine connects in a step of its own: building one does no I/O."""

from __future__ import annotations

from localeval.engine.server import ServerEngine


def test_the_server_engines_constructor_does_no_io(played) -> None:
    server = played("vllm")
    engine = ServerEngine(server.url, concurrency=2)
    assert server.seen == [] and engine.servers == []  # nothing asked, not even the API key read
    assert engine.connect() is engine and server.seen and engine.servers[0].concurrency == 2
    assert ServerEngine("http://127.0.0.1:9/v1").servers == []  # nothing listens there; nothing is tried
