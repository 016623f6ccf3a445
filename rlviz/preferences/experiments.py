"""The experiments the page runs: best-of-n and the frontier, the data, alignment, verification."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.preferences.losses import best_of_n, bradley_terry_loss, dpo_loss, sampled_kl
from rlviz.preferences.space import (
    Pairs,
    ResponseSpace,
    Scores,
    _probs_scores,
    kl_objective,
    kl_optimal_policy,
    label_accuracy,
    pair_accuracy,
    response_space,
    sample_pairs,
    scores,
)
from rlviz.preferences.training import (
    RewardModel,
    Training,
    dpo_population_fit,
    fit_reward_model,
    numerical_optimum,
    train_dpo,
    train_policy_gradient,
)

__all__ = [
    "BETAS",
    "BestOfN",
    "Data",
    "Frontier",
    "PolicyRun",
    "Verification",
    "alignment",
    "best_of_n_stats",
    "frontier",
    "gao_fit",
    "preference_data",
    "verify",
]


BETAS = tuple(float(b) for b in np.geomspace(0.01, 10.0, 61))
"""The β sweep of the over-optimisation chart (log-spaced)."""
BON_NS = tuple(int(n) for n in np.unique(np.round(np.geomspace(1, 1024, 72)).astype(int)))
"""The n of best-of-n on the over-optimisation chart (1 to 1024)."""


# --------------------------------------------------------------------- best-of-n, frontier
@dataclass(frozen=True)
class BestOfN:
    """Best-of-n by the reward model at one n, exactly.

    Attributes:
        n: Number of draws.
        probs: ``[K]`` its distribution.
        kl: Exact ``KL(P_n‖π_ref)``.
        kl_bound: ``log n − (n − 1)/n`` (exact for continuous rewards, an upper bound here).
        win_rate: P(its response beats a fresh ``π_ref`` draw by ``r̂``), ties counting half.
        win_bound: ``n/(n + 1)``.
        win_slack: Largest possible gap below ``n/(n+1)``: half the largest ``π_ref`` atom.
    """

    n: int
    probs: np.ndarray
    kl: float
    kl_bound: float
    win_rate: float
    win_bound: float
    win_slack: float


def best_of_n_stats(space: ResponseSpace, reward: np.ndarray, n: int) -> BestOfN:
    """Exact KL and win rate of best-of-n beside the formulas ``log n − (n−1)/n`` and n/(n+1).

    Per tied group of rewards (cumulative masses ``a < b``), the win rate with ties at half is
    ``(bⁿ − aⁿ)(a + b)/2``, against ``∫ₐᵇ n uⁿ du`` for a continuous reward: never more, and
    short by at most ``(b − a)/2`` of the group's probability, so ``n/(n+1) − W ≤ max π_ref / 2``.

    Source: Beirami et al. (2024), Theorem 3.1 (KL bound) and §5 (win rate).
    """
    if not (isinstance(n, int | np.integer) and 1 <= n <= 1024):
        raise InputError(f"best-of-n takes n from 1 to 1024; got {n!r}")
    p_ref = space.p_ref
    probs = best_of_n(p_ref, reward, n)
    sc = _probs_scores(probs, space, reward)
    below = (p_ref[None, :] * (reward[None, :] < reward[:, None])).sum(1)
    tied = (p_ref[None, :] * (reward[None, :] == reward[:, None])).sum(1)
    win = float(probs @ (below + 0.5 * tied))
    return BestOfN(n=int(n), probs=probs, kl=float(sc.kl), kl_bound=math.log(n) - (n - 1) / n,
                   win_rate=win, win_bound=n / (n + 1), win_slack=float(p_ref.max()) / 2)


def gao_fit(d: np.ndarray, gold: np.ndarray, form: str) -> tuple[float, float]:
    r"""Least-squares fit of Gao, Schulman & Hilton's (2022) functional forms, ``R(0) = 0``.

    ``"bon"``: ``R(d) = d(α − β d)``; ``"rl"``: ``R(d) = d(α − β log d)``, with ``d = √KL``.

    Returns:
        ``(α, β)`` (their coefficients, not the KL β).
    """
    d, gold = np.asarray(d, dtype=np.float64), np.asarray(gold, dtype=np.float64)
    keep = d > 1e-9
    d, gold = d[keep], gold[keep]
    if d.size < 2:
        return 0.0, 0.0
    second = d**2 if form == "bon" else d * np.log(d)
    coef, *_ = np.linalg.lstsq(np.stack([d, -second], axis=1), gold, rcond=None)
    return float(coef[0]), float(coef[1])


@dataclass(frozen=True)
class Frontier:
    """Gold and proxy reward against KL: the β sweep of ``π*`` and best-of-n for every n.

    Attributes:
        betas: ``[B]`` the β sweep.
        sweep: Scores of ``π*_β`` (of the reward model) at each β.
        gold_sweep: Scores of the gold reward's own ``π*_β``: the best gold at each KL.
        ns: ``[M]`` the n of best-of-n.
        bon: Scores of best-of-n (by the reward model) at each n.
        bon_kl_bound: ``[M]`` ``log n − (n−1)/n``.
        fit_sweep: Gao et al.'s RL form ``(α, β)`` fitted to the sweep's gold.
        fit_bon: Their best-of-n form fitted to best-of-n's gold.
    """

    betas: np.ndarray
    sweep: Scores
    gold_sweep: Scores
    ns: np.ndarray
    bon: Scores
    bon_kl_bound: np.ndarray
    fit_sweep: tuple[float, float]
    fit_bon: tuple[float, float]

    @property
    def peak(self) -> int:
        """Index of the β whose ``π*`` has the highest gold reward."""
        return int(np.argmax(self.sweep.gold))


def frontier(space: ResponseSpace, proxy: np.ndarray, *, betas=BETAS, ns=BON_NS) -> Frontier:
    """The over-optimisation curves: ``π*_β`` of the proxy over a β sweep, best-of-n over n."""
    betas, ns = np.asarray(betas, dtype=np.float64), np.asarray(ns)
    sweep = scores(kl_optimal_policy(space.log_ref, proxy, betas), space, proxy)
    gold_sweep = scores(kl_optimal_policy(space.log_ref, space.gold, betas), space, proxy)
    bon = _probs_scores(best_of_n(space.p_ref, proxy, ns), space, proxy)
    return Frontier(
        betas=betas, sweep=sweep, gold_sweep=gold_sweep, ns=ns, bon=bon,
        bon_kl_bound=np.log(ns) - (ns - 1) / ns,
        fit_sweep=gao_fit(sweep.sqrt_kl, sweep.gold, "rl"),
        fit_bon=gao_fit(bon.sqrt_kl, bon.gold, "bon"),
    )


# ------------------------------------------------------------------------- the experiment
@dataclass(frozen=True, eq=False)
class Data:
    """The response space, the pairs, the reward model fitted to them and its frontier.

    Attributes:
        space: The toy response space.
        pairs: The labelled pairs (the same ones for the reward model and for DPO).
        reward_model: The Bradley–Terry reward model.
        frontier: Gold and proxy against KL for the β sweep and best-of-n.
        accuracy: Expected accuracy of ``r̂`` on fresh labelled pairs from ``π_ref``.
        ceiling: The same for the gold reward itself (no model can do better on average).
    """

    space: ResponseSpace
    pairs: Pairs
    reward_model: RewardModel
    frontier: Frontier
    accuracy: float
    ceiling: float

    @property
    def proxy(self) -> np.ndarray:
        """``[K]`` the reward model's values ``r̂``."""
        return self.reward_model.values

    @property
    def counts(self) -> np.ndarray:
        """``[K]`` appearances of each response in the pairs."""
        return self.pairs.counts(self.space.n)

    def aligned(self, reward: np.ndarray) -> np.ndarray:
        """``reward`` shifted to the gold reward's mean under ``π_ref``.

        A Bradley–Terry reward is identified only up to a constant.
        """
        p = self.space.p_ref
        return reward - p @ reward + p @ self.space.gold


def preference_data(n_responses: int = 64, degree: int = 1, ref_width: float = 0.1,
                    n_pairs: int = 200, flip: float = 0.0, seed: int = 0) -> Data:
    """Build the toy, sample and label the pairs, fit the reward model, trace its frontier.

    Args:
        n_responses: K responses.
        degree: Degree of the reward model's features.
        ref_width: Spread σ of ``π_ref`` over the length.
        n_pairs: Number of labelled pairs N.
        flip: Share of flipped labels.
        seed: Seed of the pairs and labels.

    Returns:
        The data and the reward model.
    """
    space = response_space(n_responses, degree=degree, ref_width=ref_width)
    pairs = sample_pairs(space, n_pairs, flip=flip, rng=np.random.default_rng(seed))
    rm = fit_reward_model(space, pairs)
    return Data(space=space, pairs=pairs, reward_model=rm, frontier=frontier(space, rm.values),
                accuracy=label_accuracy(rm.values, space, pairs.flip),
                ceiling=label_accuracy(space.gold, space, pairs.flip))


@dataclass(frozen=True, eq=False)
class PolicyRun:
    """The policies at one β (and best-of-n at one n), with their exact scores.

    Attributes:
        beta: KL coefficient β.
        logp: Log-policies by name: ``reference``, ``closed_form``, ``dpo``, ``policy_gradient``
            (the runs' mean policy), ``best_of_n``.
        dpo: DPO's training.
        pg: The policy gradient's training (R runs).
        bon: Best-of-n at the chosen n.
        dpo_curves: Scores of DPO at its recorded steps (``[T]`` each).
        pg_curves: Scores of every policy-gradient run at its recorded steps (``[T, R]`` each).
        pg_batch: Samples per policy-gradient step.
        policy: The parameterisation of DPO and the policy gradient (``POLICIES``).
    """

    beta: float
    logp: dict[str, np.ndarray]
    dpo: Training
    pg: Training
    bon: BestOfN
    dpo_curves: Scores
    pg_curves: Scores
    pg_batch: int
    policy: str

    def table(self, data: Data) -> dict[str, Scores]:
        """Exact scores of each policy."""
        return {name: scores(lp, data.space, data.proxy) for name, lp in self.logp.items()}

    def objective(self, data: Data) -> dict[str, float]:
        """``E_π[r̂] − β KL(π‖π_ref)`` of each policy."""
        return {name: float(kl_objective(lp, data.space.log_ref, data.proxy, self.beta))
                for name, lp in self.logp.items()}


def alignment(data: Data, *, beta: float = 0.2, n: int = 16, policy: str = "features",
              dpo_steps: int = 500, pg_steps: int = 300, batch: int = 64, runs: int = 8,
              seed: int = 0) -> PolicyRun:
    """The closed-form optimum, DPO and the policy gradient at one β, best-of-n at one n.

    Args:
        data: The data and reward model (``preference_data``).
        beta: KL coefficient β.
        n: Best-of-n's n.
        policy: DPO's and the policy gradient's parameterisation (``POLICIES``).
        dpo_steps: DPO's Adam steps.
        pg_steps: The policy gradient's Adam steps.
        batch: Samples per policy-gradient step.
        runs: Independent policy-gradient runs.
        seed: Seed of the policy gradient's sampling.

    Returns:
        The policies and their training.
    """
    space, proxy = data.space, data.proxy
    dpo = train_dpo(space, data.pairs, beta=beta, steps=dpo_steps, policy=policy)
    pg = train_policy_gradient(space, proxy, beta=beta, steps=pg_steps, batch=batch, runs=runs,
                               policy=policy, seed=seed)
    bon = best_of_n_stats(space, proxy, n)
    with np.errstate(divide="ignore"):
        logp = {
            "reference": space.log_ref,
            "closed_form": kl_optimal_policy(space.log_ref, proxy, beta),
            "dpo": dpo.logp[-1, 0],
            "policy_gradient": np.log(np.exp(pg.logp[-1]).mean(axis=0)),
            "best_of_n": np.log(bon.probs),
        }
    return PolicyRun(beta=float(beta), logp=logp, dpo=dpo, pg=pg, bon=bon,
                     dpo_curves=scores(dpo.logp[:, 0], space, proxy),
                     pg_curves=scores(pg.logp, space, proxy), pg_batch=int(batch), policy=policy)


@dataclass(frozen=True)
class Verification:
    """Live numbers for the page's known-answer checks.

    Attributes:
        shift_gap: Largest change of the mean Bradley–Terry loss, the DPO loss and ``log π*``
            when a constant is added to every reward (0 up to rounding).
        objective: ``E_π[r̂] − β KL`` of each policy, and of ``numerical``: the numerical
            optimiser's policy.
        implicit_error: Tabular DPO on exact, plentiful pairs: the largest gap between its
            implicit reward differences and the gold reward's, over all pairs of responses.
        tv_dpo: Total variation between DPO's policy and ``π*``.
        tv_pg: The same for the policy gradient's mean policy.
        kl_identity: Largest ``|E_π[k1] − KL|`` and ``|E_π[k3] − KL|`` over the runs'
            final policies, the expectations taken exactly.
        k1_error: Mean over runs of (batch mean of k1 − exact KL) at the last recorded step.
        k1_se: Its standard error, from the exact variance of k1 under each run's policy.
        agree_ref: How often the reward model orders a pair from ``π_ref`` as gold does.
        agree_star: The same for pairs from ``π*`` at this β.
    """

    shift_gap: float
    objective: dict[str, float]
    implicit_error: float
    tv_dpo: float
    tv_pg: float
    kl_identity: float
    k1_error: float
    k1_se: float
    agree_ref: float
    agree_star: float


def verify(data: Data, run: PolicyRun, *, shift: float = 5.0) -> Verification:
    """Compute the page's known-answer numbers for one view (see ``Verification``)."""
    space, proxy, beta = data.space, data.proxy, run.beta
    w, lo = data.pairs.chosen, data.pairs.rejected
    logp = run.logp["dpo"]
    gaps = [
        bradley_terry_loss(proxy[w] + shift, proxy[lo] + shift).mean()
        - bradley_terry_loss(proxy[w], proxy[lo]).mean(),
        np.max(np.abs(kl_optimal_policy(space.log_ref, proxy + shift, beta)
                      - run.logp["closed_form"])),
        dpo_loss(logp[w] + shift, logp[lo] + shift, space.log_ref[w] + shift,
                 space.log_ref[lo] + shift, beta=beta).mean()
        - dpo_loss(logp[w], logp[lo], space.log_ref[w], space.log_ref[lo], beta=beta).mean(),
    ]
    objective = run.objective(data)
    objective["numerical"] = float(kl_objective(numerical_optimum(space.log_ref, proxy, beta),
                                                space.log_ref, proxy, beta))
    implicit = dpo_population_fit(space, beta=beta)
    e = implicit - space.gold
    p_star = np.exp(run.logp["closed_form"])
    final = run.pg.logp[-1]  # [R, K]
    kl_exact = scores(final, space, proxy).kl  # [R]
    p_final = np.exp(final)
    k1 = sampled_kl(final, space.log_ref[None, :], estimator="k1")
    k3 = sampled_kl(final, space.log_ref[None, :], estimator="k3")
    identity = max(np.max(np.abs((p_final * k1).sum(1) - kl_exact)),
                   np.max(np.abs((p_final * k3).sum(1) - kl_exact)))
    var_k1 = (p_final * k1**2).sum(1) - kl_exact**2
    batch = run.pg_batch
    runs = final.shape[0]
    k1_error = float(np.mean(run.pg.kl_estimate[-1] - kl_exact))
    k1_se = float(np.sqrt(np.maximum(var_k1, 0.0).sum() / batch) / runs)
    return Verification(
        shift_gap=float(np.max(np.abs(gaps))), objective=objective,
        implicit_error=float(e.max() - e.min()),
        tv_dpo=float(0.5 * np.abs(np.exp(logp) - p_star).sum()),
        tv_pg=float(0.5 * np.abs(np.exp(run.logp["policy_gradient"]) - p_star).sum()),
        kl_identity=float(identity), k1_error=k1_error, k1_se=k1_se,
        agree_ref=pair_accuracy(proxy, space.gold, space.p_ref),
        agree_star=pair_accuracy(proxy, space.gold, p_star),
    )
