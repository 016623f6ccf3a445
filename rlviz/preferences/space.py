"""The toy response space, sampled preference pairs, and exact scoring against the gold reward."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.polynomial import legendre

from rlviz.errors import InputError
from rlviz.preferences.losses import ArrayLike

__all__ = [
    "GOLD_PEAK",
    "MAX_PAIRS",
    "MAX_RESPONSES",
    "Pairs",
    "ResponseSpace",
    "Scores",
    "kl_objective",
    "kl_optimal_policy",
    "label_accuracy",
    "pair_accuracy",
    "response_space",
    "sample_pairs",
    "scores",
]


MAX_RESPONSES = 256
MAX_PAIRS = 5000
MAX_DEGREE = 6


GOLD_PEAK = math.pi / (2 * 3.4)
"""Length at which the gold reward ``3 sin(3.4 x)`` peaks."""


# --------------------------------------------------------------------------- the toy space
def _gold(x: np.ndarray) -> np.ndarray:
    return 3.0 * np.sin(3.4 * x)


@dataclass(frozen=True, eq=False)
class ResponseSpace:
    """K responses ordered by length, their features, the gold reward and ``π_ref``.

    Attributes:
        x: ``[K]`` length of each response, 0 (shortest) to 1 (longest).
        features: ``[K, d]`` the reward model's features: Legendre polynomials P₁…P_d of 2x − 1.
        gold: ``[K]`` the hidden gold reward ``r*``.
        log_ref: ``[K]`` ``log π_ref``.
    """

    x: np.ndarray  # [K]
    features: np.ndarray  # [K, d]
    gold: np.ndarray  # [K]
    log_ref: np.ndarray  # [K]

    @property
    def n(self) -> int:
        """Number of responses K."""
        return int(self.x.size)

    @property
    def p_ref(self) -> np.ndarray:
        """``[K]`` reference probabilities."""
        return np.exp(self.log_ref)


def _log_normalise(logits: np.ndarray) -> np.ndarray:
    """``logits − log Σ exp(logits)`` along the last axis (max subtracted first)."""
    top = np.max(logits, axis=-1, keepdims=True)
    return logits - top - np.log(np.sum(np.exp(logits - top), axis=-1, keepdims=True))


def response_space(n_responses: int = 64, *, degree: int = 1, ref_width: float = 0.1,
                   ref_centre: float = 0.3) -> ResponseSpace:
    """The toy: K responses on a length axis, the reward model's features, gold and ``π_ref``.

    Args:
        n_responses: K, from 8 to ``MAX_RESPONSES``.
        degree: Degree d of the reward model's polynomial features, 1 (linear) to 6.
        ref_width: Spread σ of ``π_ref`` over the length, 0.02 to 1.
        ref_centre: Centre of ``π_ref`` on the length axis.

    Returns:
        The response space.
    """
    if not (isinstance(n_responses, int | np.integer) and 8 <= n_responses <= MAX_RESPONSES):
        raise InputError(f"the number of responses must be a whole number from 8 to "
                         f"{MAX_RESPONSES}; got {n_responses!r}")
    if not (isinstance(degree, int | np.integer) and 1 <= degree <= MAX_DEGREE):
        raise InputError(f"the reward model's degree must be 1 to {MAX_DEGREE}; got {degree!r}")
    if not 0.02 <= float(ref_width) <= 1.0:
        raise InputError(f"π_ref's spread σ must be in [0.02, 1]; got {ref_width!r}")
    if not 0.0 <= float(ref_centre) <= 1.0:
        raise InputError(f"π_ref's centre must be in [0, 1]; got {ref_centre!r}")
    x = np.linspace(0.0, 1.0, int(n_responses))
    t = 2.0 * x - 1.0
    features = np.stack([legendre.legval(t, np.eye(degree + 1)[k])
                         for k in range(1, degree + 1)], axis=1)
    log_ref = _log_normalise(-((x - ref_centre) ** 2) / (2.0 * float(ref_width) ** 2))
    return ResponseSpace(x=x, features=features, gold=_gold(x), log_ref=log_ref)


@dataclass(frozen=True, eq=False)
class Pairs:
    """Labelled preference pairs: ``chosen[i]`` was preferred to ``rejected[i]``.

    Attributes:
        chosen: ``[N]`` index of the preferred response ``y_w``.
        rejected: ``[N]`` index of the other one ``y_l``.
        flip: Share of labels flipped after the Bradley–Terry draw.
    """

    chosen: np.ndarray  # [N] int
    rejected: np.ndarray  # [N] int
    flip: float = 0.0

    @property
    def n(self) -> int:
        """Number of pairs N."""
        return int(self.chosen.size)

    def counts(self, n_responses: int) -> np.ndarray:
        """``[K]`` how many pairs each response appears in."""
        return np.bincount(np.concatenate([self.chosen, self.rejected]), minlength=n_responses)


def sample_pairs(space: ResponseSpace, n_pairs: int, *, flip: float = 0.0,
                 rng: np.random.Generator) -> Pairs:
    """Pairs of two different responses from ``π_ref``, labelled by Bradley–Terry on gold.

    Each pair's label is drawn with ``P(y₁ ≻ y₂) = σ(r*(y₁) − r*(y₂))`` and then flipped with
    probability ``flip`` (a careless labeller). The uniform numbers behind the labels are drawn
    before the flips, so a different flip rate relabels the same pairs.

    Args:
        space: The response space.
        n_pairs: N, 1 to ``MAX_PAIRS``.
        flip: Share of flipped labels, in [0, 0.5].
        rng: Random generator.

    Returns:
        The labelled pairs.
    """
    if not (isinstance(n_pairs, int | np.integer) and 1 <= n_pairs <= MAX_PAIRS):
        raise InputError(f"the number of pairs must be 1 to {MAX_PAIRS}; got {n_pairs!r}")
    if not 0.0 <= float(flip) <= 0.5:
        raise InputError(f"the label flip rate must be in [0, 0.5]; got {flip!r}")
    p = space.p_ref
    first = rng.choice(space.n, size=n_pairs, p=p)
    second = rng.choice(space.n, size=n_pairs, p=p)
    for _ in range(1000):  # redraw the second response of a pair of identical ones
        same = first == second
        if not same.any():
            break
        second[same] = rng.choice(space.n, size=int(same.sum()), p=p)
    same = first == second  # π_ref on a single response: take a neighbour
    second[same] = np.where(first[same] + 1 < space.n, first[same] + 1, first[same] - 1)
    u_label, u_flip = rng.random(n_pairs), rng.random(n_pairs)
    first_wins = u_label < 1.0 / (1.0 + np.exp(space.gold[second] - space.gold[first]))
    first_wins ^= u_flip < float(flip)
    return Pairs(chosen=np.where(first_wins, first, second),
                 rejected=np.where(first_wins, second, first), flip=float(flip))


# ------------------------------------------------------------------------- exact scoring
def kl_optimal_policy(log_ref: np.ndarray, reward: np.ndarray, beta: ArrayLike) -> np.ndarray:
    r"""The maximiser of ``E_π[r] − β KL(π‖π_ref)``: ``π*(y) = π_ref(y) e^{r(y)/β} / Z``.

    Source: the Gibbs variational principle; Rafailov et al. (2023), eq. 4.

    Args:
        log_ref: ``[K]`` ``log π_ref``.
        reward: ``[K]`` the reward.
        beta: β > 0, a float or an array of shape ``S``.

    Returns:
        ``[*S, K]`` ``log π*``.
    """
    beta = np.asarray(beta, dtype=np.float64)[..., None]
    return _log_normalise(log_ref + reward / beta)


def kl_objective(logp: np.ndarray, log_ref: np.ndarray, reward: np.ndarray,
                 beta: float) -> np.ndarray:
    """``E_π[r] − β KL(π‖π_ref)`` of policies ``[..., K]`` given as log-probabilities."""
    p = np.exp(logp)
    with np.errstate(invalid="ignore"):
        terms = np.where(p > 0, p * (logp - log_ref), 0.0)  # 0·log 0 = 0
    return p @ reward - beta * terms.sum(axis=-1)


@dataclass(frozen=True)
class Scores:
    """A policy's exact scores on the enumerated space (rewards relative to ``π_ref``'s).

    Attributes:
        kl: ``KL(π‖π_ref)`` in nats.
        proxy: ``E_π[r̂] − E_ref[r̂]``.
        gold: ``E_π[r*] − E_ref[r*]``.
    """

    kl: np.ndarray
    proxy: np.ndarray
    gold: np.ndarray

    @property
    def sqrt_kl(self) -> np.ndarray:
        """``d = √KL``, the x-axis of Gao et al. (2022)."""
        return np.sqrt(np.maximum(self.kl, 0.0))


def scores(logp: np.ndarray, space: ResponseSpace, proxy: np.ndarray) -> Scores:
    """Exact KL, proxy and gold of policies ``[..., K]`` (log-probabilities)."""
    logp = np.asarray(logp, dtype=np.float64)
    p, p_ref = np.exp(logp), space.p_ref
    with np.errstate(invalid="ignore"):
        terms = np.where(p > 0, p * (logp - space.log_ref), 0.0)
    return Scores(kl=np.maximum(terms.sum(axis=-1), 0.0), proxy=p @ proxy - p_ref @ proxy,
                  gold=p @ space.gold - p_ref @ space.gold)


def _probs_scores(p: np.ndarray, space: ResponseSpace, proxy: np.ndarray) -> Scores:
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    return scores(logp, space, proxy)


def pair_accuracy(reward: np.ndarray, truth: np.ndarray, q: np.ndarray) -> float:
    """How often ``reward`` orders a pair of different responses from ``q`` as ``truth`` does.

    Exact, over all pairs ``y ≠ y'`` weighted ``q(y) q(y')``; a tie in ``reward`` counts half,
    pairs tied in ``truth`` are left out.

    Args:
        reward: ``[K]`` the reward being judged.
        truth: ``[K]`` the reward that decides (the gold reward).
        q: ``[K]`` the distribution pairs are drawn from.

    Returns:
        The share of agreeing pairs.
    """
    d_r = np.sign(reward[:, None] - reward[None, :])
    d_t = np.sign(truth[:, None] - truth[None, :])
    w = q[:, None] * q[None, :] * (d_t != 0)
    agree = np.where(d_r == 0, 0.5, (d_r == d_t).astype(np.float64))
    return float((w * agree).sum() / max(w.sum(), 1e-300))


def label_accuracy(reward: np.ndarray, space: ResponseSpace, flip: float) -> float:
    """Expected accuracy of ``reward`` on a fresh labelled pair from ``π_ref`` (ties half).

    The label of ``y ≻ y'`` is the Bradley–Terry draw on gold, flipped with probability ``flip``;
    pairs of identical responses are not drawn (as in ``sample_pairs``).
    """
    g = space.gold
    p_gold = 1.0 / (1.0 + np.exp(g[None, :] - g[:, None]))
    p_label = (1 - flip) * p_gold + flip * (1 - p_gold)
    d_r = np.sign(reward[:, None] - reward[None, :])
    hit = np.where(d_r > 0, p_label, np.where(d_r < 0, 1 - p_label, 0.5))
    q = space.p_ref
    w = q[:, None] * q[None, :]
    np.fill_diagonal(w, 0.0)
    return float((w * hit).sum() / max(w.sum(), 1e-300))
