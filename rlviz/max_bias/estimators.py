"""The statistics underneath: the single and double estimators of the largest of m means.

By Monte Carlo and by numerical integration (van Hasselt 2010).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.max_bias.mdp import MAX_ACTIONS, MAX_SAMPLES, MAX_TRIALS, _check_count


# --------------------------------------------------------------------------- the estimators
def max_estimators(half_a, half_b):
    r"""The single and the double estimator of :math:`\max_i \mu_i` from two halves of samples.

    Each action's samples are split into two halves with sample means :math:`\hat\mu^A_i` and
    :math:`\hat\mu^B_i`. The single estimator is the largest mean of all the samples; the double
    estimator picks the action with half A and reads its value in half B, which is independent
    of the choice:

    .. math:: \hat\mu_{\text{single}} = \max_i \tfrac12(\hat\mu^A_i + \hat\mu^B_i), \qquad
        \hat\mu_{\text{double}} = \hat\mu^B_{a^*}, \quad a^* = \arg\max_i \hat\mu^A_i

    So :math:`E[\hat\mu_{\text{double}}] = \sum_i P(a^* = i)\, \mu_i \le \max_i \mu_i`, with
    equality when all the means are equal; :math:`E[\hat\mu_{\text{single}}] \ge \max_i \mu_i`.
    Source: van Hasselt (2010), Section 2; Sutton & Barto (2018), Section 6.7.

    Args:
        half_a: ``[..., m]`` each action's mean over the first half of its samples.
        half_b: ``[..., m]`` the same over the second half.

    Returns:
        ``(single, double)``, each ``[...]``.
    """
    single = ((half_a + half_b) / 2).max(axis=-1)
    chosen = half_a.argmax(axis=-1)
    double = np.take_along_axis(half_b, chosen[..., None], axis=-1)[..., 0]
    return single, double


def expected_max_of_normals(m: int) -> float:
    r"""The expected largest of ``m`` independent standard normal draws, by integration.

    .. math:: E\big[\max_{i \le m} X_i\big] = \int_{-\infty}^{\infty} m\, x\, \varphi(x)\,
        \Phi(x)^{m-1}\, dx, \qquad X_i \sim N(0, 1)

    (the density of the maximum is :math:`\tfrac{d}{dx}\Phi(x)^m`). 0 for one draw, about 1.54
    for ten (the best arm of the 10-armed testbed, Sutton & Barto (2018), Section 2.3), growing
    like :math:`\sqrt{2 \ln m}`.

    Args:
        m: Number of draws, ≥ 1.

    Returns:
        The expectation.
    """
    from scipy import integrate
    from scipy.special import log_ndtr

    if m == 1:
        return 0.0

    def integrand(x):  # Φ^(m-1) through its logarithm: no underflow far in the left tail
        return m * x * math.exp(-0.5 * x * x + (m - 1) * float(log_ndtr(x))) / math.sqrt(
            2 * math.pi)

    value, _ = integrate.quad(integrand, -12.0, 12.0, points=[0.0, math.sqrt(2 * math.log(m))],
                              epsabs=1e-13, epsrel=1e-12, limit=200)
    return float(value)


def single_estimator_bias(m: int, sigma: float, samples: int, gap: float = 0.0) -> float:
    r"""``E[max_i mean_i] − max_i μ_i`` for ``m`` actions with ``samples`` samples each.

    Each sample mean is :math:`N(\mu_i, s^2)`, :math:`s = \sigma / \sqrt n`. With all means
    equal (``gap = 0``) the bias is :math:`s\, E[\max \text{ of } m\ N(0, 1)]`
    (``expected_max_of_normals``); with the best action ``gap`` above the other ``m − 1`` it is
    :math:`\int x\, dF(x)`, :math:`F(x) = \Phi(x/s)\, \Phi((x + \Delta)/s)^{m-1}`, integrated
    numerically.
    """
    if sigma == 0 or m == 1:
        return 0.0
    s = sigma / math.sqrt(samples)
    if gap == 0:
        return s * expected_max_of_normals(m)
    from scipy import integrate
    from scipy.special import log_ndtr

    d = gap / s

    def density(x):  # of the largest standardised sample mean, best action at 0
        lb, lo = float(log_ndtr(x)), float(log_ndtr(x + d))
        best = math.exp(-0.5 * x * x + (m - 1) * lo)
        rest = (m - 1) * math.exp(-0.5 * (x + d) ** 2 + lb + (m - 2) * lo)
        return x * (best + rest) / math.sqrt(2 * math.pi)

    value, _ = integrate.quad(density, -d - 12.0, 12.0, points=[-d, 0.0], epsabs=1e-13,
                              epsrel=1e-12, limit=200)
    return s * float(value)


def double_estimator_bias(m: int, sigma: float, samples: int, gap: float = 0.0) -> float:
    r"""``E[double estimate] − max_i μ_i``: half A picks, half B (independent) values.

    .. math:: E[\hat\mu^B_{a^*}] - \mu^* = -\Delta\, \big(1 - P(a^* \text{ is the best})\big),
        \quad P(a^* \text{ is the best}) = \int \varphi(x)\, \Phi(x + \Delta/s_A)^{m-1}\, dx

    with :math:`s_A = \sigma / \sqrt{n/2}` the noise of a half's mean: 0 when all the means are
    equal, below 0 otherwise.
    """
    if gap == 0 or m == 1:
        return 0.0
    if sigma == 0:
        return 0.0  # the best action is always picked
    from scipy import integrate
    from scipy.special import log_ndtr

    d = gap / (sigma / math.sqrt(samples / 2))

    def density(x):
        return math.exp(-0.5 * x * x + (m - 1) * float(log_ndtr(x + d))) / math.sqrt(2 * math.pi)

    p_best, _ = integrate.quad(density, -12.0, 12.0, epsabs=1e-13, epsrel=1e-12, limit=200)
    return -gap * (1.0 - min(float(p_best), 1.0))


ACTION_GRID = (1, 2, 3, 5, 10, 20, 50, 100)
SAMPLE_GRID = (2, 4, 6, 10, 20, 50, 100, 200, 500, 1000)


@dataclass(frozen=True)
class EstimatorStudy:
    """Bias of the single and double estimators, by Monte Carlo and in closed form.

    ``by_actions`` rows follow ``actions`` (at ``samples`` per action); ``by_samples`` rows follow
    ``sample_grid`` (at ``m`` actions). Each Monte Carlo entry is the mean over ``trials`` with
    the half-width of its 95% interval.
    """

    actions: tuple[int, ...]
    sample_grid: tuple[int, ...]
    m: int
    samples: int
    sigma: float
    gap: float
    trials: int
    seed: int
    single_mc: np.ndarray  # [len(actions)] mean bias of the single estimator
    single_half: np.ndarray  # [len(actions)] its 95% half-width
    double_mc: np.ndarray  # [len(actions)]
    double_half: np.ndarray  # [len(actions)]
    single_exact: np.ndarray  # [len(actions)] closed form
    double_exact: np.ndarray  # [len(actions)]
    by_samples_single_mc: np.ndarray  # [len(sample_grid)]
    by_samples_single_half: np.ndarray
    by_samples_double_mc: np.ndarray
    by_samples_double_half: np.ndarray
    by_samples_single_exact: np.ndarray
    by_samples_double_exact: np.ndarray
    max_of_normals: np.ndarray  # [len(actions)] E[max of m N(0, 1)]


def _deciding_actions(z: np.ndarray) -> np.ndarray:
    """``[trials, 3]`` action 0, and the largest of actions 1 … k−1 in half A and in both halves.

    ``[trials, 1]``, action 0 alone, when there is one action.

    Args:
        z: ``[2, trials, k]`` each action's standardised half-means.
    """
    trials, k = z.shape[1:]
    first = np.zeros((trials, 1), dtype=np.int64)
    if k == 1:
        return first
    rest = z[:, :, 1:]
    pick = 1 + rest[0].argmax(axis=1)
    best = 1 + (rest[0] + rest[1]).argmax(axis=1)
    return np.concatenate([first, pick[:, None], best[:, None]], axis=1)


def _mean_half(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean over the first axis and its 95% half-width (normal quantile: many trials)."""
    n = x.shape[0]
    sd = x.std(axis=0, ddof=1) if n > 1 else np.zeros(x.shape[1:])
    return x.mean(axis=0), 1.959963984540054 * sd / math.sqrt(n)


def estimator_study(
    *,
    m: int = 10,
    sigma: float = 1.0,
    samples: int = 10,
    gap: float = 0.0,
    trials: int = 4000,
    seed: int = 0,
    actions: tuple[int, ...] = ACTION_GRID,
    sample_grid: tuple[int, ...] = SAMPLE_GRID,
) -> EstimatorStudy:
    r"""The single and double estimators of the largest of ``m`` true means, as m and n vary.

    The best action's true mean is 0 and the other ``m − 1`` sit ``gap`` below it (``gap = 0``:
    all equal, as at B), every sample has noise σ, and each action has ``samples`` samples (an
    even number: two halves). A half's mean is :math:`N(\mu_i, \sigma^2 / (n/2))`, drawn
    directly (the same numbers as averaging ``n/2`` draws). The trials are shared across the
    grid: the first ``k`` actions of each trial are the ``k`` actions of its point on the action
    axis, and the same standard normals are scaled for each ``n``, so curves are smooth.

    Args:
        m: Actions for the study against the number of samples.
        sigma: Noise of one sample.
        samples: Samples per action for the study against the number of actions (even, ≥ 2).
        gap: How far the other actions' means are below the best one's.
        trials: Monte Carlo repetitions.
        seed: Seed of the draws.
        actions: The action counts of the first study.
        sample_grid: The sample counts of the second study.

    Returns:
        Monte Carlo means with 95% half-widths, and the closed forms.

    Raises:
        InputError: if a setting is out of range.
    """
    m = _check_count("actions", m, MAX_ACTIONS)
    samples = _check_count("samples per action", samples, MAX_SAMPLES, low=2)
    if samples % 2:
        raise InputError(f"the samples per action must be even (two halves); got {samples}")
    trials = _check_count("trials", trials, MAX_TRIALS, low=2)
    if not (math.isfinite(sigma) and 0 <= sigma <= 100):
        raise InputError(f"the noise σ must be in [0, 100]; got {sigma}")
    if not (math.isfinite(gap) and 0 <= gap <= 100):
        raise InputError(f"the gap must be in [0, 100]; got {gap}")
    actions = tuple(sorted(set(actions) | {m}))
    sample_grid = tuple(sorted(set(sample_grid) | {samples}))
    widest = max(actions)
    rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(7,)))
    z = rng.standard_normal((2, trials, widest))  # the two halves' standardised means
    # Three of a trial's k actions decide its two estimates: the best one (action 0) and, among
    # the others (they share one true mean, so their order is that of their draws whatever n
    # is), the one with the largest first-half mean (the double estimator's pick unless it is
    # action 0) and the one with the largest mean of both halves (the single estimator's).
    # max_estimators sees those three: the same estimates as from all k, at a cost that does
    # not grow with k for each n.
    deciding = {}
    for k in set(actions) | {m}:
        which = _deciding_actions(z[:, :, :k])  # [trials, 3] (or [trials, 1] for one action)
        deciding[k] = (np.where(which == 0, 0.0, -gap), np.take_along_axis(z[0], which, axis=1),
                       np.take_along_axis(z[1], which, axis=1))

    def bias(k: int, n: int) -> tuple[np.ndarray, np.ndarray]:
        means, z_a, z_b = deciding[k]
        s = sigma / math.sqrt(n / 2)
        single, double = max_estimators(means + s * z_a, means + s * z_b)
        return single, double  # the largest true mean is 0: the estimates are the biases

    per_k = [bias(k, samples) for k in actions]
    per_n = [bias(m, n) for n in sample_grid]
    s_mc, s_half = _mean_half(np.stack([s for s, _ in per_k], axis=1))
    d_mc, d_half = _mean_half(np.stack([d for _, d in per_k], axis=1))
    ns_mc, ns_half = _mean_half(np.stack([s for s, _ in per_n], axis=1))
    nd_mc, nd_half = _mean_half(np.stack([d for _, d in per_n], axis=1))
    exact = np.array([single_estimator_bias(k, sigma, samples, gap) for k in actions])
    exact_d = np.array([double_estimator_bias(k, sigma, samples, gap) for k in actions])
    exact_n = np.array([single_estimator_bias(m, sigma, n, gap) for n in sample_grid])
    exact_nd = np.array([double_estimator_bias(m, sigma, n, gap) for n in sample_grid])
    return EstimatorStudy(
        actions=actions, sample_grid=sample_grid, m=m, samples=samples, sigma=float(sigma),
        gap=float(gap), trials=trials, seed=int(seed), single_mc=s_mc, single_half=s_half,
        double_mc=d_mc, double_half=d_half, single_exact=exact, double_exact=exact_d,
        by_samples_single_mc=ns_mc, by_samples_single_half=ns_half, by_samples_double_mc=nd_mc,
        by_samples_double_half=nd_half, by_samples_single_exact=exact_n,
        by_samples_double_exact=exact_nd,
        max_of_normals=np.array([expected_max_of_normals(k) for k in actions]),
    )
