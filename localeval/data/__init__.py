"""Samples: loading them from files or records, and checking them against what metrics need."""

from localeval.data.errors import DataError, Problem
from localeval.data.load import as_samples, load_samples, samples_from_records
from localeval.data.sample import Sample
from localeval.data.validate import validate

__all__ = ["DataError", "Problem", "Sample", "as_samples", "load_samples", "samples_from_records", "validate"]
