"""How a model name resolves to a checked local folder, the errors that say where to put one, and its fingerprint."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Literal

from localeval.errors import ModelNotFound
from localeval.model_folders.gguf_convert import read_source
from localeval.model_folders.gguf_judge import gguf_file, gguf_judge_folder
from localeval.model_folders.location import models_dir
from localeval.model_folders.weight_packages import DEFAULT_EMBEDDER, DEFAULT_JUDGE


def _how_to_place(target: Path) -> str:
    return (
        f"localeval never downloads models. Put the weights in {target}/ "
        "(config.json, *.safetensors and the tokenizer files, as saved by save_pretrained), "
        "or pass the path of a local model folder. "
        "`localeval models prepare` builds the two default models "
        f"({DEFAULT_JUDGE}, {DEFAULT_EMBEDDER}) from pip packages."
    )


def _is_bare_name(text: str) -> bool:
    """A model name to look up in ``models_dir()``: no path separator, not ``.``, ``..`` or ``~...``."""
    separators = [sep for sep in ("/", os.sep, os.altsep) if sep]
    return not any(sep in text for sep in separators) and text not in (".", "..") and not text.startswith("~")


def _has_weights(folder: Path, depth: int) -> bool:
    """Whether ``folder`` (or, for depth 2, a subfolder of it) holds a *.safetensors or *.bin file."""
    patterns = ["*.safetensors", "*.bin"] + (["*/*.safetensors", "*/*.bin"] if depth > 1 else [])
    return any(any(folder.glob(pattern)) for pattern in patterns)


def _model_subfolders(folder: Path) -> list[str]:
    """The names of the model folders directly inside ``folder`` (they hold a config.json or modules.json)."""
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith("."))
    except OSError:
        return []
    return [p.name for p in children if (p / "config.json").is_file() or (p / "modules.json").is_file()]


def _known_models() -> str:
    """A sentence naming the model folders that exist in ``models_dir()``."""
    found = _model_subfolders(models_dir())
    if found:
        return f"Models in {models_dir()}: {', '.join(found)}."
    return f"{models_dir()} holds no model folder yet."


def check_model_folder(folder: Path, kind: Literal["judge", "embedder"], given: str | None = None) -> Path:
    """Raise ModelNotFound unless ``folder`` holds a model's config and weights; return it."""
    flag = f"--{kind}"
    # A sentence-transformers folder describes itself in modules.json and may keep the weights one level down.
    described = (folder / "config.json").is_file() or (kind == "embedder" and (folder / "modules.json").is_file())
    weights = _has_weights(folder, depth=2 if kind == "embedder" else 1)
    if described and weights:
        return folder
    default = DEFAULT_JUDGE if kind == "judge" else DEFAULT_EMBEDDER
    inner = sorted(_model_subfolders(folder), key=lambda name: name != default)  # the default first
    if inner and not described:
        base = (given or str(folder)).rstrip("/" + os.sep)
        raise ModelNotFound(
            f"The {kind} folder {folder} is not a model but holds model folders ({', '.join(inner)}): "
            f"pass {flag} {base}/{inner[0]}" + (" or another of them." if len(inner) > 1 else ".")
        )
    missing = [] if described else ["no config.json"]
    missing += [] if weights else ["no weights file (*.safetensors or *.bin)"]
    raise ModelNotFound(
        f"The {kind} folder {folder} is not a usable model folder: it has {' and '.join(missing)} "
        "(a model folder holds config.json, *.safetensors and the tokenizer files, as save_pretrained writes "
        f"them). {_known_models()}"
    )


def resolve_model(name_or_path: str | Path | None, kind: Literal["judge", "embedder"]) -> Path:
    """The checked local folder of a model: a bare name is looked up in ``models_dir()``, anything else is a path.

    None means the default model. A bare name (no path separator) that is not in ``models_dir()``
    is also tried as a folder of the current directory. A judge may be a GGUF file (or a folder holding one and
    no safetensors): it is converted once into ``models_dir()/.gguf/`` and that folder is returned.
    """
    if name_or_path is None:
        name = DEFAULT_JUDGE if kind == "judge" else DEFAULT_EMBEDDER
        folder = models_dir() / name
        if folder.is_dir():
            return check_model_folder(folder, kind)
        raise ModelNotFound(f"The default {kind} model {name!r} is not prepared yet. " + _how_to_place(folder))
    text = str(name_or_path)
    if isinstance(name_or_path, str) and _is_bare_name(text):
        looked = [models_dir() / text, Path(text).absolute()]
    else:
        looked = [Path(text).expanduser().absolute()]
    for folder in looked:
        gguf = gguf_file(folder) if kind == "judge" else None
        if gguf is not None:
            return check_model_folder(gguf_judge_folder(gguf, models_dir()), kind)
        if folder.is_dir():
            return check_model_folder(folder, kind, given=text if folder == looked[-1] else None)
    places = " and ".join(str(folder) for folder in looked)
    raise ModelNotFound(
        f"The {kind} model {text!r} is not a local folder (looked at {places}). "
        + _how_to_place(looked[0]) + " " + _known_models()
    )


def model_fingerprint(path: Path | str) -> str:
    """A cheap identity of a model folder: its path and every file's name, size and mtime; for a folder built
    from a GGUF file, also that file's SHA-256 (its first 16 hex digits)."""
    root = Path(path).resolve()
    digest = hashlib.sha256(str(root).encode())
    for file in sorted(root.rglob("*")):
        relative = file.relative_to(root)
        if file.is_file() and not any(part.startswith(".") for part in relative.parts):
            stat = file.stat()
            digest.update(f"\0{relative.as_posix()}\0{stat.st_size}\0{stat.st_mtime_ns}".encode())
    source = read_source(root) or {}
    gguf = f"+gguf-sha256={source['sha256'][:16]}" if isinstance(source.get("sha256"), str) else ""
    return f"{root.name}@{digest.hexdigest()[:16]}{gguf}"
