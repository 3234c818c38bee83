"""One builder for every engine: the options each kind takes, Ray's absolute model path, unknown kinds."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import localeval.engine.transformers as transformers_package
from localeval.config import JudgeOptions
from localeval.engine import ray_engine, vllm_engine
from localeval.engine.build import EngineSpec, build_engine
from localeval.engine.options import RayOptions, TransformersOptions, VLLMOptions, options_model
from localeval.engine.scripted import ScriptedEngine
from localeval.errors import LocalevalError

OPTIONS = {"grammar": "outlines", "batch_size": 4, "batch_tokens": None, "threads": 2, "trust_remote_code": True}


class Recorder:
    """Stands in for an engine class: keeps what it was built with."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.args, self.kwargs = args, kwargs


def test_transformers_gets_every_option(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(vars(transformers_package), "TransformersEngine", Recorder)  # no torch import
    engine: Any = build_engine(TransformersOptions(**OPTIONS, dtype="bfloat16"), "/models/judge")
    assert engine.args == ("/models/judge",) and engine.kwargs == {**OPTIONS, "dtype": "bfloat16"}


def test_vllm_gets_its_own_options_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vllm_engine, "VLLMEngine", Recorder)
    engine: Any = build_engine(VLLMOptions(trust_remote_code=True, max_model_len=4096), "/models/judge")
    assert engine.kwargs == {"trust_remote_code": True, "max_model_len": 4096}
    with pytest.raises(LocalevalError, match=r"batch_size: no such option \(the vllm engine takes trust_remote_code"):
        VLLMOptions.from_keywords(OPTIONS)


def test_ray_replicas_get_a_vllm_spec_with_an_absolute_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(ray_engine, "RayEngine", Recorder)
    monkeypatch.chdir(tmp_path)
    engine: Any = build_engine(RayOptions(trust_remote_code=True, replicas=3, ray_address="head:6379"), "judge")
    replicas, spec = engine.args
    assert replicas == 3 and engine.kwargs == {"address": "head:6379"}
    assert spec == EngineSpec("vllm", str(tmp_path / "judge"), {"trust_remote_code": True})


def test_a_spec_builds_a_scripted_replica() -> None:
    engine = EngineSpec("scripted", options={"fingerprint": "s2", "context_window": 100})()
    assert isinstance(engine, ScriptedEngine) and engine.fingerprint == "s2" and engine.context_window == 100


def test_unknown_kinds_and_missing_folders_say_what_to_use() -> None:
    with pytest.raises(LocalevalError, match=r"unknown engine 'llamacpp'; available: transformers, vllm, ray-vllm"):
        options_model("llamacpp")
    with pytest.raises(LocalevalError, match="unknown engine 'scripted'"):  # a judge folder never runs scripted
        JudgeOptions("scripted")
    with pytest.raises(LocalevalError, match="a vllm engine needs a model folder"):
        EngineSpec("vllm")()
