"""A GGUF file dequantized once into a model folder the engines load: safetensors, config, tokenizer and chat
template, with a record of where the weights came from (``localeval-source.json``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from localeval.errors import LocalevalError
from localeval.model_folders.gguf_facts import check_architecture, read_gguf
from localeval.model_folders.offline import set_offline

SOURCE_RECORD = "localeval-source.json"


def dequantize(gguf_path: Path, out: Path, dtype: str = "bfloat16", fallback_template: str | None = None) -> list[str]:
    """Dequantize ``gguf_path`` into the folder ``out`` as ``dtype`` safetensors; lines that say what was done.

    The architecture is checked before anything loads. transformers refuses to save a model loaded from a GGUF,
    so a plain one is rebuilt from its config (without the quantization config) and given the weights. The GGUF's
    chat template must survive into the saved tokenizer; ``fallback_template`` stands in where the file has none.
    """
    facts = read_gguf(gguf_path)
    check_architecture(facts)
    set_offline()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch_dtype = getattr(torch, dtype)
    folder, name = gguf_path.parent, gguf_path.name
    tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name, local_files_only=True)
    loaded = AutoModelForCausalLM.from_pretrained(folder, gguf_file=name, dtype=torch_dtype, local_files_only=True)
    config = loaded.config
    if hasattr(config, "quantization_config"):
        del config.quantization_config
    model = AutoModelForCausalLM.from_config(config, dtype=torch_dtype)
    model.load_state_dict(loaded.state_dict(), strict=True)
    del loaded
    model.save_pretrained(out, safe_serialization=True)
    model.generation_config.save_pretrained(out)
    template = facts.chat_template or fallback_template
    if not tokenizer.chat_template and template:
        tokenizer.chat_template = template
    tokenizer.save_pretrained(out)
    saved = AutoTokenizer.from_pretrained(out, local_files_only=True).chat_template
    if template and saved != template:
        raise LocalevalError(f"the chat template of {gguf_path} did not survive into the tokenizer saved in {out}")
    size = sum(file.stat().st_size for file in out.glob("*.safetensors"))
    return [f"dequantized {gguf_path.name} ({facts.architecture}, {facts.file_type}) into {dtype} "
            f"safetensors, {size / 1e9:.2f} GB" + ("" if facts.chat_template else ", its chat template supplied")]


def write_source(out: Path, record: dict[str, Any]) -> None:
    """Record where a folder's weights came from, beside them."""
    import transformers

    record = {**record, "converted_with": f"transformers {transformers.__version__}"}
    (out / SOURCE_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")


def read_source(folder: Path) -> dict[str, Any] | None:
    """The source record of a folder built from a GGUF, or None."""
    try:
        data = json.loads((folder / SOURCE_RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None
