"""HTTP to one judge server (httpx): a timeout per request, retries with backoff and jitter, the API key.

What each failure becomes, after at most ``retries`` more tries:
* no connection, a dropped one or a reset: the server is ``Gone`` (the run stops, or the round goes on on the
  other servers);
* HTTP 429, 500, 502, 503, 504 or a timeout: ``GaveUp``, that ask's error (an ask every server gives up on alike
  stops the run in the scheduler); 429 and 503 wait as long as ``Retry-After`` says;
* HTTP 401 or 403: ``KeyRefused``; any other 4xx: ``Refused``, that ask's answer (a prompt too long, a schema
  the server will not take), never retried.

The key is sent as a bearer token and taken out of every message this module writes (``redact``).
"""

from __future__ import annotations

import email.utils
import random
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

import httpx

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
BACKOFF_FIRST = 0.5  # seconds before the first retry; doubled each time, with jitter
BACKOFF_MOST = 30.0
RETRY_AFTER_MOST = 300.0  # the longest Retry-After honoured
CONNECT_SECONDS = 10.0
SHOWN_CHARS = 300  # of a server's error body, in messages


class Gone(Exception):
    """The server cannot be reached (after the retries): no connection, or every one dropped."""


class GaveUp(Exception):
    """The server kept answering 429/5xx, or kept timing out, for this request."""


class Refused(Exception):
    """The server refused this request (a 4xx other than 429): ``status`` and the server's ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"HTTP {status}: {message}")
        self.status = status
        self.message = message


class KeyRefused(Refused):
    """HTTP 401 or 403: the API key is missing or wrong."""


class Stopped(Exception):
    """The round was given up while this request waited to be retried."""


class Transport:
    """Requests to one server: ``root`` is its address without the OpenAI ``/v1`` (paths are given whole)."""

    def __init__(self, root: str, *, key: str | None = None, timeout: float = 600.0, retries: int = 5,
                 ca_file: str | None = None, connections: int = 64,
                 sleep: Callable[[float], None] | None = None, rng: random.Random | None = None) -> None:
        self.root = root.rstrip("/")
        self.key = key
        self.timeout = timeout
        self.retries = retries
        self.stop = threading.Event()  # set to give up waits between tries (a round that ended)
        self.gone: str | None = None  # why the server is taken as gone, once one request found it so
        self.requests = 0  # HTTP requests sent, over this transport's life
        self._counting = threading.Lock()
        self._sleep = sleep or self._wait
        self._rng = rng or random.Random()
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        verify: ssl.SSLContext | bool = ssl.create_default_context(cafile=ca_file) if ca_file else True
        self.client = httpx.Client(
            base_url=self.root, headers=headers, verify=verify,
            timeout=httpx.Timeout(timeout, connect=min(CONNECT_SECONDS, timeout)),
            limits=httpx.Limits(max_connections=connections, max_keepalive_connections=connections),
        )

    def redact(self, text: str) -> str:
        """``text`` with the API key blanked out, wherever a server or a library echoed it."""
        return text.replace(self.key, "***") if self.key else text

    def get(self, path: str, retries: int | None = None) -> Any:
        """The JSON a GET of ``path`` answers."""
        return self.send("GET", path, None, retries)

    def post(self, path: str, body: dict[str, Any], retries: int | None = None) -> Any:
        """The JSON a POST of ``body`` to ``path`` answers."""
        return self.send("POST", path, body, retries)

    def send(self, method: str, path: str, body: dict[str, Any] | None, retries: int | None = None) -> Any:
        """One request, tried again on the faults a network client must expect (module docstring)."""
        most = self.retries if retries is None else retries
        where = f"{self.root}{path}"
        for attempt in range(most + 1):
            if self.gone is not None:
                raise Gone(self.gone)
            last = attempt == most
            try:
                with self._counting:
                    self.requests += 1
                response = self.client.request(method, path, json=body)
            except httpx.TimeoutException as error:
                if last:
                    raise GaveUp(f"no answer from {where} within {self.timeout:g} s, {most + 1} times "
                                 f"({type(error).__name__})") from None
                self._pause(attempt, None)
                continue
            except httpx.TransportError as error:
                if last:
                    raise Gone(self.redact(f"{type(error).__name__}: {str(error).rstrip('.') or 'no connection'} "
                                           f"({most + 1} tries)")) from None
                self._pause(attempt, None)
                continue
            status = response.status_code
            if status < 400:
                try:
                    return response.json()
                except ValueError:
                    raise GaveUp(f"{where} answered HTTP {status} with a body that is not JSON: "
                                 f"{self._shown(response)}") from None
            if status in RETRY_STATUSES:
                if last:
                    raise GaveUp(f"{where} answered HTTP {status} {most + 1} times: {self._shown(response)}")
                self._pause(attempt, retry_after(response.headers.get("retry-after")))
                continue
            refused = KeyRefused if status in (401, 403) else Refused
            raise refused(status, self._shown(response))
        raise AssertionError("unreachable")  # the last attempt returns or raises

    def _pause(self, attempt: int, told: float | None) -> None:
        """Wait before try ``attempt + 2``: what Retry-After said, else exponential backoff with jitter."""
        delay = told if told is not None else min(BACKOFF_MOST, BACKOFF_FIRST * 2**attempt) * self._rng.uniform(0.5, 1)
        self._sleep(delay)
        if self.stop.is_set():
            raise Stopped()

    def _wait(self, seconds: float) -> None:
        self.stop.wait(seconds)

    def _shown(self, response: httpx.Response) -> str:
        """The error a server answered, from its JSON (OpenAI's ``error.message``, FastAPI's ``detail``) or text."""
        try:
            data = response.json()
        except ValueError:
            data = None
        message: Any = response.text
        if isinstance(data, dict):
            error = data.get("error", data.get("detail", data.get("message")))
            if isinstance(error, dict):
                error = error.get("message", error)
            message = error if error is not None else data
        return self.redact(str(message).strip()[:SHOWN_CHARS])

    def close(self) -> None:
        self.stop.set()
        self.client.close()


def retry_after(value: str | None) -> float | None:
    """Seconds a Retry-After header asks to wait (seconds or an HTTP date), at most RETRY_AFTER_MOST."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            seconds = email.utils.parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            return None
    return min(RETRY_AFTER_MOST, max(0.0, seconds))


__all__ = ["GaveUp", "Gone", "KeyRefused", "Refused", "Stopped", "Transport", "retry_after"]
