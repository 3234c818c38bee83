"""The run folder's lock: held while a run writes, gone from a finished folder, and never held by two."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from localeval import evaluate
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.errors import LocalevalError
from localeval.store.run_folder import RunLock

ROW = {"id": "q1", "user_input": "Where is the tower?", "response": "It is in Paris.",
       "retrieved_contexts": ["The tower is in Paris."]}


def test_a_finished_run_folder_holds_no_lock_file(tmp_path: Path) -> None:
    evaluate([ROW], metrics="faithfulness", judge=ScriptedEngine(rule_script), out=tmp_path / "run", progress=False)
    assert (tmp_path / "run" / "summary.json").is_file()
    assert not (tmp_path / "run" / ".lock").exists()


def test_the_lock_file_exists_while_the_run_holds_it(tmp_path: Path) -> None:
    with RunLock(tmp_path / "run"):
        assert (tmp_path / "run" / ".lock").read_text().startswith("localeval process ")
    assert not (tmp_path / "run" / ".lock").exists()


def test_a_lock_file_removed_as_it_was_opened_is_not_taken_for_the_lock(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A opens the lock file; its holder ends (removing it); B locks a fresh one. A may now lock the removed
    file, which locks nothing: it must see that, open the path again and find B's lock."""
    folder = tmp_path / "run"
    first = RunLock(folder).__enter__()
    stale = (folder / ".lock").open("a+")  # A opens the file while the first run still holds it
    first.__exit__()
    with RunLock(folder):  # B
        opened = [stale]
        real_open = Path.open

        def open_stale_first(self: Path, *args: Any, **kwargs: Any) -> Any:
            return opened.pop() if opened and self.name == ".lock" else real_open(self, *args, **kwargs)

        monkeypatch.setattr(Path, "open", open_stale_first)
        with pytest.raises(LocalevalError, match="in use by localeval process"):
            RunLock(folder).__enter__()  # A
        assert not opened and stale.closed
