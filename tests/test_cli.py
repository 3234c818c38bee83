"""The ``localeval`` command: every command's --help lists its options; shared options are the same everywhere."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import typer

from localeval.cli import main
from localeval.cli.app import build_app
from localeval.cli.command import rewrite_argv
from localeval.cli.shared import CACHE_FILE, ENGINE, JUDGE, PROGRESS
from localeval.errors import LocalevalError

COMMANDS = [["evaluate"], ["estimate"], ["rescore"], ["models", "prepare"], ["report"], ["compare"], ["gate"],
            ["diagnose"], ["agree"], ["testset"], ["metrics"]]
JUDGE_COMMANDS = ("evaluate", "estimate", "agree", "testset")


def _commands() -> dict[str, Any]:
    root = typer.main.get_command(build_app())
    found = {}
    for path in COMMANDS:
        cmd: Any = root
        for name in path:
            cmd = cmd.commands[name]
        found[" ".join(path)] = cmd
    return found


def _declared(param: Any) -> tuple[Any, ...]:
    """What an option is: flags, help, default, type, flag or not, required or not."""
    return (tuple(param.opts), param.help, param.default, param.type_descriptor.annotation, param.is_flag,
            param.required)


def test_the_command_list_names_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    listed = capsys.readouterr().out
    assert all(path[0] in listed for path in COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_help_lists_the_command_s_options(path: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*path, "--help"]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"Usage: localeval {' '.join(path)}")
    command = _commands()[" ".join(path)]
    flat = "".join(text.split())  # the help wraps lines, even inside a word
    for param in command.params:
        names = param.opts if param.param_type_name == "option" else [param.metavar or param.name.upper()]
        assert all(name in text for name in names), (path, names)
        assert "".join(param.help.split()) in flat, (path, names)  # with its help


def test_shared_options_are_declared_the_same_in_every_judge_command(capsys: pytest.CaptureFixture[str]) -> None:
    commands = _commands()
    shared = [name for group in (JUDGE, ENGINE, PROGRESS) for name, _ in group]
    infos = {c: {p.name: _declared(p) for p in commands[c].params if p.param_type_name == "option"}
             for c in JUDGE_COMMANDS}
    for name in shared:
        first = infos["evaluate"][name]
        assert all(infos[c][name] == first for c in JUDGE_COMMANDS), name
    cache = CACHE_FILE[0][0]
    assert all(infos[c][cache] == infos["evaluate"][cache] for c in ("agree", "testset"))
    assert cache not in infos["estimate"]  # estimate runs uncached
    for command in JUDGE_COMMANDS:  # and each help shows them with the same words
        assert main([command, "--help"]) == 0
        text = "".join(capsys.readouterr().out.split())
        for param in commands["evaluate"].params:
            if param.name in shared:
                assert param.opts[0] in text and "".join(param.help.split()) in text, (command, param.name)


def test_testset_takes_every_engine_option(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:

    seen: list[Any] = []

    def load_judge(path: object, options: object = None, log_dir: object = None) -> None:
        seen.append(options)
        raise LocalevalError("stopped after reading the command line")

    monkeypatch.setattr("localeval.run.models.load_judge", load_judge)
    assert main(["testset", str(tmp_path), "--size", "2", "--out", str(tmp_path / "t.jsonl"),
                 "--batch-tokens", "0", "--batch-size", "3"]) == 1
    options = seen[0]
    assert (options.engine, options.options.batch_tokens, options.options.batch_size) == ("transformers", None, 3)
    assert main(["testset", str(tmp_path), "--size", "2", "--out", str(tmp_path / "t.jsonl"), "--engine", "vllm",
                 "--tensor-parallel-size", "2"]) == 1
    assert seen[-1].engine == "vllm" and seen[-1].extra["tensor_parallel_size"] == 2
    assert seen[-1].extra["enforce_eager"] is None  # vLLM's engine decides: eager on a CPU build
    for flag, eager in (("--enforce-eager", True), ("--compile", False)):
        assert main(["testset", str(tmp_path), "--size", "2", "--out", str(tmp_path / "t.jsonl"),
                     "--engine", "vllm", flag]) == 1
        assert seen[-1].extra["enforce_eager"] is eager


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "data.jsonl", "--out", "x", "--bogus"]) == 2
    assert "--bogus" in capsys.readouterr().err
    assert main(["evaluate", "data.jsonl", "--out", "x", "--grammar", "regex"]) == 2
    assert "regex" in capsys.readouterr().err
    assert main(["evaluate", "data.jsonl"]) == 2  # --out is required
    assert "--out" in capsys.readouterr().err
    assert main(["no-such-command"]) == 2


def test_argparse_forms_are_read() -> None:
    assert rewrite_argv(["--pairs", "--limit", "2"], {"--pairs": "(d)"}, ()) == ["--pairs", "(d)", "--limit", "2"]
    assert rewrite_argv(["x", "--pairs"], {"--pairs": "(d)"}, ()) == ["x", "--pairs", "(d)"]
    assert rewrite_argv(["--pairs", "dir"], {"--pairs": "(d)"}, ()) == ["--pairs", "dir"]
    assert rewrite_argv(["--no-worse", "a", "b", "-v"], {}, ["--no-worse"]) == [
        "--no-worse", "a", "--no-worse", "b", "-v"]


@pytest.fixture
def interrupted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """evaluate is interrupted (Ctrl-C) as it starts, in a fresh current folder (returned)."""
    import localeval.api

    def stop(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(localeval.api, "evaluate_run", stop)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_an_interrupt_exits_130_with_how_to_resume(interrupted: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tmp_path = interrupted
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "judge.sqlite").write_bytes(b"")
    assert main(["evaluate", "data.jsonl", "--out", "x", "--no-progress"]) == 130
    assert capsys.readouterr().err.splitlines() == [
        "localeval: interrupted. The judge's answers so far are kept in x/judge.sqlite; to resume, run the same "
        "command again:",
        "  localeval evaluate data.jsonl --out x --no-progress"]


def test_an_interrupt_before_the_cache_exists_names_no_cache(interrupted: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Ctrl-C while the model loads: no run folder, no cache, and the message says nothing is kept."""
    assert main(["evaluate", "data.jsonl", "--out", "runs/x", "--no-progress"]) == 130
    err = capsys.readouterr().err
    assert "judge.sqlite" not in err and "kept in" not in err
    assert err.splitlines() == [
        "localeval: interrupted before the judge's first answer was kept, so there is nothing to resume; to start "
        "over, run the same command again:",
        "  localeval evaluate data.jsonl --out runs/x --no-progress"]
    assert not (interrupted / "runs").exists()


def test_a_repeated_metrics_option_adds_up(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import localeval.api

    seen: list[tuple[str, ...]] = []

    def evaluate_run(data: str, config: Any, **kwargs: object) -> None:
        seen.append(tuple(config.metrics))
        raise LocalevalError("stop here")

    monkeypatch.setattr(localeval.api, "evaluate_run", evaluate_run)
    assert main(["evaluate", "d.jsonl", "--out", str(tmp_path / "r"), "--metrics", "exact_match",
                 "--metrics", "rouge_score,bleu_score", "--no-progress"]) == 1
    assert [str(m) for m in seen[0]] == ["exact_match", "rouge_score", "bleu_score"]


@pytest.mark.parametrize(("argv", "flag"), [
    (["evaluate", "d.jsonl", "--out", "a", "--out", "b"], "--out"),
    (["evaluate", "d.jsonl", "--out", "a", "--seed", "1", "--seed", "2"], "--seed"),
    (["evaluate", "d.jsonl", "--out", "a", "--enforce-eager", "--compile"], "--enforce-eager/--compile"),
    (["estimate", "d.jsonl", "--sample", "3", "--sample", "4"], "--sample"),
    (["compare", "a", "b", "--json", "x.json", "--json", "y.json"], "--json"),
    (["gate", "r", "--baseline", "a", "--baseline", "b", "--no-worse", "m"], "--baseline"),
    (["report", "r", "--worst", "3", "--worst=4"], "--worst"),
    (["agree", "l", "r", "--level", "0.9", "--level", "0.8"], "--level"),
    (["testset", "docs", "--size", "2", "--size", "3", "--out", "t.jsonl"], "--size"),
    (["models", "prepare", "--dest", "a", "--dest", "b"], "--dest"),
])
def test_a_repeated_option_of_one_value_is_refused(argv: list[str], flag: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Never the last one kept silently: a usage error that names the option."""
    assert main(argv) == 2
    assert f"{flag} given more than once" in capsys.readouterr().err


def test_an_unknown_option_suggests_the_options_it_begins_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evaluate", "d.jsonl", "--out", "a", "--metric", "faithfulness"]) == 2
    err = capsys.readouterr().err
    assert "did you mean --metrics or --deterministic?" in err


def test_the_command_list_shows_each_short_help_whole(monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    page = " ".join(_help([], "-h", monkeypatch, capsys).split())
    assert "write RUN/report.html: tables, histograms, worst samples, diagnosis" in page
    assert ",..." not in page


def test_evaluate_help_names_every_data_format(monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    page = " ".join(_help(["evaluate"], "-h", monkeypatch, capsys).split())
    assert "JSONL, JSON, CSV or Parquet file, or saved Hugging Face dataset folder" in page


HELP_PAGES = [[], ["models"], *COMMANDS, ["models", "check"]]


def _help(path: list[str], flag: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
          columns: int = 80) -> str:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main([*path, flag]) == 0
    return capsys.readouterr().out


def _command(path: list[str]) -> Any:
    cmd: Any = typer.main.get_command(build_app())
    for name in path:
        cmd = cmd.commands[name]
    return cmd


@pytest.mark.parametrize("path", HELP_PAGES, ids=lambda p: " ".join(p) or "localeval")
def test_h_is_help_on_every_command(path: list[str], monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    page = _help(path, "-h", monkeypatch, capsys)
    assert page == _help(path, "--help", monkeypatch, capsys)
    assert page.startswith(f"Usage: localeval {' '.join(path)}".rstrip())
    assert "-h, --help" in page


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("path", HELP_PAGES, ids=lambda p: " ".join(p) or "localeval")
def test_help_breaks_lines_between_words_and_states_each_default_once(
        path: list[str], columns: int, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    page = _help(path, "--help", monkeypatch, capsys, columns)
    joined = " ".join(page.split())  # a word cut across two lines would read as two words here
    command = _command(path)
    texts = [command.help or ""] + [p.help for p in command.params if getattr(p, "help", None)]
    for text in texts:
        assert " ".join(text.split()) in joined, text
    assert all(len(line) <= columns or len(line.split()) == 1 for line in page.splitlines())
    blocks: list[str] = []  # each option's lines: its flags, then its help and [default: ...]
    for line in page.splitlines():
        if line.startswith("  -"):
            blocks.append(line)
        elif blocks and line.startswith("   "):
            blocks[-1] += " " + line.strip()
    for block in blocks:
        if "[default:" in block:
            assert block.lower().count("default") == 1, block


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    import localeval

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"localeval {localeval.__version__}\n"


@pytest.mark.parametrize(("argv", "said"), [
    (["--metrics", "faithfullness"], "unknown metric 'faithfullness'"),
    (["--drafts", "-1"], "drafts -1: input should be greater than or equal to 0"),
    (["--engine", "vllm", "--stop-repeats"], "--stop-repeats works on the transformers engine only"),
    (["--votes", "0"], "votes"),
])
def test_a_value_that_cannot_work_is_a_usage_error(argv: list[str], said: str, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 2, as click's own usage errors, with one line, before the data or a model is read."""
    import localeval.api

    monkeypatch.setattr(localeval.api, "evaluate_run", lambda *a, **k: pytest.fail("the run started"))
    for command in (["evaluate", "data.jsonl", "--out", "x"], ["estimate", "data.jsonl"]):
        assert main([*command, *argv]) == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert line.startswith("localeval: ") and said in line


@pytest.mark.parametrize("argv", [["compare", "a", "b", "--level", "1.5"], ["compare", "a", "b", "--resamples", "0"],
                                  ["agree", "l.jsonl", "r", "--level", "0"], ["report", "r", "--worst", "-1"],
                                  ["estimate", "d.jsonl", "--sample", "0"]])
def test_a_number_out_of_its_range_is_a_usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "Invalid value for" in err and "Traceback" not in err
