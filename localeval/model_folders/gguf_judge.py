"""A GGUF file as a judge (``--judge model.gguf``, or a folder holding one and no safetensors): converted once into
a folder under the models folder keyed by the file's SHA-256, ``.gguf/<sha256[:16]>-<stem>``, reused after."""

from __future__ import annotations

import hashlib
import json
import os
import sys
from pathlib import Path

from localeval.model_folders.folder_build import build_folder
from localeval.model_folders.gguf_convert import dequantize, write_source
from localeval.model_folders.gguf_facts import check_architecture, read_gguf

CONVERTED = ".gguf"  # under the models folder
HASHES = "hashes.json"  # in it: each GGUF's SHA-256 by path, size and mtime, so a run hashes a file once


def gguf_file(path: Path) -> Path | None:
    """The GGUF file ``path`` names: the file itself, or a folder's only ``*.gguf`` where it has no safetensors."""
    if path.is_file():
        return path if path.suffix.lower() == ".gguf" else None
    if not path.is_dir() or any(path.glob("*.safetensors")):
        return None
    found = sorted(path.glob("*.gguf"))
    return found[0] if len(found) == 1 else None


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
