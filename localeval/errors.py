class LocalevalError(Exception):
    """Base class of the errors localeval raises for a user to fix."""
