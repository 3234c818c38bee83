"""Loading stays local: every Hugging Face hub access switched off before transformers loads a model."""

from __future__ import annotations

import os
import sys


def set_offline() -> None:
    """Switch off every Hugging Face hub access; call before transformers loads a model."""
    for var in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
        os.environ[var] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    # huggingface_hub reads the variable once, at import: patch it if it is already imported.
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None:
        constants.HF_HUB_OFFLINE = True  # type: ignore[attr-defined]
