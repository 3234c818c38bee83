"""What a run shows while the judge works: asks answered, share of the planned work, rate and ETA.

Work is counted in tokens: each ask is planned as its prompt's tokens plus its answer budget (times
its sampled rows), so an ETA is the work still to do over the work done per second, whatever the
order the engine answers in. On a terminal the display is a ``rich`` bar; elsewhere (a log file, a
pipe) it is one plain line every ``every_seconds`` or every ``every_share`` of a call's work.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, ProgressColumn, Task, TextColumn
from rich.text import Text

from localeval.silence import is_terminal


@dataclass
class Snapshot:
    """Where one engine call stands."""

    round: int
    retry: bool
    asks_done: int
    asks_total: int
    share: float  # of the call's planned work, 0..1
    elapsed: float
    asks_per_second: float | None
    eta: float | None  # seconds; None until there is a rate to go by


def clock_text(seconds: float | None) -> str:
    """``m:ss`` or ``h:mm:ss``; ``?`` when unknown."""
    if seconds is None:
        return "?"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    return f"{hours}:{rest // 60:02d}:{rest % 60:02d}" if hours else f"{rest // 60}:{rest % 60:02d}"


def status_text(s: Snapshot) -> str:
    """``12/26 asks, 46% of work, 4.7 s/ask, 0:56 elapsed, ETA 1:05``."""
    if s.asks_per_second is None:
        rate = "no answer yet"
    elif s.asks_per_second >= 1:
        rate = f"{s.asks_per_second:.1f} asks/s"
    else:
        rate = f"{1 / s.asks_per_second:.1f} s/ask"
    return (f"{s.asks_done}/{s.asks_total} asks, {s.share:.0%} of work, {rate}, "
            f"{clock_text(s.elapsed)} elapsed, ETA {clock_text(s.eta)}")


class RunProgress:
    """Progress of a run's engine calls; a call is begun with each ask's planned work in tokens."""

    def __init__(
        self,
        enabled: bool = True,
        stream: TextIO | None = None,
        interactive: bool | None = None,
        every_seconds: float = 15.0,
        every_share: float = 0.10,
        clock: Callable[[], float] = time.monotonic,
        ticker: bool = True,
    ) -> None:
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.interactive = is_terminal(self.stream) if interactive is None else interactive
        self.every_seconds = every_seconds
        self.every_share = every_share
        self.clock = clock
        self._lock = threading.RLock()
        self._work: list[int] = []
        self._done: list[bool] = []
        self._done_work = 0
        self._round, self._retry = 0, False
        self._started = self._last_done = 0.0
        self._rate: float | None = None  # tokens/s of the run's earlier calls
        self._spent = (0, 0.0)  # work and seconds of earlier calls
        self._active = False
        self._last_line = 0.0
        self._next_step = 1  # the next line at this many every_share of the work
        self._bar: Progress | None = None
        self._task: Any = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._ticker = ticker

    # -- what the scheduler calls ---------------------------------------------------------------

    def begin(self, round_number: int, work: list[int], retry: bool = False) -> None:
        """An engine call starts; ``work``: each ask's planned tokens."""
        if not self.enabled:
            return
        with self._lock:
            self._work, self._done = [max(1, w) for w in work], [False] * len(work)
            self._done_work, self._round, self._retry = 0, round_number, retry
            self._started = self._last_done = self._last_line = self.clock()
            self._next_step, self._active = 1, True
        if self.interactive:
            self._show_bar()
        else:
            self._start_ticker()

    def finished(self, index: int) -> None:
        """Ask ``index`` of the current call is answered (a second report of it is ignored)."""
        if not self.enabled:
            return
        with self._lock:
            if not self._active or not 0 <= index < len(self._done) or self._done[index]:
                return
            self._done[index] = True
            self._done_work += self._work[index]
            self._last_done = self.clock()
            share = self._done_work / sum(self._work)
            due = share + 1e-9 >= self._next_step * self.every_share and share < 1
            if due:
                self._next_step = int(share / self.every_share + 1e-9) + 1
        if self.interactive:
            self._update_bar()
        elif due:
            self._line()

    def end(self) -> None:
        """The engine call returned, or stopped (interrupted, its engine dead) with asks still unanswered."""
        if not self.enabled:
            return
        with self._lock:
            if not self._active:
                return
            snap = self.snapshot()
            work, seconds = self._spent
            self._spent = (work + self._done_work, seconds + snap.elapsed)
            if self._spent[1] > 0 and self._spent[0] > 0:
                self._rate = self._spent[0] / self._spent[1]
            self._active = False
        if self.interactive:
            self._update_bar()
        else:
            how = "done" if snap.asks_done == snap.asks_total else "stopped"
            self._write(f"{_label(snap)} {how}: {snap.asks_done}/{snap.asks_total} asks in {clock_text(snap.elapsed)}")

    def close(self) -> None:
        """Stop the display (and the ticker thread)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None
        self._stop = threading.Event()
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def tick(self) -> None:
        """Write a plain line when ``every_seconds`` have passed since the last one (non-terminal)."""
        with self._lock:
            due = self._active and self.clock() - self._last_line >= self.every_seconds
        if due:
            self._line()

    # -- the numbers ------------------------------------------------------------------------------

    def snapshot(self) -> Snapshot:
        """The current call's asks done, share of work, rate and ETA."""
        with self._lock:
            now = self.clock()
            elapsed = now - self._started
            total = sum(self._work) or 1
            done = sum(self._done)
            share = self._done_work / total
            eta: float | None = None
            if self._done_work:
                projected_end = self._started + (self._last_done - self._started) * total / self._done_work
                eta = projected_end - now
                if eta < 0:  # late: go by the rate up to now
                    eta = (total - self._done_work) * elapsed / self._done_work
            elif self._rate and total / self._rate > elapsed:  # none yet: the last call's rate, while it holds
                eta = total / self._rate - elapsed
            if done == len(self._done):
                eta = 0.0
            rate = done / elapsed if done and elapsed > 0 else None
            return Snapshot(self._round, self._retry, done, len(self._done), share, elapsed, rate, eta)

    # -- output -----------------------------------------------------------------------------------

    def _line(self) -> None:
        snap = self.snapshot()
        with self._lock:
            self._last_line = self.clock()
        self._write(f"{_label(snap)}: {status_text(snap)}")

    def _write(self, line: str) -> None:
        self.stream.write(line + "\n")
        self.stream.flush()

    def _start_ticker(self) -> None:
        if not self._ticker or self._thread is not None:
            return

        def run() -> None:
            while not self._stop.wait(min(1.0, self.every_seconds)):
                self.tick()

        self._thread = threading.Thread(target=run, name="localeval-progress", daemon=True)
        self._thread.start()

    def _show_bar(self) -> None:
        if self._bar is None:
            console = Console(file=self.stream, force_terminal=True)
            self._bar = Progress(TextColumn("{task.description}"), BarColumn(bar_width=24), _StatusColumn(self),
                                 console=console, transient=False, refresh_per_second=4, redirect_stdout=False)
            self._bar.start()
        snap = self.snapshot()
        self._task = self._bar.add_task(_label(snap), total=sum(self._work))

    def _update_bar(self) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=self._done_work, status=status_text(self.snapshot()))


class _StatusColumn(ProgressColumn):
    """The asks, share, rate and ETA of each call: live for the current one, as it ended for the others."""

    def __init__(self, progress: RunProgress) -> None:
        super().__init__()
        self.progress = progress

    def render(self, task: Task) -> Text:
        live = self.progress._active and task.id == self.progress._task
        return Text(status_text(self.progress.snapshot()) if live else str(task.fields.get("status", "")))


class ChunkProgress:
    """A chunked run's progress: one line per finished chunk with samples/s, chunks done and time left."""

    def __init__(self, samples: int, chunks: int, done_samples: int = 0, done_chunks: int = 0, *,
                 enabled: bool = True, stream: TextIO | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.samples, self.chunks = samples, chunks
        self.done_samples, self.done_chunks = done_samples, done_chunks
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self._started = clock()
        self._resumed_at = done_samples  # samples of an earlier run, not counted in this one's rate

    def chunk_done(self, samples: int) -> str:
        """A chunk of ``samples`` finished; its line (written when enabled)."""
        self.done_samples += samples
        self.done_chunks += 1
        line = self.line()
        if self.enabled:
            self.stream.write(line + "\n")
            self.stream.flush()
        return line

    def line(self) -> str:
        """``chunk 3/20: 3,000/20,000 samples, 812.4 samples/s, 0:04 elapsed, ETA 0:21``."""
        elapsed = self.clock() - self._started
        scored = self.done_samples - self._resumed_at
        rate = scored / elapsed if elapsed > 0 and scored else None
        eta = (self.samples - self.done_samples) / rate if rate else None
        speed = f"{rate:,.1f} samples/s" if rate else "no rate yet"
        return (f"chunk {self.done_chunks}/{self.chunks}: {self.done_samples:,}/{self.samples:,} samples, "
                f"{speed}, {clock_text(elapsed)} elapsed, ETA {clock_text(eta)}")

    def close(self) -> None:
        """Nothing to stop: the lines are written as chunks finish."""


def _label(s: Snapshot) -> str:
    return f"round {s.round}" + (" (retry)" if s.retry else "")


__all__ = ["ChunkProgress", "RunProgress", "Snapshot", "clock_text", "status_text"]
