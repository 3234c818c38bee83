"""Trusting the judge: agreement with human labels, and the metric's mean corrected for the judge's bias."""

from localeval.agree.labels import Labels, SampleLabel, VerdictLabel, read_labels
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
    "Labels",
    "MetricAgreement",
    "PPIResult",
    "SampleLabel",
    "VerdictLabel",
    "accuracy",
    "agree",
    "average_ranks",
    "bootstrap_ci",
    "cohen_kappa",
    "confusion_matrix",
    "format_agreement",
    "labels_to_halve",
    "pearson",
    "ppi_mean",
    "read_labels",
    "spearman",
    "to_dict",
]
