"""The engines' typed options are the one source of the CLI's engine flags, and engines declare their abilities."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import typer

from localeval.cli.app import build_app
from localeval.config import JudgeOptions
from localeval.engine.base import Abilities, Engine, abilities_of
from localeval.engine.llamacpp import LlamaCppEngine
from localeval.engine.options import ENGINE_OPTIONS, engine_fields
from localeval.engine.ray_engine import RayEngine
from localeval.engine.scripted import ScriptedEngine, rule_script
from localeval.engine.server import ServerEngine
from localeval.engine.transformers import TransformersEngine
from localeval.engine.vllm_engine import VLLMEngine
from localeval.errors import OptionError

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", ["evaluate", "estimate", "testset", "agree"])
def test_each_command_lists_every_engine_option_once(name: str) -> None:
    command = typer.main.get_command(build_app()).commands[name]  # type: ignore[attr-defined]
    flags = Counter(flag for param in command.params for flag in [*param.opts, *param.secondary_opts])
    offered = {flag for keyword, (declared, _) in engine_fields().items() for flag in declared.split("/")}
    assert offered <= set(flags) and all(flags[f] == 1 for f in offered)
    every = {keyword for model in ENGINE_OPTIONS.values() for keyword in model.keywords()}
    assert every - set(engine_fields()) == {"seed", "progress"}  # the run's seed and vLLM's bars: no flags of their own
    help_of = {p.name: p.help for p in command.params}
    assert all(help_of[k] for k in engine_fields())


def test_engines_declare_their_abilities_in_their_type() -> None:
    assert TransformersEngine.abilities == Abilities(chunk_samples=512, grows_in_place=True)
    assert ServerEngine.abilities.soft == "checked" and not ServerEngine.abilities.grows_in_place
    assert VLLMEngine.abilities.chunk_samples == RayEngine.abilities.chunk_samples == 4096
    assert all(issubclass(e, Engine) for e in (TransformersEngine, ServerEngine, VLLMEngine, RayEngine, ScriptedEngine))
    assert abilities_of(ScriptedEngine(rule_script)) == Abilities()
    assert abilities_of(object()) == Abilities()  # an engine from elsewhere: the defaults, no probing
    assert {m.engine_type() for m in ENGINE_OPTIONS.values()} == {TransformersEngine, VLLMEngine, RayEngine,
                                                                 ServerEngine, LlamaCppEngine}
    assert LlamaCppEngine.abilities.soft == "checked"
    for part in ("api.py", "scheduler/generation.py", "engine/base.py", "config.py"):
        text = (ROOT / "localeval" / part).read_text()
        assert "getattr(engine" not in text and "getattr(self.engine" not in text and "__name__]" not in text


def test_the_url_scheme_is_checked_once_the_same_everywhere() -> None:
    said = "--server-url takes http:// or https:// URLs, not 'gpu-box:8000'"
    with pytest.raises(OptionError, match=said):
        ServerEngine("gpu-box:8000")
    with pytest.raises(OptionError, match=said):
        JudgeOptions.server("gpu-box:8000")
    package = "\n".join(p.read_text() for p in (ROOT / "localeval").rglob("*.py"))
    assert package.count('("http://", "https://")') == 1


def test_the_record_keeps_its_shape_for_every_engine() -> None:
    keys = ["engine", "grammar", "batch_size", "batch_tokens", "threads", "trust_remote_code", "replicas",
            "ray_address", "extra"]
    for options in (JudgeOptions(threads=1, dtype="float32"), JudgeOptions("vllm", seed=3),
                    JudgeOptions("ray-vllm", replicas=2), JudgeOptions.server("http://box/v1", timeout=5.0)):
        record = options.to_record()
        assert list(record) == keys and JudgeOptions.from_record(record) == options
    assert JudgeOptions(threads=1, dtype="float32").to_record()["extra"] == {"dtype": "float32"}
    assert JudgeOptions.server("http://box/v1").extra == {"urls": ["http://box/v1"]}
