"""A run folder that cannot be written, and a dtype no engine loads, stop evaluate before any model loads: one
line that says what is wrong and what to give instead, exit 2 from the command, an error from the API."""

from __future__ import annotations

from pathlib import Path

import pytest

import localeval
from localeval.cli import main
from localeval.config import JudgeOptions, OptionError
from localeval.store.out_path import OutPathError, check_out_path

DEMO = str(Path(__file__).resolve().parents[1] / "examples" / "rag_demo.jsonl")
READ_ONLY = "/sys/localeval-run"  # sysfs: no user, root included, may create a folder there


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loading the judge or the embedder fails the test."""

    def refuse(*args: object, **kwargs: object) -> None:
        pytest.fail("a model was loaded")

    monkeypatch.setattr("localeval.run.models.load_judge", refuse)
    monkeypatch.setattr("localeval.run.models.load_embedder", refuse)


def _outs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    """Each kind of --out that cannot work, with the words its error says."""
    file = tmp_path / "results.txt"
    file.write_text("not a folder\n")
    return {
        "a file": (file, f"the run folder {file} (--out) is a file, not a folder: give --out a folder path"),
        "under a file": (file / "run", f"cannot be created: {file} is a file, not a folder"),
        "not writable": (Path(READ_ONLY), "cannot be written (Operation not permitted): give --out a folder this "
                                          "user can write to"),
    }


@pytest.mark.parametrize("kind", ["a file", "under a file", "not writable"])
def test_the_command_stops_before_a_model_loads(kind: str, no_model: None, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    out, said = _outs(tmp_path)[kind]
    assert main(["evaluate", DEMO, "--metrics", "faithfulness", "--out", str(out), "--no-progress"]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("localeval: ") and said in line
    assert "Traceback" not in captured.err and captured.out == ""


@pytest.mark.parametrize("kind", ["a file", "under a file", "not writable"])
def test_the_api_stops_before_a_model_loads(kind: str, no_model: None, tmp_path: Path) -> None:
    out, said = _outs(tmp_path)[kind]
    with pytest.raises(OutPathError, match=said.replace("(", r"\(").replace(")", r"\)")):
        localeval.evaluate(DEMO, metrics="faithfulness", out=out, progress=False)
    with pytest.raises(OutPathError):  # --replace does not skip it
        localeval.evaluate(DEMO, metrics="faithfulness", out=out, progress=False, replace=True)


def test_the_check_leaves_no_folder_behind(tmp_path: Path) -> None:
    check_out_path(tmp_path / "new" / "run")
    assert list(tmp_path.iterdir()) == []
    (tmp_path / "kept").mkdir()
    check_out_path(tmp_path / "kept")
    assert [p.name for p in tmp_path.iterdir()] == ["kept"] and list((tmp_path / "kept").iterdir()) == []
    check_out_path(None)


def test_a_dtype_no_engine_loads_is_a_usage_error(no_model: None, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", DEMO, "--metrics", "faithfulness", "--out", str(tmp_path / "run"), "--no-progress",
                 "--dtype", "float64"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line == ("localeval: --dtype float64: the transformers engine loads weights as auto, float32, bfloat16 "
                    "or float16; give one of those (auto: the engine chooses)")
    assert not (tmp_path / "run").exists()
    with pytest.raises(OptionError, match="--dtype float64"):
        JudgeOptions(extra={"dtype": "float64"})
    assert JudgeOptions(engine="vllm", extra={"dtype": "half"}).extra["dtype"] == "half"  # vLLM's own spelling
    with pytest.raises(OptionError, match="the transformers engine"):
        JudgeOptions(extra={"dtype": "half"})
