"""localeval's benchmarks, one folder per question, each with its scripts and its ``results/``.

Run every script as a module from the repository root, e.g. ``python -m benchmarks.speed.speed_vs_ragas --n 10``
(``benchmarks/README.md`` lists the commands). Nothing here is part of the ``localeval`` package.
"""
