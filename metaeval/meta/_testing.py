"""Null worlds for calibration tests: score matrices where every system is the same system.

This makes (S systems x T topics) per-topic score matrices in which the systems are
exchangeable (identically distributed and independent given the topic), so any significance
test run on them should reject at rate alpha.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from metaeval._validation import as_generator, check_int

__all__ = ["null_scores"]


def null_scores(
    n_systems: int,
    n_topics: int,
    *,
    rng=None,
    distribution: Literal["normal", "beta"] = "normal",
    topic_sd: float = 0.15,
    noise_sd: float = 0.1,
    concentration: float = 8.0,
    clip: bool = True,
) -> np.ndarray:
    r"""Per-topic scores of ``n_systems`` identically distributed systems.

    Every topic t has a difficulty :math:`\mu_t \sim \mathrm{Uniform}(0.2, 0.8)` jittered by
    ``topic_sd`` (clipped to [0.05, 0.95]); then independently for every system s

    * ``"normal"``: :math:`x_{s,t} = \mu_t + \varepsilon_{s,t}`,
      :math:`\varepsilon \sim N(0, \text{noise\_sd}^2)`, clipped to [0, 1] if ``clip``;
    * ``"beta"``: :math:`x_{s,t} \sim \mathrm{Beta}(\mu_t k, (1-\mu_t) k)` with
      :math:`k` = ``concentration``, a skewed, bounded score like AP.

    Systems are exchangeable within each topic, so the null hypothesis of every paired test
    and of the randomised Tukey HSD test holds.

    Returns
    -------
    numpy.ndarray, shape (n_systems, n_topics)
    """
    n_systems = check_int("n_systems", n_systems, min=1)
    n_topics = check_int("n_topics", n_topics, min=1)
    if distribution not in ("normal", "beta"):
        raise ValueError(f"distribution must be 'normal' or 'beta', got {distribution!r}")
    gen = as_generator(rng)
    mu = np.clip(gen.uniform(0.2, 0.8, n_topics) + gen.normal(0.0, topic_sd, n_topics), 0.05, 0.95)
    if distribution == "normal":
        x = mu[None, :] + gen.normal(0.0, noise_sd, (n_systems, n_topics))
        return np.clip(x, 0.0, 1.0) if clip else x
    a = np.broadcast_to(mu * concentration, (n_systems, n_topics))
    b = np.broadcast_to((1.0 - mu) * concentration, (n_systems, n_topics))
    return gen.beta(a, b)
