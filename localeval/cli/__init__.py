"""The ``localeval`` command, on typer. Thin: every command calls the Python API.

``shared`` declares the options several commands take (judge, engine, progress, cache) once; ``run``,
``report``, ``agree``, ``testset`` and ``setup`` each add one group of commands; ``app`` puts them together.
"""

from localeval.cli.app import main

__all__ = ["main"]
