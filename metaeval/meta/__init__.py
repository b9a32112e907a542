"""Meta-evaluation criteria: rank correlation, discriminative power, significance,
informativeness (maximum-entropy reconstruction).

Every criterion takes score arrays (S systems x T topics) or tidy DataFrames, not files, so it
can be used alone from Python, from the CLI on real runs, and inside a study.
"""

from metaeval.meta._resampling import Resamples, resamples
from metaeval.meta.discrimination import (
    DiscriminativePowerResult,
    asl_curve_frame,
    discriminative_power,
    plot_asl_curves,
)
from metaeval.meta.inconsistency import InconsistencyResult, significance_inconsistency
from metaeval.meta.informativeness import InformativenessResult, informativeness
from metaeval.meta.maxent import MaxEntResult, expectation_for, maxent_distribution
from metaeval.meta.rankcorr import TauBootstrapCI, kendall_tau, tau_ap, tau_bootstrap_ci
from metaeval.meta.significance import benjamini_hochberg, compare, holm
from metaeval.meta.swap import SwapResult, swap_method

__all__ = [
    "resamples",
    "Resamples",
    "kendall_tau",
    "tau_ap",
    "tau_bootstrap_ci",
    "TauBootstrapCI",
    "discriminative_power",
    "DiscriminativePowerResult",
    "asl_curve_frame",
    "plot_asl_curves",
    "swap_method",
    "SwapResult",
    "significance_inconsistency",
    "InconsistencyResult",
    "compare",
    "holm",
    "benjamini_hochberg",
    "informativeness",
    "InformativenessResult",
    "maxent_distribution",
    "expectation_for",
    "MaxEntResult",
]
