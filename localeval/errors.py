"""The errors localeval raises on purpose: each one says what to do about it."""


class LocalevalError(Exception):
    """Base class of the errors localeval raises for a user to fix."""


class ModelNotFound(LocalevalError):
    """A model name or path that is not a local model folder (localeval never downloads)."""
