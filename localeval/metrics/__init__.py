"""The metrics: each a generator of asks plus a pure score function."""

from localeval.metrics.registry import DEFAULT_METRICS, METRICS, MetricSpec, parse_metric, parse_metrics

__all__ = ["DEFAULT_METRICS", "METRICS", "MetricSpec", "parse_metric", "parse_metrics"]
