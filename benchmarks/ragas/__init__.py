"""The Ragas 0.4.3 side of the comparisons. Runs only in Ragas' own environment, ``benchmarks/.ragas-venv``
(``bash benchmarks/ragas/setup_ragas.sh``): ``benchmarks/.ragas-venv/bin/python -m benchmarks.ragas.ragas_run``."""
