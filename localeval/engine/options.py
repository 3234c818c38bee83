"""The transformers engine's options as one typed model: the Python API's keyword arguments are checked against it
(an unknown name or a wrong value is an error that lists what the engine takes) before any model loads."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localeval.errors import LocalevalError

DEFAULT_BATCH_SIZE = 16  # most rows decoding at once
DEFAULT_BATCH_TOKENS = 16384  # token budget of a padded batch


class TransformersOptions(BaseModel):
    """How the transformers engine loads and runs the judge (``TransformersEngine``'s arguments)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    grammar: Literal["xgrammar", "outlines"] = "xgrammar"
    batch_size: int = Field(DEFAULT_BATCH_SIZE, ge=1)
    batch_tokens: int | None = Field(DEFAULT_BATCH_TOKENS, ge=1)  # None: rows only
    threads: int | None = Field(None, ge=1)
    trust_remote_code: bool = False
    dtype: Literal["auto", "float32", "bfloat16", "float16"] = "auto"
    stop_repeats: bool = False
    drafts: int | None = Field(None, ge=0)

    @classmethod
    def from_keywords(cls, given: dict[str, Any]) -> TransformersOptions:
        """The options the API's keyword arguments name; an unknown name or a bad value is a LocalevalError."""
        try:
            return cls(**given)
        except ValidationError as error:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in error.errors())
            raise LocalevalError(f"engine options: {problems} (the transformers engine takes "
                                 f"{', '.join(cls.model_fields)})") from None

    def extra(self) -> dict[str, Any]:
        """The options ``JudgeOptions.extra`` carries (those the run record keeps apart from its own fields)."""
        chosen: dict[str, Any] = {"dtype": self.dtype} if self.dtype != "auto" else {}
        if self.stop_repeats:
            chosen["stop_repeats"] = True
        if self.drafts is not None:
            chosen["drafts"] = self.drafts
        return chosen


__all__ = ["DEFAULT_BATCH_SIZE", "DEFAULT_BATCH_TOKENS", "TransformersOptions"]
