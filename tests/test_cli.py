"""The ``localeval`` command: every command's --help lists its options; shared options are the same everywhere."""

from __future__ import annotations

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
    import localeval.api

    seen: list[Any] = []

    def load_judge(path: object, options: object = None) -> None:
        seen.append(options)
        raise LocalevalError("stopped after reading the command line")

    monkeypatch.setattr(localeval.api, "load_judge", load_judge)
    assert main(["testset", str(tmp_path), "--size", "2", "--out", str(tmp_path / "t.jsonl"), "--engine", "vllm",
                 "--batch-tokens", "0", "--batch-size", "3"]) == 1
    options = seen[0]
    assert (options.engine, options.batch_tokens, options.batch_size) == ("vllm", None, 3)
    assert options.extra["enforce_eager"] is None  # vLLM's engine decides: eager on a CPU build
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


def test_an_interrupt_exits_130_with_how_to_resume(monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    import localeval.api

    def interrupted(*args: object, **kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(localeval.api, "evaluate_run", interrupted)
    assert main(["evaluate", "data.jsonl", "--out", "x", "--no-progress"]) == 130
    assert capsys.readouterr().err.splitlines() == [
        "localeval: interrupted. The judge's answers so far are kept in x/judge.sqlite; to resume, run the same "
        "command again:",
        "  localeval evaluate data.jsonl --out x --no-progress"]


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
    (["--drafts", "-1"], "--drafts takes 0 (off) or more draft tokens, not -1"),
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
