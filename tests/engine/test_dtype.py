"""``--dtype`` for the transformers engine: bfloat16 weights with attention computed in float32."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import torch

from localeval.cli.shared import Shared
from localeval.engine.base import Request
from localeval.engine.transformers.flat import flat_attention
from localeval.errors import LocalevalError


def test_dtype_reaches_the_transformers_engine_only_when_asked() -> None:
    assert Shared().judge_options(0).extra == {}  # auto: float32 on a CPU, as before; fingerprints unchanged
    assert Shared.of(dtype="bfloat16").judge_options(0).extra == {"dtype": "bfloat16"}
    assert Shared.of(engine="vllm", dtype="bfloat16").judge_options(0).extra["dtype"] == "bfloat16"


def test_drafts_reach_the_transformers_engine_only_when_asked() -> None:
    assert "drafts" not in Shared().judge_options(0).extra  # the engine's own default
    assert Shared.of(drafts=0).judge_options(0).extra == {"drafts": 0}
    with pytest.raises(LocalevalError, match="--drafts works on the transformers engine only"):
        Shared.of(engine="vllm", drafts=4).judge_options(0)
    with pytest.raises(LocalevalError, match="drafts -1: input should be greater than or equal to 0"):
        Shared.of(drafts=-1).judge_options(0)


def test_an_unknown_dtype_is_refused_before_any_model_loads(tmp_path: Path) -> None:
    from localeval.engine.transformers.loading import load_model

    with pytest.raises(LocalevalError, match="does not take --dtype 'int4'; use one of auto, float32, bfloat16"):
        load_model(tmp_path / "no-model", threads=1, device="cpu", trust_remote_code=False, dtype="int4")


class _Module(torch.nn.Module):
    num_key_value_groups = 3  # 6 query heads over 2 key/value heads, as grouped-query models have
    is_causal = True


def test_float32_attention_is_float32_sdpa_returned_in_bfloat16() -> None:
    gen = torch.Generator().manual_seed(0)
    query = torch.randn(2, 6, 1, 16, generator=gen).bfloat16()
    key, value = (torch.randn(2, 2, 9, 16, generator=gen).bfloat16() for _ in range(2))
    mask = torch.ones(2, 1, 1, 9, dtype=torch.bool)
    mask[1, ..., :4] = False  # the second row is left padded
    out, _ = flat_attention(_Module(), query, key, value, mask, scaling=0.25)  # outside a flat step: padded batches
    assert out.dtype == torch.bfloat16 and out.shape == (2, 1, 6, 16)
    keys = key.float().repeat_interleave(3, dim=1)
    values = value.float().repeat_interleave(3, dim=1)
    expected = torch.nn.functional.scaled_dot_product_attention(query.float(), keys, values, attn_mask=mask,
                                                                scale=0.25).transpose(1, 2)
    assert torch.allclose(out.float(), expected, atol=1e-2)
    assert torch.equal(out, expected.bfloat16())  # computed in float32, rounded once at the end


@pytest.mark.model
def test_bfloat16_engine_answers_valid_json(judge_dir) -> None:
    from localeval.engine.transformers import TransformersEngine
    from localeval.engine.transformers.flat import ATTENTION

    engine = TransformersEngine(judge_dir, dtype="bfloat16", batch_size=4, threads=1)
    assert engine.fingerprint.endswith(":bfloat16:invariant") and engine.model.dtype == torch.bfloat16
    assert engine.model.config._attn_implementation == ATTENTION
    schema = {"type": "object", "properties": {"reason": {"type": "string", "maxLength": 60},
                                               "verdict": {"type": "integer", "enum": [0, 1]}},
              "required": ["reason", "verdict"], "additionalProperties": False}
    asks = [Request(messages=(("system", "Answer only with JSON."), ("user", f"Is {city} in France?")),
                    schema=schema, max_tokens=60) for city in ("Paris", "Berlin", "Lyon", "Oslo", "Nice")]
    results = engine.generate(asks)
    assert len(results) == len(asks)
    for result in results:
        (choice,) = result.choices
        assert choice.finish_reason == "stop"
        jsonschema.validate(json.loads(choice.text), schema)


def test_the_cpu_default_is_bfloat16_only_on_a_cpu_with_bfloat16_units(monkeypatch) -> None:
    from localeval.engine.transformers import loading

    monkeypatch.setattr(loading, "cpu_has_bf16", lambda: True)
    assert loading.cpu_default_dtype() is torch.bfloat16
    monkeypatch.setattr(loading, "cpu_has_bf16", lambda: False)  # AVX2 only: bfloat16 is ~5x slower there
    assert loading.cpu_default_dtype() is torch.float32


def test_bfloat16_detection_agrees_with_the_kernel_s_cpu_flags() -> None:
    from localeval.engine.transformers.loading import bf16_in_flags, cpu_has_bf16

    cpuinfo = Path("/proc/cpuinfo")
    if not cpuinfo.exists():
        pytest.skip("no /proc/cpuinfo on this system to compare torch's probe with")
    assert cpu_has_bf16() == bf16_in_flags(cpuinfo.read_text())
    assert not bf16_in_flags("flags : fpu sse2 avx2 fma avx512f avx512bw")
    assert bf16_in_flags("flags : fpu avx512f amx_bf16 amx_tile")


@pytest.mark.model
def test_a_judge_loaded_without_a_dtype_takes_the_cpu_default(judge_dir) -> None:
    from localeval.engine.transformers import TransformersEngine
    from localeval.engine.transformers.loading import cpu_has_bf16

    engine = TransformersEngine(judge_dir, batch_size=2, threads=1)
    expected = "bfloat16" if cpu_has_bf16() else "float32"
    assert engine.dtype == expected and engine.fingerprint.endswith(f":{expected}:invariant")
    assert TransformersEngine(judge_dir, batch_size=2, threads=1, dtype="float32").dtype == "float32"
