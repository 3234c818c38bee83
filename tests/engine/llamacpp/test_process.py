"""The managed llama-server's life, played by a stand-in process (``fake_llama_server.py``): found where the
options and the environment say, its build read, started on 127.0.0.1 with its key in its environment only,
stopped on the way out with no log left, its log kept and named when it fails, and gone with its parent however
the parent dies. The real llama-server is run by tests/real_llamacpp (``make test-llamacpp``)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from localeval.engine.llamacpp.process import BINARY_ENV, LlamaServer, find_binary
from localeval.errors import JudgeDied, LocalevalError
from localeval.model_folders.llama_server_build import build_info

FAKE = Path(__file__).with_name("fake_llama_server.py")



def _gone(pid: int, within: float = 10.0) -> bool:
    """Whether process ``pid`` has ended (or is a zombie no one reaps) within ``within`` seconds."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            return True
        if "\nState:\tZ" in state:
            return True
        time.sleep(0.1)
    return False


def test_the_binary_is_found_where_the_option_then_the_environment_say(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    assert find_binary(str(FAKE)) == FAKE.resolve()
    monkeypatch.setenv(BINARY_ENV, str(FAKE))
    assert find_binary() == FAKE.resolve()
    with pytest.raises(LocalevalError, match=r"--llama-server names .*nothing-here, which is not an executable"):
        find_binary(str(tmp_path / "nothing-here"))


def test_no_binary_anywhere_says_how_to_build_one(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv(BINARY_ENV, raising=False)
    monkeypatch.setenv("LOCALEVAL_MODELS", str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(LocalevalError) as missing:
        find_binary()
    assert "`localeval models prepare llama-server` builds it" in str(missing.value)
    assert "--llama-server PATH" in str(missing.value)


def test_the_build_is_read_from_the_version_line() -> None:
    assert build_info(FAKE) == "0.5.0-dev.b7.abc1234"


def test_a_started_server_answers_health_holds_its_key_in_its_environment_and_stops_leaving_nothing(
        tmp_path: Path) -> None:
    server = LlamaServer(FAKE, ["-m", "judge.gguf"], log_dir=tmp_path)
    server.start()
    assert server.process is not None
    pid = server.process.pid
    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    assert server.key and server.key.encode() not in cmdline and b"127.0.0.1" in cmdline
    assert f"key {len(server.key)} chars" in (tmp_path / "llama-server.log").read_text()
    server.stop()
    assert _gone(pid) and not (tmp_path / "llama-server.log").exists()


def test_a_server_that_dies_while_loading_is_named_with_its_exit_and_its_log_is_kept(tmp_path: Path) -> None:
    server = LlamaServer(FAKE, ["-m", "broken.gguf"], log_dir=tmp_path / "run")
    with pytest.raises(LocalevalError) as failed:
        server.start()
    said = str(failed.value)
    assert "llama-server exited with code 1 while loading the judge" in said
    assert f"its log is kept at {tmp_path / 'run' / 'llama-server.log'}" in said and "failed to read magic" in said
    assert (tmp_path / "run" / "llama-server.log").is_file()


def test_a_server_killed_just_as_its_connection_dropped_is_named_by_how_it_ended(tmp_path: Path) -> None:
    """The socket closes before the killed process is reaped: the check waits a moment for the exit rather than
    calling a dying server alive (the race CI met in tests/real_llamacpp)."""
    server = LlamaServer(FAKE, ["-m", "judge.gguf"], log_dir=tmp_path)
    server.start()
    assert server.process is not None
    pid = server.process.pid
    killer = threading.Timer(0.3, os.kill, (pid, signal.SIGKILL))
    killer.start()
    try:
        server.check_alive()  # still serving: nothing to say
        with pytest.raises(JudgeDied, match="llama-server was killed by SIGKILL; its log is kept at"):
            server.check_alive(settle=10.0)
        assert server.failed
    finally:
        killer.cancel()
        server.stop()
    assert (tmp_path / "llama-server.log").is_file()


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("when", ["loading", "serving"])
def test_the_server_ends_with_its_parent_however_the_parent_ends(how: signal.Signals, when: str, tmp_path: Path,
                                                                  interruptible: Callable[[], None]) -> None:
    parent = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from localeval.engine.llamacpp.process import LlamaServer
        server = LlamaServer(Path({str(FAKE)!r}), ["-m", "judge.gguf"], log_dir={str(tmp_path)!r})
        try:
            server.start()
            print("serving", flush=True)
            time.sleep(120)
        finally:
            server.stop()
    """)
    env = {**os.environ, "FAKE_LOAD_SECONDS": "60" if when == "loading" else "0"}
    run = subprocess.Popen([sys.executable, "-c", parent], stdout=subprocess.PIPE, text=True, env=env,
                           preexec_fn=interruptible)
    child = None
    deadline = time.monotonic() + 60
    while child is None and time.monotonic() < deadline:
        found = subprocess.run(["pgrep", "-P", str(run.pid)], capture_output=True, text=True).stdout.split()
        child = int(found[0]) if found else None
        time.sleep(0.1)
    assert child is not None
    if when == "serving":
        assert run.stdout is not None and run.stdout.readline().strip() == "serving"
    else:
        time.sleep(1.0)  # the parent is waiting for /health
    run.send_signal(how)
    run.wait(30)
    assert _gone(child), f"llama-server (pid {child}) outlived its parent ({how.name} while {when})"
