"""Loading a causal LM and its tokenizer from a local folder, and the facts the decode loop needs."""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localeval.cpu_threads import default_threads
from localeval.engine.transformers.flat import FlatStep, register_attention
from localeval.engine.transformers.rooms import RoomPool
from localeval.engine.transformers.row_blocks import block_linear_layers
from localeval.errors import LocalevalError
from localeval.model_folders import check_model_folder, set_offline

if TYPE_CHECKING:
    import torch

DTYPES = ("auto", "float32", "bfloat16", "float16")  # bfloat16: bf16 weights, attention in float32


@dataclass
class LoadedModel:
    """A causal LM on its device, with its tokenizer and what decoding it needs to know."""

    model: Any
    tokenizer: Any
    device: torch.device
    dtype: str  # e.g. float32
    vocab_size: int
    context_window: int
    stop_ids: list[int]
    pad_token_id: int
    cache_kwarg: str  # the forward's name for the key/value cache
    plain_layers: bool  # every cache layer is a plain one: preallocated room and prefix reuse work
    flat: bool = True  # the model runs localeval's attention function, so flat steps work (flat.py)
    linear_failure: str | None = None  # what row_blocks' measurement found that breaks invariance, if anything
    rooms: RoomPool = field(default_factory=RoomPool)  # decode slots' key/value memory, kept between loops

    def forward(self, ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any,
                one_row: bool = False) -> torch.Tensor:
        """Logits of the last position of every row, float32. ``one_row``: a single unpadded row from
        position 0 (a shared prefix), computed with the flat steps' batch-invariant attention."""
        extra = {"one_row": True} if one_row and self.flat else {}
        out = self.model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=True,
            logits_to_keep=1,
            **{self.cache_kwarg: cache},
            **extra,
        )
        return out.logits[:, -1, :].float()

    def forward_flat(self, ids: list[int], positions: list[int], cache: Any, step: FlatStep,
                     keep: list[int]) -> torch.Tensor:
        """Logits (float32) at the flat positions ``keep`` of one flat step over the slots in ``cache``."""
        import torch

        out = self.model(
            input_ids=torch.tensor([ids], device=self.device),
            attention_mask=self._no_mask,  # a 4D mask is taken as given: transformers builds none
            position_ids=torch.tensor([positions], device=self.device),
            use_cache=True,
            logits_to_keep=torch.tensor(keep, device=self.device),
            flat_step=step,
            **{self.cache_kwarg: cache},
        )
        return out.logits[0].float()

    @functools.cached_property
    def _no_mask(self) -> torch.Tensor:
        import torch

        return torch.ones((1, 1, 1, 1), dtype=torch.bool, device=self.device)


def load_model(model_dir: Path, *, threads: int | None, device: str, trust_remote_code: bool,
               dtype: Any) -> LoadedModel:
    """The model in ``model_dir`` (checked first, loaded offline) on ``device``; ``threads`` sets torch's."""
    if isinstance(dtype, str) and dtype not in DTYPES:
        raise LocalevalError(f"the transformers engine does not take --dtype {dtype!r}; "
                             f"use one of {', '.join(DTYPES)}")
    check_model_folder(model_dir, "judge")  # a clear error before transformers sees the folder
    set_offline()
    if threads is None and str(device).startswith("cpu"):
        threads = default_threads()
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, DynamicCache
    from transformers.cache_utils import DynamicLayer

    if threads:
        torch.set_num_threads(threads)
    where = torch.device(device)
    if dtype is None:  # the CPU default: bfloat16 where the CPU computes it natively, else float32
        dtype = cpu_default_dtype() if where.type == "cpu" else "auto"
    elif isinstance(dtype, str) and dtype != "auto":
        dtype = getattr(torch, dtype)
    # localeval's attention (flat steps and shared prefixes, batch-invariant, in float32; transformers'
    # sdpa for padded fixed batches)
    attention = {"attn_implementation": register_attention()}
    tokenizer = AutoTokenizer.from_pretrained(model_dir, local_files_only=True, trust_remote_code=trust_remote_code)
    if not tokenizer.chat_template:
        raise LocalevalError(
            f"The tokenizer in {model_dir} has no chat template; use an instruct model folder "
            "(its tokenizer_config.json or chat_template.jinja must define one)."
        )
    def load(**extra: Any) -> Any:
        return AutoModelForCausalLM.from_pretrained(model_dir, local_files_only=True,
                                                    trust_remote_code=trust_remote_code, dtype=dtype,
                                                    device_map=str(where), **extra)

    try:
        model, flat = load(**attention), True
    except (ValueError, NotImplementedError):  # a model class that takes no attention function of ours
        model, flat = load(), False
    model.eval()
    linear_failure = None
    if flat:  # row blocks: a token's projections do not depend on its step's size
        linear_failure = block_linear_layers(model)[1]
    config = model.config
    stop = stop_token_ids(model, tokenizer)
    forward_parameters = inspect.signature(model.forward).parameters
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        device=where,
        dtype=str(model.dtype).removeprefix("torch."),
        vocab_size=int(model.get_output_embeddings().weight.shape[0]),
        context_window=int(getattr(config, "max_position_embeddings", 0) or 2048),
        stop_ids=stop,
        pad_token_id=tokenizer.pad_token_id if tokenizer.pad_token_id is not None else stop[0],
        cache_kwarg="cache" if "cache" in forward_parameters else "past_key_values",  # transformers < 5.x
        # Preallocated layers and prefix reuse need plain layers (no sliding window, no linear attention).
        plain_layers=all(type(layer) is DynamicLayer for layer in DynamicCache(config=config).layers),
        flat=flat,
        linear_failure=linear_failure,
    )


def cpu_default_dtype() -> Any:
    """bfloat16 on a CPU with bfloat16 dot-product instructions (AVX512_BF16 or AMX), else float32.

    With those instructions bfloat16 linear layers are several times faster than float32 (attention stays
    float32); without them (AVX2 only) bfloat16 runs on reference kernels, several times slower than float32
    (docs/cpu.md: Speed knobs).
    """
    import torch

    return torch.bfloat16 if cpu_has_bf16() else torch.float32


@functools.cache
def cpu_has_bf16() -> bool:
    """Whether this CPU has bfloat16 dot-product instructions (AVX512_BF16 or AMX), asked of torch, else
    read from the kernel's CPU flags."""
    import torch

    probes = [getattr(torch.cpu, name, None) for name in ("_is_avx512_bf16_supported", "_is_amx_tile_supported")]
    if all(callable(probe) for probe in probes):
        return any(bool(probe()) for probe in probes if probe is not None)
    try:
        return bf16_in_flags(Path("/proc/cpuinfo").read_text())
    except OSError:
        return False


def bf16_in_flags(cpuinfo: str) -> bool:
    """Whether ``/proc/cpuinfo`` text lists a bfloat16 dot-product extension.

    >>> bf16_in_flags("flags : fpu avx2 avx512f avx512_bf16"), bf16_in_flags("flags : fpu avx2 fma")
    (True, False)
    """
    flags = set(cpuinfo.split())
    return "avx512_bf16" in flags or "amx_bf16" in flags


def stop_token_ids(model: Any, tokenizer: Any) -> list[int]:
    """End-of-turn tokens: the generation config's eos ids, then the tokenizer's."""
    ids: list[int] = []
    eos = getattr(model.generation_config, "eos_token_id", None)
    for value in [*(eos if isinstance(eos, list) else [eos]), tokenizer.eos_token_id]:
        if value is not None and int(value) not in ids:
            ids.append(int(value))
    if not ids:
        raise LocalevalError("the model defines no end-of-sequence token; cannot end a constrained answer")
    return ids
