"""Judge servers played on 127.0.0.1 for the server engine's tests (``played_servers.py``), stopped after each."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from played_servers import PlayedServer


@pytest.fixture
def played() -> Iterator[Callable[..., PlayedServer]]:
    """``played(kind, **options)``: a started PlayedServer, stopped when the test ends."""
    started: list[PlayedServer] = []

    def start(kind: str = "vllm", **options: Any) -> PlayedServer:
        server = PlayedServer(kind, **options).__enter__()
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
