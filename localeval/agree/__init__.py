"""Trusting the judge: agreement with human labels (a run's or WikiEval-style pairs'), and the bias-corrected mean."""

from localeval.agree.labels import Labels, SampleLabel, VerdictLabel, read_labels
from localeval.agree.pair_count import PairCount, count_pairs, pairwise_accuracy
from localeval.agree.pair_files import Pair, default_pairs_folder, read_pairs
from localeval.agree.pair_run import run_pairs
from localeval.agree.pair_table import FileAgreement, PairsReport, format_pairs_report
from localeval.agree.ppi import PPIResult, labels_to_halve, ppi_mean
from localeval.agree.report import AgreementReport, Estimate, MetricAgreement, agree, format_agreement, to_dict
from localeval.agree.stats import (
    accuracy,
    average_ranks,
    bootstrap_ci,
    cohen_kappa,
    confusion_matrix,
    pearson,
    spearman,
)

__all__ = [
    "AgreementReport",
    "Estimate",
    "FileAgreement",
    "Labels",
    "MetricAgreement",
    "PPIResult",
    "Pair",
    "PairCount",
    "PairsReport",
    "SampleLabel",
    "VerdictLabel",
    "accuracy",
    "agree",
    "average_ranks",
    "bootstrap_ci",
    "cohen_kappa",
    "confusion_matrix",
    "count_pairs",
    "default_pairs_folder",
    "format_agreement",
    "format_pairs_report",
    "labels_to_halve",
    "pairwise_accuracy",
    "pearson",
    "ppi_mean",
    "read_labels",
    "read_pairs",
    "run_pairs",
    "spearman",
    "to_dict",
]
