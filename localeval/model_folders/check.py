"""``localeval models check DIR``: a model folder copied by hand, read without loading it, with what to fix.

Checks what a run needs before it starts: ``config.json``, a tokenizer, a chat template (a judge), every weight
file the index names, each safetensors file whole (its header's tensors end where the file ends), the dtype
and the size. Nothing is imported beyond the standard library, so it runs on a machine without torch. A GGUF
file is read with the ``gguf`` package instead: its metadata, and whether the installed transformers can convert it.
"""

from __future__ import annotations

import json
import struct
from dataclasses import dataclass, field
from pathlib import Path

WEIGHT_INDEXES = ("model.safetensors.index.json", "pytorch_model.bin.index.json")
SINGLE_WEIGHTS = ("model.safetensors", "pytorch_model.bin")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "vocab.txt", "spiece.model")
SAFETENSORS_BYTES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "I16": 2, "I8": 1, "U8": 1,
                     "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1, "U16": 2, "U32": 4, "U64": 8}


@dataclass
class FolderCheck:
    """What the check found: facts (``ok``) and problems, each with its fix."""

    folder: Path
    kind: str = "judge"
    ok: list[str] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    complete: str = "the folder looks complete"  # the verdict when nothing is wrong

    def lines(self) -> list[str]:
        """The report: one line per fact, one per problem, then the verdict."""
        out = [f"checking {self.folder} as {'an' if self.kind == 'embedder' else 'a'} {self.kind}"]
        out += [f"  ok: {line}" for line in self.ok]
        out += [f"  problem: {line}" for line in self.problems]
        out.append(f"{len(self.problems)} problem(s): fix them before a run" if self.problems
                   else self.complete)
        return out


def _read_json(path: Path, check: FolderCheck) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        check.problems.append(f"{path.name} cannot be read as JSON ({error}); copy it again from the model's source")
        return None
    return data if isinstance(data, dict) else None


def safetensors_facts(path: Path) -> tuple[set[str], int]:
    """The dtypes and the parameter count of one safetensors file; ValueError when the file is cut short."""
    size = path.stat().st_size
    with path.open("rb") as stream:
        head = stream.read(8)
        if len(head) < 8:
            raise ValueError("shorter than a safetensors header")
        (length,) = struct.unpack("<Q", head)
        if length > size - 8:
            raise ValueError(f"its header says {length} bytes but the file has {size}")
        header = json.loads(stream.read(length))
    dtypes, params, end = set(), 0, 0
    for name, tensor in header.items():
        if name == "__metadata__":
            continue
        dtypes.add(tensor["dtype"])
        count = 1
        for dim in tensor["shape"]:
            count *= dim
        params += count
        end = max(end, tensor["data_offsets"][1])
    if 8 + length + end != size:
        raise ValueError(f"its tensors end at byte {8 + length + end} but the file has {size} bytes (cut short?)")
    return dtypes, params


def _weights(folder: Path, check: FolderCheck) -> list[Path]:
    for index_name in WEIGHT_INDEXES:
        index = folder / index_name
        if index.is_file():
            data = _read_json(index, check) or {}
            names = sorted(set((data.get("weight_map") or {}).values()))
            missing = [n for n in names if not (folder / n).is_file()]
            if missing:
                check.problems.append(f"{index_name} names {len(names)} weight files, {len(missing)} missing: "
                                      f"{', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''}; copy them into "
                                      f"{folder}")
            else:
                check.ok.append(f"{index_name}: all {len(names)} weight files present")
            return [folder / n for n in names if (folder / n).is_file()]
    singles = [folder / n for n in SINGLE_WEIGHTS if (folder / n).is_file()]
    if not singles:
        singles = sorted(folder.glob("*.safetensors"))
    if not singles:
        gguf = sorted(folder.glob("*.gguf"))
        fix = (f"it holds {len(gguf)} GGUF files: pass one of them as --judge (it is converted once)"
               if gguf else "copy the model's *.safetensors files (and model.safetensors.index.json) into it")
        check.problems.append(f"no weights (model.safetensors, an index or pytorch_model.bin); {fix}")
    return singles


def check_folder(folder: Path | str) -> FolderCheck:
    """Read ``folder`` as a judge (or, holding ``modules.json``, a sentence-transformers embedder), or a GGUF file
    (or a folder holding one and no safetensors) as ``--judge`` would convert it."""
    folder = Path(folder).expanduser()
    from localeval.model_folders.gguf_judge import gguf_file

    gguf = gguf_file(folder)
    if gguf is not None:  # a GGUF file, or a folder holding one and no safetensors: what --judge would convert
        return check_gguf(gguf)
    if not folder.is_dir() and len(folder.parts) == 1:  # a bare name: the models folder's entry, as --judge reads it
        from localeval.model_folders.location import models_location

        folder = models_location()[0] / folder
    check = FolderCheck(folder)
    if not folder.is_dir():
        check.problems.append("not a folder; give the path of the folder that holds config.json")
        return check
    check.kind = "embedder" if (folder / "modules.json").is_file() else "judge"
    config = _read_json(folder / "config.json", check) if (folder / "config.json").is_file() else None
    if config is None and not (folder / "config.json").is_file():
        nested = sorted(p.parent.name for p in folder.glob("*/config.json"))
        if nested:
            check.problems.append(f"no config.json: this folder holds model folders ({', '.join(nested)}); "
                                  "check one of them")
            return check
        check.problems.append("no config.json; copy the model's config.json into it")
    elif config is not None:
        check.ok.append(f"config.json: {config.get('model_type', 'no model_type')} "
                        f"{'/'.join(config.get('architectures') or []) or ''}".rstrip())
    tokenizers = [n for n in TOKENIZER_FILES if (folder / n).is_file()]
    if tokenizers:
        check.ok.append(f"tokenizer: {', '.join(tokenizers)}")
    else:
        check.problems.append("no tokenizer (tokenizer.json, tokenizer.model or vocab files); copy them from the "
                              "model's source")
    if check.kind == "judge":
        _chat_template(folder, check)
    _weight_facts(folder, check, config)
    return check


def check_gguf(path: Path) -> FolderCheck:
    """Read a GGUF file's metadata as a judge's: what it is, and whether it converts into a judge here."""
    from localeval.errors import LocalevalError
    from localeval.model_folders.gguf_facts import check_architecture, read_gguf

    check = FolderCheck(path, complete="the file can be converted into a judge")
    try:
        facts = read_gguf(path)
    except LocalevalError as error:
        check.problems.append(str(error))
        return check
    check.ok.extend(facts.lines())
    if not facts.chat_template:
        check.problems.append("no chat template in the file (tokenizer.chat_template): a judge needs an instruct "
                              "model's; use a GGUF of the instruct release")
    try:
        check_architecture(facts)
    except ImportError:
        check.ok.append("transformers is not installed here: whether it converts is not known")
    except LocalevalError as error:
        check.problems.append(str(error))
    else:
        check.ok.append(f"transformers can dequantize {facts.architecture}: pass it as --judge {path}")
    return check


def _chat_template(folder: Path, check: FolderCheck) -> None:
    if (folder / "chat_template.jinja").is_file() or (folder / "chat_template.json").is_file():
        check.ok.append("chat template: its own file")
        return
    tokenizer_config = folder / "tokenizer_config.json"
    data = _read_json(tokenizer_config, check) if tokenizer_config.is_file() else None
    if data and data.get("chat_template"):
        check.ok.append("chat template: in tokenizer_config.json")
    else:
        check.problems.append("no chat template (chat_template.jinja, or chat_template in tokenizer_config.json): "
                              "a judge needs an instruct model's template; copy it from the model's source")


def _weight_facts(folder: Path, check: FolderCheck, config: dict | None) -> None:
    files = _weights(folder, check)
    dtypes: set[str] = set()
    params = 0
    for path in files:
        if path.suffix != ".safetensors":
            continue
        try:
            found, count = safetensors_facts(path)
        except (OSError, ValueError, KeyError, json.JSONDecodeError) as error:
            check.problems.append(f"{path.name} is not a whole safetensors file: {error}; copy it again")
            continue
        dtypes |= found
        params += count
    size = sum(path.stat().st_size for path in files)
    if files:
        stated = (config or {}).get("torch_dtype") or (config or {}).get("dtype")
        check.ok.append(f"weights: {len(files)} file(s), {size / 1e9:.2f} GB"
                        + (f", {params / 1e6:,.0f}M parameters" if params else "")
                        + (f", stored as {'/'.join(sorted(dtypes))}" if dtypes else "")
                        + (f" (config says {stated})" if stated else ""))
