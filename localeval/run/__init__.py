"""The run wing: one run of ``evaluate`` from the checks made before any model loads to its result.

``start`` is the owner (``evaluate_run``): ``source`` and ``checks`` read and check the data, the run folder and
the judge cache; ``models`` loads the judge and the embedder; ``scheduling`` picks the chunk size and builds the
scheduler and the chunk scorer; ``chunk_loop`` scores the chunks and writes each to the run folder;
``assemble`` joins them into the ``EvaluationResult``; ``record`` is summary.json's record of the run.
"""
