"""Drive every (metric, sample) generator in lock step; one engine call per round for all asks.

Each round: advance every generator to its next yield, collect the asks, drop duplicates (the
same prompt asked by two metrics is generated once), answer what the cache holds, send the rest
to the engine in one call and all texts to embed to the embedder in one call, store answers as
they arrive, and send each answer into the generator that asked for it.

``rounds`` holds that loop; ``requests`` turns asks into requests (cache keys, long-context policy);
``generation`` calls the engine (retrying cut-off answers, bisecting failing batches); ``answers``
holds what is cached and parsed; ``usage`` the accounting.
"""

from localeval.scheduler.answers import AskFailed
from localeval.scheduler.generation import RETRY_FACTOR
from localeval.scheduler.rounds import Job, RunOutput, Scheduler
from localeval.scheduler.usage import Usage, total_usage

__all__ = ["RETRY_FACTOR", "AskFailed", "Job", "RunOutput", "Scheduler", "Usage", "total_usage"]
