"""How the installed vLLM spells structured outputs, found by what it offers rather than by its version.

Every ask carries its own JSON schema as structured-output parameters (``structured_outputs`` from
vLLM 0.10.2 on, ``guided_decoding`` before). The grammar backend is xgrammar with whitespace switched off
at the engine level, so a model cannot spend its budget on blanks (the per-request whitespace fields are
ignored by that backend).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from localeval.errors import LocalevalError

INSTALL_HINT = "pip install 'localeval[vllm]'"
# The engine-level grammar settings: xgrammar, and no free whitespace between JSON tokens.
STRUCTURED_OUTPUTS_CONFIG = {"backend": "xgrammar", "disable_any_whitespace": True}
LEGACY_GUIDED_DECODING_CONFIG = {"guided_decoding_backend": "xgrammar", "guided_decoding_disable_any_whitespace": True}


@dataclass(frozen=True)
class StructuredOutputsApi:
    """How the installed vLLM spells structured outputs: the SamplingParams field and its params class."""

    field: str  # "structured_outputs" (vLLM >= 0.10.2) or "guided_decoding" (vLLM <= 0.11)
    params_class: Any  # StructuredOutputsParams or GuidedDecodingParams
    engine_kwargs: dict[str, Any]  # what LLM(...) takes to pick the grammar backend


def structured_outputs_api() -> StructuredOutputsApi:
    """Detect the structured-output spelling of the installed vLLM (by what it offers, not by version)."""
    sampling = importlib.import_module("vllm.sampling_params")
    if hasattr(sampling, "StructuredOutputsParams"):
        return StructuredOutputsApi(
            "structured_outputs", sampling.StructuredOutputsParams,
            {"structured_outputs_config": _structured_outputs_config()},
        )
    if hasattr(sampling, "GuidedDecodingParams"):
        return StructuredOutputsApi("guided_decoding", sampling.GuidedDecodingParams,
                                    dict(LEGACY_GUIDED_DECODING_CONFIG))
    raise LocalevalError(
        "The installed vLLM offers neither StructuredOutputsParams nor GuidedDecodingParams; "
        f"install a supported version: `{INSTALL_HINT}`."
    )


def _structured_outputs_config() -> Any:
    """The engine's grammar settings as vLLM's own config object where it has one (every version that
    has the field takes it), else as the dict recent versions also accept."""
    try:
        return importlib.import_module("vllm.config").StructuredOutputsConfig(**STRUCTURED_OUTPUTS_CONFIG)
    except (ImportError, AttributeError):
        return dict(STRUCTURED_OUTPUTS_CONFIG)


__all__ = ["INSTALL_HINT", "LEGACY_GUIDED_DECODING_CONFIG", "STRUCTURED_OUTPUTS_CONFIG", "StructuredOutputsApi",
           "structured_outputs_api"]
