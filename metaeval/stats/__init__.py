r"""Statistics of IR evaluation on (systems x topics) score matrices.

Every function takes per-topic scores, an (S systems x T topics) array or a tidy frame with
columns ``run``, ``topic``, ``value`` (what ``metaeval.evaluate(..., per_topic=True)`` gives for
one measure), and returns a result object with ``to_frame()`` or a frame. The methods are
described, with their papers and a worked example each, in docs/methods.md §7 and §11-§15.

=========================================================  ======================================
Statistic                                                  Module
=========================================================  ======================================
Paired t, Wilcoxon signed-rank, sign, randomisation and    :mod:`~metaeval.stats.paired`
bootstrap tests of two systems or every pair of a declared
family, with estimates, intervals and effect sizes
(:math:`d_z`, :math:`\bar z / \sqrt{V_E}`)
Holm, Benjamini-Hochberg, Westfall-Young max-T / min-P     :mod:`~metaeval.stats.multiplicity`
Two-way ANOVA without replication, Tukey HSD (studentised  :mod:`~metaeval.stats.anova`
and randomised), simultaneous intervals
Topic-set-size design (paired t, one-way ANOVA, interval   :mod:`~metaeval.stats.topic_set_size`
width), power and minimum detectable difference
Generalizability theory: G-study, D-study, topics needed,  :mod:`~metaeval.stats.gtheory`
the expected Kendall's tau
tau_AP_a, tau_AP_b, rank-biased overlap with ties          :mod:`~metaeval.stats.rankcorr`
Type I, II and III error rates of the tests on collections :mod:`~metaeval.stats.error_rates`
with a known truth
=========================================================  ======================================

Who computes what. **scipy** gives the paired t-test and its interval (``ttest_rel``), the
Wilcoxon p-value (``wilcoxon``), the BCa and percentile bootstrap intervals (``bootstrap``, on
metaeval's own resamples), the Benjamini-Hochberg adjustment (``false_discovery_control``), and
every distribution function: binomial, F, studentised range (Tukey), noncentral t and F (power),
chi-square (G-study intervals). **Written here**: the Hodges-Lehmann estimate and its interval,
the sign test's interval, the randomisation test and its inverted interval, Sakai's bootstrap
ASL, Holm, Westfall-Young, the ANOVA sums of squares, the randomised Tukey HSD, the topic-set-size
searches, every G-theory estimator and interval, tau_AP_a, tau_AP_b and the RBO variants.
**statsmodels** computes nothing at run time: the test suite checks the ANOVA, Holm and
Benjamini-Hochberg against it.

The module :mod:`metaeval.stats.anova` and its function :func:`anova` share a name: after
``import metaeval.stats``, ``metaeval.stats.anova`` is the function. Import the module's other
names from it directly (``from metaeval.stats.anova import tukey_hsd``) or from here.
"""

from metaeval.stats.anova import AnovaResult, TukeyHSDResult, anova, randomized_tukey_hsd, tukey_hsd
from metaeval.stats.error_rates import ErrorRates, error_rates, rates_of
from metaeval.stats.gtheory import (
    DStudy,
    GStudy,
    SimulatedTau,
    TopicsNeeded,
    d_study,
    expected_tau,
    g_study,
    simulate_tau,
    topics_needed,
)
from metaeval.stats.multiplicity import (
    WestfallYoungResult,
    benjamini_hochberg,
    holm,
    westfall_young,
)
from metaeval.stats.paired import (
    FAMILIES,
    TESTS,
    BootstrapResult,
    RandomizationResult,
    SignTestResult,
    TTestResult,
    WilcoxonResult,
    anova_residual_variance,
    bootstrap_test,
    paired_comparisons,
    paired_t_test,
    randomization_test,
    sign_test,
    wilcoxon_test,
)
from metaeval.stats.rankcorr import RBOResult, rbo, rbo_rankings, tau_ap_a, tau_ap_b
from metaeval.stats.topic_set_size import (
    TopicSetSize,
    VarianceEstimate,
    expected_ci_width,
    min_detectable_difference_anova,
    min_detectable_difference_paired_t,
    power_anova,
    power_paired_t,
    residual_variance,
    topic_set_size_anova,
    topic_set_size_ci,
    topic_set_size_paired_t,
)

__all__ = [
    # paired comparisons
    "TESTS",
    "FAMILIES",
    "paired_t_test",
    "wilcoxon_test",
    "sign_test",
    "randomization_test",
    "bootstrap_test",
    "paired_comparisons",
    "anova_residual_variance",
    "TTestResult",
    "WilcoxonResult",
    "SignTestResult",
    "RandomizationResult",
    "BootstrapResult",
    # multiplicity
    "holm",
    "benjamini_hochberg",
    "westfall_young",
    "WestfallYoungResult",
    # ANOVA and Tukey HSD
    "anova",
    "tukey_hsd",
    "randomized_tukey_hsd",
    "AnovaResult",
    "TukeyHSDResult",
    # topic-set-size design
    "residual_variance",
    "topic_set_size_paired_t",
    "topic_set_size_anova",
    "topic_set_size_ci",
    "power_paired_t",
    "power_anova",
    "min_detectable_difference_paired_t",
    "min_detectable_difference_anova",
    "expected_ci_width",
    "VarianceEstimate",
    "TopicSetSize",
    # generalizability theory
    "g_study",
    "d_study",
    "topics_needed",
    "expected_tau",
    "simulate_tau",
    "GStudy",
    "DStudy",
    "TopicsNeeded",
    "SimulatedTau",
    # error rates of the tests
    "error_rates",
    "rates_of",
    "ErrorRates",
    # tie-aware rank correlation
    "tau_ap_a",
    "tau_ap_b",
    "rbo",
    "rbo_rankings",
    "RBOResult",
]
