"""Progress: moves per answered ask, ETA from token work, plain lines off a terminal, silence on request."""

from __future__ import annotations

import io
import logging
import re
import warnings
from pathlib import Path

import pytest

from localeval.cli import main
from localeval.data.sample import Sample
from localeval.engine.base import Request
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.metrics import parse_metrics
from localeval.progress import RunProgress
from localeval.scheduler import Scheduler
from localeval.silence import quiet
from localeval.store.cache import JudgeCache

DEMO = Path(__file__).resolve().parents[1] / "examples" / "rag_demo.jsonl"
ESCAPE = "\x1b"


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class PerAskEngine(ScriptedEngine):
    """Answers like the scripted engine, reports each ask as it is answered, and notes what the progress
    showed just before each report; each ask takes ``seconds_per_token`` x its prompt words of clock."""

    def __init__(self, progress: RunProgress, clock: Clock, seconds_per_token: float = 0.01) -> None:
        super().__init__(rule_script)
        self.progress, self.clock, self.seconds_per_token = progress, clock, seconds_per_token
        self.seen: list[int] = []

    def count_prompt_tokens(self, request: Request) -> int:
        return sum(len(text.split()) for _, text in request.messages)

    def generate(self, requests, on_result=None):
        self.calls.append(list(requests))
        results = []
        for i, request in enumerate(requests):
            self.clock.now += self.seconds_per_token * self.count_prompt_tokens(request)
            result = self._answer(request)
            self.seen.append(self.progress.snapshot().asks_done)
            if on_result is not None:
                on_result(i, result)
            results.append(result)
        return results


class SilentEngine(ScriptedEngine):
    """Reports nothing per ask; notes what the progress showed as it returned."""

    def __init__(self, progress: RunProgress | None = None) -> None:
        super().__init__(rule_script)
        self.progress = progress
        self.seen: list[int] = []

    def generate(self, requests, on_result=None):
        results = super().generate(requests, None)
        if self.progress is not None:
            self.seen.append(self.progress.snapshot().asks_done)
        return results


class RecordedProgress(RunProgress):
    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.planned: list[list[int]] = []
        self.done_at_end: list[int] = []

    def begin(self, round_number, work, retry=False):
        self.planned.append(list(work))
        super().begin(round_number, work, retry)

    def end(self):
        self.done_at_end.append(self.snapshot().asks_done)
        super().end()


def _samples(n: int = 4) -> list[Sample]:
    return [Sample(id=f"s{i}", user_input=f"Where is city {i}?",
                   response=f"City {i} lies on the river Alpha. City {i} has {i} bridges.",
                   retrieved_contexts=(f"City {i} lies on the river Alpha.", "Bananas are yellow."))
            for i in range(n)]


def test_the_count_moves_with_every_answered_ask() -> None:
    clock, stream = Clock(), io.StringIO()
    progress = RunProgress(stream=stream, interactive=False, clock=clock, ticker=False)
    engine = PerAskEngine(progress, clock)
    Scheduler(engine, progress=progress).run(_samples(), parse_metrics("faithfulness"))
    sizes = [len(call) for call in engine.calls]
    expected = [k for size in sizes for k in range(size)]  # 0, 1, ... within each call
    assert engine.seen == expected and len(sizes) >= 2


def test_planned_work_is_prompt_tokens_plus_answer_budget() -> None:
    clock = Clock()
    progress = RecordedProgress(stream=io.StringIO(), interactive=False, clock=clock, ticker=False)
    engine = PerAskEngine(progress, clock)
    Scheduler(engine, progress=progress).run(_samples(2), parse_metrics("faithfulness"))
    first = engine.calls[0]
    assert progress.planned[0] == [engine.count_prompt_tokens(r) + r.max_tokens for r in first]


def test_eta_comes_from_token_work_not_from_ask_counts() -> None:
    clock = Clock()
    progress = RunProgress(stream=io.StringIO(), interactive=False, clock=clock, ticker=False)
    progress.begin(1, [900, 50, 50])
    clock.now += 9.0
    progress.finished(0)  # 90% of the work in 9 s: about 1 s to go (by asks it would be 18 s)
    snap = progress.snapshot()
    assert snap.asks_done == 1 and snap.share == pytest.approx(0.9)
    assert snap.eta == pytest.approx(1.0)
    clock.now += 0.5  # no new answer: the ETA counts down
    assert progress.snapshot().eta == pytest.approx(0.5)
    clock.now += 5.0  # late: go by the rate so far
    assert progress.snapshot().eta == pytest.approx(100 * 14.5 / 900)
    progress.finished(0)  # a second report of the same ask changes nothing
    assert progress.snapshot().asks_done == 1


def test_a_new_call_starts_with_the_rate_of_the_last_one() -> None:
    clock = Clock()
    progress = RunProgress(stream=io.StringIO(), interactive=False, clock=clock, ticker=False)
    progress.begin(1, [100, 100])
    clock.now += 4.0
    progress.finished(0)
    progress.finished(1)
    progress.end()  # 50 tokens/s
    progress.begin(2, [500])
    clock.now += 2.0
    assert progress.snapshot().eta == pytest.approx(8.0)
    clock.now += 9.0  # slower than the last call: no answer, no rate to go by
    assert progress.snapshot().eta is None


def test_off_a_terminal_plain_periodic_lines_and_no_escape_codes() -> None:
    clock, stream = Clock(), io.StringIO()
    progress = RunProgress(stream=stream, interactive=False, clock=clock, ticker=False, every_seconds=15)
    progress.begin(3, [10] * 20)
    for i in range(20):
        clock.now += 1.0
        progress.finished(i)
    clock.now += 20.0
    progress.tick()  # 22 s after the last line: one more, before the call returns
    progress.end()
    text = stream.getvalue()
    assert ESCAPE not in text and "\r" not in text
    lines = text.splitlines()
    shares = [int(m.group(1)) for m in (re.search(r"(\d+)% of work", line) for line in lines) if m]
    assert shares == [10, 20, 30, 40, 50, 60, 70, 80, 90, 100]
    assert lines[0].startswith("round 3: 2/20 asks, 10% of work, 1.0 asks/s, 0:02 elapsed, ETA 0:18")
    assert lines[-1] == "round 3 done: 20/20 asks in 0:40"


def test_a_tick_writes_a_line_every_period_even_without_answers() -> None:
    clock, stream = Clock(), io.StringIO()
    progress = RunProgress(stream=stream, interactive=False, clock=clock, ticker=False, every_seconds=15)
    progress.begin(1, [100, 100])
    clock.now += 10.0
    progress.tick()
    assert stream.getvalue() == ""
    clock.now += 6.0
    progress.tick()
    assert stream.getvalue() == "round 1: 0/2 asks, 0% of work, no answer yet, 0:16 elapsed, ETA ?\n"


def test_the_scheduler_writes_plain_lines_to_a_log() -> None:
    stream = io.StringIO()
    progress = RunProgress(stream=stream, interactive=False, ticker=False)
    Scheduler(ScriptedEngine(rule_script), progress=progress).run(_samples(), parse_metrics("faithfulness"))
    lines = stream.getvalue().splitlines()
    assert ESCAPE not in stream.getvalue()
    assert "round 1 done: 4/4 asks in 0:00" in lines and "round 2 done: 4/4 asks in 0:00" in lines


def test_on_a_terminal_a_rich_bar(tmp_path: Path) -> None:
    stream = io.StringIO()
    progress = RunProgress(stream=stream, interactive=True)
    Scheduler(ScriptedEngine(rule_script), progress=progress).run(_samples(), parse_metrics("faithfulness"))
    assert "round 2" in stream.getvalue() and "4/4 asks" in stream.getvalue()


def test_an_engine_that_reports_nothing_counts_and_caches_at_the_end(tmp_path: Path) -> None:
    progress = RecordedProgress(stream=io.StringIO(), interactive=False, ticker=False)
    cache = JudgeCache(tmp_path / "cache.sqlite")
    engine = SilentEngine(progress)
    Scheduler(engine, cache=cache, progress=progress).run(_samples(2), parse_metrics("faithfulness"))
    assert engine.seen == [0, 0]  # nothing was reported during the calls
    assert progress.done_at_end == [2, 2]  # all of it once they returned
    assert "round 1 done: 2/2 asks" in progress.stream.getvalue()
    again = SilentEngine()
    Scheduler(again, cache=cache, progress=False).run(_samples(2), parse_metrics("faithfulness"))
    assert again.calls == []  # every answer came from the cache
    cache.close()


def _noisy_judge(*args, **kwargs):
    """A stand-in for loading a model: a loading bar, a library warning, a log line."""
    from transformers.utils import logging as hf_logging

    for _ in hf_logging.tqdm(range(3), desc="Loading weights"):
        pass
    warnings.warn("a library warning", UserWarning, stacklevel=1)
    logging.getLogger("transformers.modeling_utils").warning("some weights were not used")
    return ScriptedEngine(rule_script)


@pytest.mark.filterwarnings("ignore:a library warning")
@pytest.mark.parametrize("flag", [True, False])
def test_no_progress_prints_nothing_to_stderr(flag: bool, tmp_path: Path, capfd, monkeypatch) -> None:
    monkeypatch.setattr("localeval.run.models.load_judge", _noisy_judge)
    argv = ["evaluate", str(DEMO), "--metrics", "faithfulness,mrr", "--out", str(tmp_path / "run"),
            "--no-report"] + (["--no-progress"] if flag else [])
    assert main(argv) == 0
    captured = capfd.readouterr()
    assert "faithfulness" in captured.out
    if flag:
        assert captured.err == ""
    else:  # without the flag: progress lines, and (stderr is no terminal) no loading bars
        assert "round 1 done" in captured.err
        assert "Loading weights" not in captured.err and ESCAPE not in captured.err and "\r" not in captured.err


def test_quiet_restores_what_it_silenced(caplog) -> None:
    logger = logging.getLogger("sentence_transformers")
    before = logger.level
    with quiet(), warnings.catch_warnings(record=True) as caught:
        logger.warning("hidden")
        warnings.warn("hidden too", UserWarning, stacklevel=1)
    assert logger.level == before and caught == []
    logger.warning("shown")
    assert [r.getMessage() for r in caplog.records] == ["shown"]
