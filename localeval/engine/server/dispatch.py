"""A round's asks in flight together on every server: each server's slots (threads, one request each) take the
next ask from one shared queue, so a fast server takes more; each answer is reported, in the calling thread, the
moment it arrives. A server found gone hands its ask back to the queue and leaves the round to the others; when
none is left the round stops with ``JudgeDied`` naming every URL and why.
"""

from __future__ import annotations

import queue
import threading
import warnings
from collections import deque
from collections.abc import Callable, Sequence
from typing import Generic, Protocol, TypeVar

from localeval.engine.server.transport import Gone, KeyRefused, Stopped, Transport
from localeval.errors import JudgeDied

Job = TypeVar("Job")
Answer = TypeVar("Answer")


class Server(Protocol):
    """What the round needs of one server: its transport, its URL and how many asks it may have in flight."""

    transport: Transport
    url: str
    concurrency: int


S = TypeVar("S", bound=Server)


class _Board(Generic[Job]):
    """The shared queue: an ask is taken, then finished or given back (its server gone)."""

    def __init__(self, jobs: Sequence[Job]) -> None:
        self.jobs: deque[Job] = deque(jobs)
        self.in_flight = 0
        self.closed = False
        self.changed = threading.Condition()

    def take(self, server: Server) -> Job | None:
        """The next ask for ``server``; None once there is none left to take (or it, or the round, is over)."""
        with self.changed:
            while True:
                if self.closed or server.transport.gone is not None:
                    return None
                if self.jobs:
                    self.in_flight += 1
                    return self.jobs.popleft()
                if self.in_flight == 0:
                    return None
                self.changed.wait()  # an ask in flight may yet come back from a server that goes

    def finish(self, job: Job, back: bool = False) -> None:
        with self.changed:
            self.in_flight -= 1
            if back:
                self.jobs.appendleft(job)
            self.changed.notify_all()

    def close(self) -> None:
        with self.changed:
            self.closed = True
            self.changed.notify_all()


def run_round(servers: Sequence[S], jobs: Sequence[Job], answer: Callable[[S, Job], Answer],
              done: Callable[[Job, Answer], None]) -> None:
    """``answer`` every job on the servers' slots, calling ``done(job, answer)`` here as each arrives.

    ``answer`` raises ``transport.Gone`` (or ``KeyRefused``) when its server cannot answer anything more.
    """
    live = [s for s in servers if s.transport.gone is None]
    if not jobs:
        return
    if not live:
        raise JudgeDied("; ".join(f"the judge server at {s.url} is gone: {s.transport.gone}" for s in servers))
    board: _Board[Job] = _Board(jobs)
    arrived: queue.Queue[tuple[S, Job | None, Answer | None, str | None]] = queue.Queue()

    def work(server: S) -> None:
        while (job := board.take(server)) is not None:
            try:
                result = answer(server, job)
            except (Gone, KeyRefused) as error:
                cause = str(error) if isinstance(error, Gone) else f"it refused the API key ({error})"
                server.transport.gone = server.transport.gone or cause
                board.finish(job, back=True)
                arrived.put((server, None, None, server.transport.gone))
                return
            except Stopped:
                board.finish(job, back=True)
                return
            board.finish(job)
            arrived.put((server, job, result, None))

    threads = [threading.Thread(target=work, args=(s,), daemon=True, name=f"judge-server-{k}")
               for s in live for k in range(max(1, min(s.concurrency, len(jobs))))]
    for thread in threads:
        thread.start()
    remaining, gone = len(jobs), {s.url: s.transport.gone for s in servers if s.transport.gone is not None}
    try:
        while remaining:
            server, job, result, lost = arrived.get()
            if lost is None:
                remaining -= 1
                done(job, result)  # type: ignore[arg-type]
                continue
            if server.url in gone:
                continue
            gone[server.url] = lost
            if len(gone) < len(servers):
                warnings.warn(f"the judge server at {server.url} is gone ({lost}); the round goes on on the "
                              f"{len(servers) - len(gone)} other(s)", stacklevel=2)
                continue
            for s in servers:
                s.transport.stop.set()
            raise JudgeDied("; ".join(f"the judge server at {url} is gone: {why}" for url, why in gone.items()))
    finally:
        board.close()


__all__ = ["Server", "run_round"]
