"""Maximum-entropy reconstruction of relevance distributions from a measure value.

The maximum-entropy method of Aslam, Yilmaz and Pavlu (SIGIR 2005), extended to graded
relevance by Robertson, Kanoulas and Yilmaz (SIGIR 2010), asks: knowing only the value ``v``
of an evaluation measure for a ranked list (and the number of relevant documents), what is
the *least committal* distribution of relevance over the ranks that is consistent with it?
How well that distribution reproduces the list's actual precision-recall curve measures how
*informative* the measure is.

Model
-----
A ranked list of length ``N`` is modelled by a product distribution: ranks are independent.

* Binary: ``p[i] = P(rank i+1 is relevant)``, shape ``(..., N)``.
* Graded: ``P[i, j] = P(rank i+1 has grade j)``, ``j = 0..G``, shape ``(..., N, G+1)``, each
  row on the simplex.

Problem (docs/methods.md §3)::

    maximise   H(P) = -sum_{i,j} P_ij ln P_ij      (binary: -sum p ln p + (1-p) ln(1-p))
    subject to E_P[measure] = v
               sum_i P_ij   = m_j  for every grade j >= 1   (binary: sum_i p_i = m)
               P_ij >= 0, sum_j P_ij = 1

``m_j`` is the number of documents of grade ``j`` the list retrieved (the project default,
docs/methods.md §0) or, optionally, the topic's number of relevant documents ``R_j``.

Solution method
---------------
The Lagrangian stationarity condition gives the exponential-family form::

    P_ij = softmax_j( lambda_j [j >= 1] + lambda_v * a_ij ),   a_ij = dE/dP_ij

(binary: ``p_i = sigmoid(lambda_0 + lambda_v * a_i)``).

* **Linear measures** (P@k, R-prec, nDCG): ``a`` does not depend on ``P`` and the dual
  ``Phi(lambda) = sum_i logsumexp_j z_ij - lambda . target`` is convex and smooth in the
  ``G + 1`` multipliers; it is minimised by a damped Newton method (Armijo backtracking),
  vectorised over a batch of lists.  The solution is exact up to the tolerance.
* **Non-linear measures** (AP, RR, GAP): a fixed point on the linearisation coefficients.
  Given coefficients ``a_t``, the multipliers are found by Newton's method (backtracking on
  the residual norm) such that ``P = softmax(lambda + lambda_v a_t)`` meets the *exact*
  constraints ``E_P[measure] = v`` and the counts; then ``a_{t+1} = grad E(P)``.  A fixed
  point ``a = grad E(P(a))`` satisfies the exact KKT conditions of the original problem
  (stationarity in the exponential-family form, both constraints exact).  This is a
  sequential method in which the Hessian of the Lagrangian is replaced by the dominant,
  diagonal entropy Hessian, so the outer iteration converges linearly; it is damped
  (``w`` halved whenever the change of ``P`` grows), accelerated by Anderson mixing over
  the last three iterates (Walker & Ni 2011), and safeguarded: a step whose family cannot
  meet the constraints is rejected and retried from the last accepted point with half the
  damping.  Convergence is declared on the exact residuals (``tol``) and on the change of
  ``P`` between linearisations (``stationarity_tol``), and reported per list.  While the
  coefficients still move, the inner Newton solve is stopped early (tolerance tied to the
  last change of ``P``); the final iterate is always solved to ``tol``.

Boundary values (e.g. AP equal to its maximum ``m / R``) make the dual diverge; they are
detected before solving and answered exactly by the maximum-entropy point of the optimal
face (``Expectation.extreme``): for AP the perfect list, for P@k = 1 the top ``k`` ranks
certain and the remaining mass spread uniformly, and so on.  Targets outside the achievable
range are flagged ``feasible = False`` (and raise in the single-list call).

Modules
-------
* :mod:`~metaeval.meta.maxent.expectations`: the :class:`Expectation` interface, the built-in
  expectations (AP, P@k, R-prec, RR, binary and graded nDCG, GAP) and
  :func:`expectation_for`, the one map from a metaeval measure to its expectation.
* :mod:`~metaeval.meta.maxent.solver`: :func:`maxent_distribution` and its result.
* :mod:`~metaeval.meta.maxent.curves`: inferred and actual precision-recall curves and the
  RMS errors between them.

References
----------
J. A. Aslam, E. Yilmaz, V. Pavlu. The maximum entropy method for analyzing retrieval
measures. SIGIR 2005.

S. Robertson, E. Kanoulas, E. Yilmaz. Extending average precision to graded relevance
judgments. SIGIR 2010.
"""

from metaeval.meta.maxent.curves import (
    actual_pr_curve,
    inferred_pr_curve,
    interpolated_precision,
    rms_interpolated,
    rms_recall_points,
    threshold_probabilities,
)
from metaeval.meta.maxent.expectations import (
    AveragePrecision,
    BinaryNDCG,
    Expectation,
    GradedAP,
    GradedNDCG,
    PrecisionAt,
    ReciprocalRank,
    RPrecision,
    expectation_for,
)
from metaeval.meta.maxent.solver import (
    MaxEntConvergenceWarning,
    MaxEntResult,
    entropy,
    maxent_distribution,
)

__all__ = [
    "Expectation",
    "PrecisionAt",
    "RPrecision",
    "ReciprocalRank",
    "AveragePrecision",
    "BinaryNDCG",
    "GradedNDCG",
    "GradedAP",
    "expectation_for",
    "MaxEntResult",
    "maxent_distribution",
    "entropy",
    "inferred_pr_curve",
    "actual_pr_curve",
    "rms_recall_points",
    "rms_interpolated",
    "interpolated_precision",
    "threshold_probabilities",
    "MaxEntConvergenceWarning",
]
