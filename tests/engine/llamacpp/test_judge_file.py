"""Which GGUF file the llama-cpp engine runs, found before anything starts: a file, a folder holding one, a
prepared judge's kept file, or the bundled judge's; and the engine's options checked like any engine's."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from localeval.engine.options import LlamaCppOptions
from localeval.errors import LocalevalError, OptionError
from localeval.model_folders.gguf_judge import judge_gguf

ROOT = Path(__file__).resolve().parents[3]


def test_the_bundled_judge_is_the_gguf_its_package_ships(tmp_path: Path) -> None:
    shipped = judge_gguf(None, tmp_path)
    assert shipped.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and shipped.is_file()
    assert judge_gguf("smollm2-135m-instruct", tmp_path) == shipped


def test_a_file_a_folder_and_a_prepared_judges_kept_file_are_found(tmp_path: Path) -> None:
    file = tmp_path / "judge.gguf"
    file.write_bytes(b"GGUF")
    assert judge_gguf(str(file), tmp_path) == file
    assert judge_gguf(str(tmp_path), tmp_path) == file
    named = tmp_path / "models" / "some-judge"
    (named / ".gguf").mkdir(parents=True)
    (named / "model.safetensors").write_bytes(b"")
    (named / ".gguf" / "some-judge-q4_k_m.gguf").write_bytes(b"GGUF")
    assert judge_gguf("some-judge", tmp_path / "models") == named / ".gguf" / "some-judge-q4_k_m.gguf"


def test_each_wrong_judge_says_what_to_pass(tmp_path: Path) -> None:
    (tmp_path / "a.gguf").write_bytes(b"")
    (tmp_path / "b.gguf").write_bytes(b"")
    with pytest.raises(LocalevalError, match=r"holds 2 GGUF files \(a.gguf, b.gguf\); pass --judge the one"):
        judge_gguf(str(tmp_path), tmp_path)
    folder = tmp_path / "models" / "built"
    folder.mkdir(parents=True)
    (folder / "localeval-source.json").write_text(json.dumps({"model": "built"}))
    with pytest.raises(LocalevalError, match=r"holds no GGUF file.*`localeval models prepare built` again"):
        judge_gguf("built", tmp_path / "models")
    text = tmp_path / "notes.txt"
    text.write_text("x")
    with pytest.raises(LocalevalError, match=r"is not a GGUF file"):
        judge_gguf(str(text), tmp_path)
    with pytest.raises(LocalevalError, match=r"is not a GGUF file or a folder holding one"):
        judge_gguf(str(tmp_path / "nowhere.gguf"), tmp_path)


def test_the_options_are_checked_before_anything_starts() -> None:
    assert LlamaCppOptions().arguments() == {"threads": None}  # the engine's defaults: all cores, 4 slots
    given = LlamaCppOptions.from_keywords({"threads": 2, "parallel": 8, "deterministic": True})
    assert given.arguments() == {"threads": 2, "parallel": 8, "deterministic": True}
    with pytest.raises(OptionError, match=r"parallel 0: input should be greater than or equal to 1"):
        LlamaCppOptions.from_keywords({"parallel": 0})
    with pytest.raises(OptionError, match=r"dtype: no such option \(the llama-cpp engine takes"):
        LlamaCppOptions.from_keywords({"dtype": "float32"})
    named = LlamaCppOptions.from_keywords({"llama_server": "/opt/llama-server"})
    assert named.recorded() == {} and named.arguments()["llama_server"] == "/opt/llama-server"


def test_a_missing_binary_stops_the_run_before_anything_loads(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "localeval", "evaluate", str(ROOT / "examples" / "rag_demo.jsonl"),
                           "--out", str(tmp_path / "run"), "--engine", "llama-cpp", "--llama-server",
                           str(tmp_path / "no-such-binary")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"--llama-server names {tmp_path / 'no-such-binary'}, which is not an executable" in done.stderr
