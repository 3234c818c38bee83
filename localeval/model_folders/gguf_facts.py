"""What a GGUF file says of itself (architecture, quantization, context length, chat template, size), read with
the ``gguf`` package without loading the model, and whether the installed transformers can dequantize it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.errors import LocalevalError

# GGUF's spelling of an architecture where transformers' list spells it otherwise (as its own loader maps them).
GGUF_SPELLINGS = {"qwen2moe": "qwen2_moe", "qwen3moe": "qwen3_moe", "gpt-oss": "gpt_oss", "minimax-m2": "minimax_m2"}
NOT_JUDGES = {"general", "tokenizer", "t5", "umt5"}  # entries of that list that are not causal language models


@dataclass(frozen=True)
class GgufFacts:
    """A GGUF file's metadata: what ``models check`` prints and what conversion checks first."""

    path: Path
    architecture: str
    name: str
    file_type: str  # the quantization, e.g. MOSTLY_Q4_K_M
    context_length: int | None
    chat_template: str | None
    parameters: int
    size: int

    def lines(self) -> list[str]:
        """One fact a line, as ``models check`` reports them."""
        context = f"{self.context_length:,} tokens" if self.context_length else "not stated"
        return [f"GGUF: {self.name or self.path.name}, architecture {self.architecture}",
                f"quantization: {self.file_type}",
                f"context length: {context}",
                f"chat template: {'present' if self.chat_template else 'absent'}",
                f"weights: {self.parameters / 1e6:,.0f}M parameters, {self.size / 1e9:.2f} GB"]


def _field(reader: Any, key: str) -> Any:
    field = reader.fields.get(key)
    return None if field is None else field.contents()


def read_gguf(path: Path) -> GgufFacts:
    """The metadata of the GGUF file ``path``; LocalevalError when it is not one."""
    import gguf

    try:
        reader = gguf.GGUFReader(path)
    except (OSError, ValueError, IndexError) as error:
        raise LocalevalError(f"{path} cannot be read as a GGUF file ({error}); copy it again") from error
    architecture = str(_field(reader, "general.architecture") or "unknown")
    file_type = _field(reader, "general.file_type")
    try:
        quantization = gguf.LlamaFileType(file_type).name if file_type is not None else "not stated"
    except ValueError:
        quantization = f"file type {file_type}"
    context = _field(reader, f"{architecture}.context_length")
    template = _field(reader, "tokenizer.chat_template")
    return GgufFacts(path=path, architecture=architecture, name=str(_field(reader, "general.name") or ""),
                     file_type=quantization, context_length=int(context) if context is not None else None,
                     chat_template=str(template) if template else None,
                     parameters=sum(int(tensor.n_elements) for tensor in reader.tensors), size=path.stat().st_size)


def supported_architectures() -> list[str]:
    """The GGUF architectures the installed transformers can dequantize into a causal language model."""
    from transformers.modeling_gguf_pytorch_utils import GGUF_SUPPORTED_ARCHITECTURES

    return sorted(set(GGUF_SUPPORTED_ARCHITECTURES) - NOT_JUDGES)


def check_architecture(facts: GgufFacts, supported: list[str] | None = None) -> None:
    """Raise, naming the architecture and the supported list, unless transformers can dequantize the file."""
    supported = supported_architectures() if supported is None else supported
    if GGUF_SPELLINGS.get(facts.architecture, facts.architecture) in supported:
        return
    raise LocalevalError(
        f"{facts.path} holds a {facts.architecture!r} model, which the installed transformers cannot dequantize "
        f"into a judge; it can for {', '.join(supported)}. Use a GGUF of one of those, or the model's safetensors "
        "release as a model folder")
