"""The errors localeval raises on purpose: each one says what to do about it; and ``describe``, a value as
such a message shows it."""


class LocalevalError(Exception):
    """Base class of the errors localeval raises for a user to fix."""


class ModelNotFound(LocalevalError):
    """A model name or path that is not a local model folder (localeval never downloads)."""


class JudgeDied(LocalevalError):
    """The judge engine can answer nothing more: its process is gone, or every ask of a call failed the same
    way. The run stops; ``cause`` is the engine's own error, ``kept`` what became of the answers so far."""

    def __init__(self, cause: str, kept: str = "") -> None:
        self.cause = cause
        self.kept = kept
        super().__init__(f"the judge engine died ({cause}); the run stopped" + (f". {kept}" if kept else ""))


def describe(value: object) -> str:
    """A value for a message: its type and a short repr, e.g. ``int 42``."""
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 60 else text[:57] + '...'}"
