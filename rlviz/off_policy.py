r"""Importance sampling and off-policy evaluation: value a policy from another policy's episodes.

Episodes come from a *behaviour* policy ``b``; the value wanted is that of a *target* policy
``pi``. Each episode is reweighted by its importance ratio, the product over its steps of
``pi(A_t | S_t) / b(A_t | S_t)`` (Sutton & Barto 2018, eq. 5.3):

* **ordinary** IS averages ``rho * G`` over episodes: unbiased, with a variance that grows with
  the ratios and can be infinite (eq. 5.5, Example 5.5);
* **weighted** IS divides by the sum of the ratios instead of their count: biased for finitely
  many episodes (consistent as they grow), and never further from the returns than their range
  (eq. 5.6);
* **per-decision** IS weights the reward of step ``t`` by the ratios up to ``t`` only, dropping
  later factors whose expectation is 1 (Precup, Sutton & Singh 2000; S&B §5.9);
* **doubly robust** adds a critic ``Q^`` as a control variate: unbiased whatever the critic when
  the critic is independent of the episodes it corrects, and low-variance when the critic is good
  (Jiang & Li 2016; Thomas & Brunskill 2016).

Three settings are here, each a frozen result built from a seed:

* ``blackjack_study``: the state of Example 5.4 / Figure 5.3 (dealer shows a deuce, player 13
  with a usable ace), a random behaviour policy, the target that sticks only on 20 or 21; the
  exact value is computed by recursion over the infinite deck (``blackjack_value``).
* ``infinite_variance_study``: the one-state MDP of Example 5.5 / Figure 5.4.
* ``estimator_study``: a five-state chain where the target policy drifts away from the
  behaviour policy, comparing the four estimators' bias, variance, MSE and effective sample size.

``worked_per_decision`` works the per-decision ratio on one short episode.

The estimators are written once, on arrays whose last axes are episodes (and steps); leading axes
hold independent runs, so one call serves one data set or a thousand. The episode generators
play all episodes of all runs in lockstep, step by step as the book describes them, with one
``np.random.Generator`` made from the seed.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.mdp import TabularMDP

__all__ = [
    "BLACKJACK_BOOK_STATE",
    "BLACKJACK_BOOK_VALUE",
    "CRITICS",
    "DELTA_GRID",
    "ESTIMATORS",
    "WORKED_EPISODES",
    "BlackjackState",
    "BlackjackStudy",
    "Episodes",
    "EstimatorStudy",
    "InfiniteVarianceStudy",
    "PerDecisionWorked",
    "add_card",
    "blackjack_episodes",
    "blackjack_moment",
    "blackjack_study",
    "blackjack_value",
    "chain_mdp",
    "chain_policies",
    "dealer_final_probs",
    "dealer_plays",
    "doubly_robust",
    "draw_cards",
    "estimator_study",
    "finite_horizon_q",
    "fit_models",
    "importance_ratio",
    "infinite_variance_study",
    "kish_ess",
    "one_state_episodes",
    "ordinary_is",
    "ordinary_is_running",
    "per_decision_is",
    "sample_episodes",
    "target_hits",
    "weight_distribution",
    "weighted_is",
    "weighted_is_running",
    "worked_per_decision",
]

ESTIMATORS = ("ordinary", "weighted", "per_decision", "doubly_robust")
"""The estimators compared on the chain, in the order they are drawn."""

CRITICS = ("cross_fitted", "same_data", "true", "zero")
"""Critics for doubly robust: a model fitted on the other half of the run's episodes, a model
fitted on all of them, the true Q of the target policy, or none (DR is then per-decision IS)."""

DELTA_GRID = tuple(round(0.1 * i, 1) for i in range(11))
"""The distances between the policies swept on the chain (the chosen one is added)."""


# =========================================================================== the estimators
def importance_ratio(pi_taken: np.ndarray, b_taken: np.ndarray) -> np.ndarray:
    r"""The importance-sampling ratio of whole episodes.

    ``rho_{0:T-1} = prod_t pi(A_t | S_t) / b(A_t | S_t)`` (Sutton & Barto 2018, eq. 5.3).

    Args:
        pi_taken: ``[..., T]`` the target's probability of each action taken, steps ``[0, T-1]``.
        b_taken: ``[..., T]`` the behaviour's probability of the same actions (positive: ``b``
            took them).

    Returns:
        ``[...]`` one ratio per episode.
    """
    return np.prod(pi_taken / b_taken, axis=-1)


def ordinary_is(weights: np.ndarray, returns: np.ndarray) -> np.ndarray:
    r"""Ordinary importance sampling: the plain average of the reweighted returns.

    ``V = (1/n) sum_i rho_i G_i`` (Sutton & Barto 2018, eq. 5.5). Unbiased.

    Args:
        weights: ``[..., n]`` importance ratios of the ``n`` episodes.
        returns: ``[..., n]`` their returns ``G_i``.

    Returns:
        ``[...]`` the estimate of each data set.
    """
    return np.mean(weights * returns, axis=-1)


def weighted_is(weights: np.ndarray, returns: np.ndarray) -> np.ndarray:
    r"""Weighted importance sampling: the ratio-weighted average of the returns.

    ``V = sum_i rho_i G_i / sum_i rho_i``, and 0 while every ratio is 0 (Sutton & Barto 2018,
    eq. 5.6). Biased for finite ``n``; always inside the range of the returns.

    Args:
        weights: ``[..., n]`` importance ratios.
        returns: ``[..., n]`` returns.

    Returns:
        ``[...]`` the estimate of each data set.
    """
    total = np.sum(weights, axis=-1)
    weighted = np.sum(weights * returns, axis=-1)
    return np.divide(weighted, total, out=np.zeros_like(weighted), where=total > 0)


def ordinary_is_running(weights: np.ndarray, returns: np.ndarray) -> np.ndarray:
    r"""Ordinary IS after each episode: ``V_n = (1/n) sum_{i<=n} rho_i G_i``.

    Args:
        weights: ``[..., N]`` importance ratios, in the order the episodes arrive.
        returns: ``[..., N]`` returns.

    Returns:
        ``[..., N]`` the estimate after episodes ``1..N``.
    """
    n = np.arange(1, weights.shape[-1] + 1)
    return np.cumsum(weights * returns, axis=-1) / n


def weighted_is_running(weights: np.ndarray, returns: np.ndarray) -> np.ndarray:
    r"""Weighted IS after each episode: ``V_n = sum_{i<=n} rho_i G_i / sum_{i<=n} rho_i``.

    The book's incremental form ``C <- C + W``, ``V <- V + (W / C)(G - V)`` (§5.6) gives the
    same numbers; before the first episode with a non-zero ratio the estimate is 0.

    Args:
        weights: ``[..., N]`` importance ratios, in the order the episodes arrive.
        returns: ``[..., N]`` returns.

    Returns:
        ``[..., N]`` the estimate after episodes ``1..N``.
    """
    weighted = np.cumsum(weights * returns, axis=-1)
    total = np.cumsum(weights, axis=-1)
    return np.divide(weighted, total, out=np.zeros_like(weighted), where=total > 0)


def per_decision_is(ratios: np.ndarray, rewards: np.ndarray, gamma: float) -> np.ndarray:
    r"""Per-decision importance sampling.

    ``V = (1/n) sum_i sum_t gamma^t rho_{0:t} R_{t+1}``: the reward of step ``t`` is weighted by
    the ratios of the steps up to ``t`` only (Precup, Sutton & Singh 2000; Sutton & Barto 2018,
    eq. 5.15). Unbiased, like ordinary IS, and never noisier term by term.

    Args:
        ratios: ``[..., n, T]`` per-step ratios ``pi(A_t | S_t) / b(A_t | S_t)``.
        rewards: ``[..., n, T]`` the reward after each step (``R_{t+1}`` in the book).
        gamma: Discount factor.

    Returns:
        ``[...]`` the estimate of each data set.
    """
    discount = gamma ** np.arange(ratios.shape[-1])
    rho_upto_t = np.cumprod(ratios, axis=-1)  # rho_{0:t}
    return np.mean(np.sum(discount * rho_upto_t * rewards, axis=-1), axis=-1)


def doubly_robust(ratios: np.ndarray, rewards: np.ndarray, q_taken: np.ndarray,
                  v_state: np.ndarray, gamma: float) -> np.ndarray:
    r"""Doubly robust off-policy evaluation with a critic ``Q^``.

    ``V = (1/n) sum_i sum_t gamma^t [rho_{0:t} (R_{t+1} - Q^(S_t, A_t)) + rho_{0:t-1} V^(S_t)]``
    with ``V^(s) = sum_a pi(a | s) Q^(s, a)`` and ``rho_{0:-1} = 1`` (Jiang & Li 2016, eq. 4
    unrolled; Thomas & Brunskill 2016). The critic is a control variate of mean zero: with
    ``Q^ = 0`` this is per-decision IS, with the true ``Q^pi`` its variance is that of the
    environment's randomness alone.

    Args:
        ratios: ``[..., n, T]`` per-step ratios.
        rewards: ``[..., n, T]`` rewards.
        q_taken: ``[..., n, T]`` the critic's ``Q^(S_t, A_t)`` of each step.
        v_state: ``[..., n, T]`` the critic's ``V^(S_t)`` under the target policy.
        gamma: Discount factor.

    Returns:
        ``[...]`` the estimate of each data set.
    """
    discount = gamma ** np.arange(ratios.shape[-1])
    rho_upto_t = np.cumprod(ratios, axis=-1)  # rho_{0:t}
    rho_before_t = _shift_right(rho_upto_t)  # rho_{0:t-1}
    terms = rho_upto_t * (rewards - q_taken) + rho_before_t * v_state
    return np.mean(np.sum(discount * terms, axis=-1), axis=-1)


def _shift_right(x: np.ndarray) -> np.ndarray:
    """``[..., T]`` the previous step's value, 1 before the first step."""
    out = np.ones_like(x)
    out[..., 1:] = x[..., :-1]
    return out


def kish_ess(weights: np.ndarray) -> np.ndarray:
    r"""Kish's effective sample size of importance weights: ``(sum w)^2 / sum w^2``.

    ``n`` for equal weights, 1 when one episode carries all the weight, 0 when all are 0.

    Args:
        weights: ``[..., n]`` importance ratios.

    Returns:
        ``[...]`` the effective number of episodes of each data set.
    """
    total = np.sum(weights, axis=-1)
    squares = np.sum(weights**2, axis=-1)
    return np.divide(total**2, squares, out=np.zeros_like(total), where=squares > 0)


# =========================================================================== validation
def _whole(name: str, value: object, lo: int, hi: int) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a whole number from {lo} to {hi}") from None
    if number != value or not lo <= number <= hi:
        raise InputError(f"{name} must be a whole number from {lo} to {hi}; got {value}")
    return number


def _unit(name: str, value: object) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number from 0 to 1") from None
    if not 0.0 <= number <= 1.0:
        raise InputError(f"{name} must be from 0 to 1; got {number:g}")
    return number


def _rng(seed: int, stream: int) -> np.random.Generator:
    """The Generator of one study: its own stream of the page's seed."""
    seed = _whole("The seed", seed, 0, 2**32 - 1)
    return np.random.default_rng(np.random.SeedSequence([seed, stream]))


def _t975(dof: int) -> float:
    """Two-sided 95% quantile of Student's t with ``dof`` degrees of freedom."""
    from scipy.special import stdtrit

    return float(stdtrit(max(dof, 1), 0.975))


def _mean_band(x: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean over ``axis`` and the half-width of its 95% t-interval."""
    n = x.shape[axis]
    mean = x.mean(axis=axis)
    if n < 2:
        return mean, np.zeros_like(mean)
    return mean, _t975(n - 1) * x.std(axis=axis, ddof=1) / np.sqrt(n)


# =========================================================================== blackjack
@dataclass(frozen=True)
class BlackjackState:
    """A player's decision state in blackjack (Sutton & Barto 2018, Example 5.1)."""

    player_sum: int
    """The player's current sum, 12 to 21."""
    usable_ace: bool
    """Whether the player holds an ace counted as 11."""
    dealer_card: int
    """The dealer's showing card, 1 (ace) to 10."""

    def __post_init__(self) -> None:
        _whole("The player's sum", self.player_sum, 12, 21)
        _whole("The dealer's showing card", self.dealer_card, 1, 10)
        object.__setattr__(self, "usable_ace", bool(self.usable_ace))


BLACKJACK_BOOK_STATE = BlackjackState(player_sum=13, usable_ace=True, dealer_card=2)
"""Example 5.4: the dealer shows a deuce, the player holds 13 with a usable ace."""
BLACKJACK_BOOK_VALUE = -0.27726
"""Its value under the target policy, from 100 million episodes (Sutton & Barto 2018, p. 106)."""

CARD_VALUES = np.arange(1, 11)
CARD_PROBS = np.array([1, 1, 1, 1, 1, 1, 1, 1, 1, 4]) / 13
"""An infinite deck: ace to nine, and four ranks (10, J, Q, K) worth 10."""
B_HIT = 0.5
"""The behaviour policy hits or sticks with probability 1/2 each."""


def draw_cards(rng: np.random.Generator, n: int) -> np.ndarray:
    """``[n]`` card values from an infinite deck: a rank 1..13, face cards counting 10."""
    return np.minimum(rng.integers(1, 14, size=n), 10)


def add_card(total, usable, card):
    """A hand after one more card: its sum and whether it holds an ace counted as 11.

    An ace counts 11 when that does not bust the hand ("usable"); a hand over 21 with a usable
    ace counts that ace as 1 instead. Works on numbers or arrays.

    Args:
        total: The hand's sum before the card.
        usable: Whether the hand holds a usable ace.
        card: The card's value, 1 (ace) to 10.

    Returns:
        ``(total, usable)`` after the card.
    """
    total = total + card
    counts_11 = np.logical_and(card == 1, total + 10 <= 21)
    total = total + 10 * counts_11
    usable = np.logical_or(usable, counts_11)
    back_to_1 = np.logical_and(total > 21, usable)
    return total - 10 * back_to_1, np.logical_and(usable, np.logical_not(back_to_1))


def target_hits(total):
    """The target policy of Example 5.4: hit below 20, stick on 20 or 21."""
    return total < 20


def dealer_plays(showing: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """``[n]`` the dealer's final sums (over 21: bust): it hits below 17, sticks from 17 on.

    The hidden card and every hit are drawn from the infinite deck; all ``n`` hands play in
    lockstep.
    """
    total = np.full(n, 11 if showing == 1 else showing)
    usable = np.full(n, showing == 1)
    total, usable = add_card(total, usable, draw_cards(rng, n))  # the hidden card
    hit = np.flatnonzero(total < 17)
    while hit.size:
        total[hit], usable[hit] = add_card(total[hit], usable[hit], draw_cards(rng, hit.size))
        hit = hit[total[hit] < 17]
    return total


def blackjack_episodes(n: int, state: BlackjackState,
                       rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    r"""Play ``n`` episodes from ``state`` under the random behaviour policy.

    At each decision ``b`` hits or sticks with probability 1/2, and the episode's ratio is
    multiplied by ``pi(A_t | S_t) / b(A_t | S_t)``: 2 where ``b`` did what the target would, 0
    where it did not (the book's ``W <- W pi/b``). Once ``W`` is 0 the rest of the episode adds
    nothing to either estimator, so it is not played further (the book's "if W = 0, exit"; its
    return is left at 0). The dealer plays out every counted hand that did not bust. The reward
    is +1, 0 or -1 at the end; no discount, so ``G`` is that reward.

    Args:
        n: Number of episodes.
        state: Where every episode starts.
        rng: The random stream.

    Returns:
        ``(weights [n], returns [n])``.
    """
    total = np.full(n, state.player_sum)
    usable = np.full(n, state.usable_ace)
    weights = np.ones(n)
    playing = np.arange(n)
    while playing.size:
        hit = rng.random(playing.size) < B_HIT  # A_t ~ b
        agrees = hit == target_hits(total[playing])
        weights[playing] *= np.where(agrees, 1.0 / B_HIT, 0.0)  # pi(A_t|S_t) / b(A_t|S_t)
        hitting = playing[agrees & hit]  # those that stuck with the target are done
        total[hitting], usable[hitting] = add_card(
            total[hitting], usable[hitting], draw_cards(rng, hitting.size))
        playing = hitting[total[hitting] <= 21]  # the rest went bust
    returns = np.zeros(n)
    counted = np.flatnonzero(weights > 0)
    bust = total[counted] > 21
    returns[counted[bust]] = -1.0
    stood = counted[~bust]
    dealer = dealer_plays(state.dealer_card, stood.size, rng)
    returns[stood] = np.where(dealer > 21, 1.0, np.sign(total[stood] - dealer))
    return weights, returns


@functools.cache
def dealer_final_probs(showing: int) -> tuple[float, ...]:
    """Exact probabilities of the dealer's final sum 17, 18, 19, 20, 21 and of a bust.

    A recursion over the dealer's hand on the infinite deck (Sutton & Barto 2018, Example 5.1).

    Args:
        showing: The dealer's showing card, 1 (ace) to 10.

    Returns:
        Six probabilities summing to 1.
    """
    showing = _whole("The dealer's showing card", showing, 1, 10)

    @functools.cache
    def finish(total: int, usable: bool) -> np.ndarray:
        out = np.zeros(6)
        if total > 21:
            out[5] = 1.0
        elif total >= 17:
            out[total - 17] = 1.0
        else:
            for card, p in zip(CARD_VALUES, CARD_PROBS, strict=True):
                t, u = add_card(total, usable, int(card))
                out += p * finish(int(t), bool(u))
        return out

    total, usable = (11, True) if showing == 1 else (showing, False)
    probs = np.zeros(6)
    for card, p in zip(CARD_VALUES, CARD_PROBS, strict=True):  # the hidden card
        t, u = add_card(total, usable, int(card))
        probs += p * finish(int(t), bool(u))
    return tuple(float(x) for x in probs)


def blackjack_moment(state: BlackjackState, *, ratio_power: int, payoff: tuple[float, ...]
                     ) -> float:
    r"""``E_b[rho^k f(G)]`` from ``state``, exactly, by recursion along the target's decisions.

    Only episodes in which ``b`` made every target decision have ``rho != 0``; each decision
    there has probability 1/2 under ``b`` and ratio 2, so it contributes ``2^(k-1)``. With
    ``k = 1`` this is the target's own expectation of ``f(G)``: ``E_b[rho G] = v_pi(s)``.

    Args:
        state: The starting state.
        ratio_power: ``k`` (0 is not allowed: off-target episodes count then).
        payoff: ``f(G)`` for ``G = -1, 0, +1``.

    Returns:
        The expectation.
    """
    if ratio_power < 1:
        raise ValueError("ratio_power must be at least 1")
    lose, draw, win = payoff
    weight = B_HIT * (1.0 / B_HIT) ** ratio_power
    final = np.array(dealer_final_probs(state.dealer_card))

    def stick(total: int) -> float:
        sums = np.arange(17, 22)
        p_win = final[5] + final[:5][sums < total].sum()
        p_lose = final[:5][sums > total].sum()
        return p_win * win + (1.0 - p_win - p_lose) * draw + p_lose * lose

    @functools.cache
    def mean(total: int, usable: bool) -> float:
        if total > 21:
            return lose
        if not target_hits(total):
            return weight * stick(total)
        after = (add_card(total, usable, int(c)) for c in CARD_VALUES)
        return weight * sum(p * mean(int(t), bool(u)) for p, (t, u) in zip(CARD_PROBS, after,
                                                                            strict=True))

    return float(mean(state.player_sum, state.usable_ace))


def blackjack_value(state: BlackjackState = BLACKJACK_BOOK_STATE) -> float:
    """Exact ``v_pi(state)`` of the target policy (stick on 20 or 21) on the infinite deck."""
    return blackjack_moment(state, ratio_power=1, payoff=(-1.0, 0.0, 1.0))


@dataclass(frozen=True)
class BlackjackStudy:
    """Ordinary against weighted IS on one blackjack state, over many runs (Figure 5.3)."""

    state: BlackjackState
    runs: int
    episodes: int
    true_value: float
    """Exact ``v_pi(state)``."""
    per_episode_variance: float
    """``Var_b(rho G) = E_b[rho^2 G^2] - v^2``, exact: ordinary IS's MSE is this over n."""
    mse: dict[str, np.ndarray]  # name -> [N] mean over runs of the squared error after n episodes
    mse_half: dict[str, np.ndarray]  # name -> [N] half-width of its 95% interval
    final: dict[str, np.ndarray]  # name -> [R] each run's estimate after all episodes
    consistent_share: float
    """Share of episodes in which b did what the target would at every decision (rho > 0)."""

    @property
    def n(self) -> np.ndarray:
        """``[N]`` episode counts 1..N."""
        return np.arange(1, self.episodes + 1)


def blackjack_study(*, runs: int = 100, episodes: int = 10_000,
                    state: BlackjackState = BLACKJACK_BOOK_STATE, seed: int = 0,
                    max_episodes: int = 10_000, max_runs: int = 100) -> BlackjackStudy:
    """Figure 5.3's protocol: ``runs`` independent runs of ``episodes`` episodes from ``state``.

    Both estimators read the same episodes, so they differ by their formula, not by luck.

    Args:
        runs: Independent runs (the book: 100).
        episodes: Episodes per run (the book: 10,000).
        state: The evaluated state (the book's by default).
        seed: Seed of the random stream.
        max_episodes: The largest ``episodes`` allowed.
        max_runs: The largest ``runs`` allowed.

    Returns:
        The study.
    """
    runs = _whole("The number of runs", runs, 1, max_runs)
    episodes = _whole("The number of episodes", episodes, 1, max_episodes)
    rng = _rng(seed, 53)
    weights, returns = blackjack_episodes(runs * episodes, state, rng)
    weights, returns = weights.reshape(runs, episodes), returns.reshape(runs, episodes)
    truth = blackjack_value(state)
    second = blackjack_moment(state, ratio_power=2, payoff=(1.0, 0.0, 1.0))
    curves = {"ordinary": ordinary_is_running(weights, returns),
              "weighted": weighted_is_running(weights, returns)}
    mse, half, final = {}, {}, {}
    for name, estimate in curves.items():
        mse[name], half[name] = _mean_band((estimate - truth) ** 2)
        final[name] = estimate[:, -1].copy()
    return BlackjackStudy(
        state=state, runs=runs, episodes=episodes, true_value=truth,
        per_episode_variance=second - truth**2, mse=mse, mse_half=half, final=final,
        consistent_share=float((weights > 0).mean()),
    )


# =========================================================================== Example 5.5
ONE_STATE_VALUE = 1.0
"""``v_pi(s)`` of Example 5.5: the target always goes left, and left ends in +1 eventually."""
P_LEFT_ENDS = 0.1
"""After *left* the episode ends with reward +1 with probability 0.1, else returns to s."""


def one_state_episodes(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    r"""``n`` episodes of Example 5.5 under ``b`` (left or right, 1/2 each).

    *Right* ends the episode with reward 0; the target never goes right, so the ratio becomes
    0. *Left* doubles the ratio (``pi = 1``, ``b = 1/2``) and ends with reward +1 with
    probability 0.1, else the episode goes on from ``s``. No discount.

    Returns:
        ``(weights [n], returns [n])``.
    """
    weights = np.ones(n)
    returns = np.zeros(n)
    going = np.arange(n)
    while going.size:
        left = rng.random(going.size) < 0.5  # A_t ~ b
        weights[going] *= np.where(left, 1.0 / 0.5, 0.0)  # pi(A_t|s) / b(A_t|s)
        ends = ~left | (rng.random(going.size) < P_LEFT_ENDS)
        returns[going[left & ends]] = 1.0
        going = going[~ends]
    return weights, returns


@dataclass(frozen=True)
class InfiniteVarianceStudy:
    """Ordinary and weighted IS on Example 5.5, run by run (Figure 5.4)."""

    runs: int
    episodes: int
    at: np.ndarray  # [K] episode counts where the curves are kept (log-spaced, 1..N)
    ordinary: np.ndarray  # [R, K] ordinary IS after at[k] episodes
    weighted: np.ndarray  # [R, K] weighted IS after at[k] episodes
    first_hit: np.ndarray  # [R] the first episode (1-based) that ended on the target's action;
    # 0 when none did
    weighted_gap_after: float
    """Largest ``|weighted - 1|`` over all episodes from each run's first hit on (exactly 0)."""
    weighted_before: float
    """Largest ``|weighted|`` before each run's first hit (0: nothing to weigh yet)."""
    ordinary_final: np.ndarray  # [R] each run's ordinary estimate after all episodes
    largest_weight: float
    """The largest ratio of any episode."""


def _log_points(n: int, count: int = 400) -> np.ndarray:
    """About ``count`` episode numbers from 1 to ``n``, evenly spaced on a log scale."""
    return np.unique(np.geomspace(1, n, count).round().astype(np.int64))


def infinite_variance_study(*, runs: int = 10, episodes: int = 100_000, seed: int = 0,
                            max_episodes: int = 100_000) -> InfiniteVarianceStudy:
    """Figure 5.4: ``runs`` independent runs of ordinary and weighted IS on Example 5.5.

    Args:
        runs: Independent runs (the book: 10).
        episodes: Episodes per run (the book: 100 million; capped here).
        seed: Seed of the random stream.
        max_episodes: The largest ``episodes`` allowed.

    Returns:
        The study.
    """
    runs = _whole("The number of runs", runs, 1, 20)
    episodes = _whole("The number of episodes", episodes, 1, max_episodes)
    weights, returns = one_state_episodes(runs * episodes, _rng(seed, 54))
    weights, returns = weights.reshape(runs, episodes), returns.reshape(runs, episodes)
    ordinary = ordinary_is_running(weights, returns)
    weighted = weighted_is_running(weights, returns)
    hit = weights * returns > 0
    first = np.where(hit.any(axis=1), hit.argmax(axis=1) + 1, 0)
    after = np.arange(1, episodes + 1) >= np.where(first > 0, first, episodes + 1)[:, None]
    at = _log_points(episodes)
    keep = np.unique(np.concatenate([at, first[first > 0], first[first > 1] - 1]))
    return InfiniteVarianceStudy(
        runs=runs, episodes=episodes, at=keep, ordinary=ordinary[:, keep - 1],
        weighted=weighted[:, keep - 1], first_hit=first,
        weighted_gap_after=float(np.abs(weighted[after] - ONE_STATE_VALUE).max(initial=0.0)),
        weighted_before=float(np.abs(weighted[~after]).max(initial=0.0)),
        ordinary_final=ordinary[:, -1].copy(), largest_weight=float(weights.max()),
    )


# =========================================================================== the chain
LEFT, RIGHT = 0, 1


def chain_mdp(n_states: int = 5, p_forward: float = 0.7, left_reward: float = 0.1,
              right_reward: float = 1.0) -> TabularMDP:
    """A chain of states: *right* moves on with probability ``p_forward``, *left* moves back.

    The episode starts at the left end. Arriving (or staying) at the left end pays
    ``left_reward``, at the right end ``right_reward``; nothing else pays. Episodes last a
    fixed number of steps (the horizon), so no state is terminal.
    """
    s = np.arange(n_states)
    ahead = np.minimum(s + 1, n_states - 1)
    behind = np.maximum(s - 1, 0)
    next_state = np.stack([np.stack([behind, behind], 1), np.stack([ahead, s], 1)], 1)
    prob = np.broadcast_to(np.array([[1.0, 0.0], [p_forward, 1.0 - p_forward]]),
                           (n_states, 2, 2)).copy()
    pay = np.zeros(n_states)
    pay[0], pay[-1] = left_reward, right_reward
    start = np.zeros(n_states)
    start[0] = 1.0
    return TabularMDP(next_state=next_state, prob=prob, reward=pay[next_state],
                      terminal=np.zeros(n_states, dtype=bool), start=start,
                      action_names=("left", "right"), name=f"{n_states}-state chain")


def chain_policies(delta: float, n_states: int = 5) -> tuple[np.ndarray, np.ndarray]:
    """``(pi [S, A], b [S, A])``: ``b`` is uniform; ``pi`` goes right with ``(1 + delta) / 2``.

    ``delta = 0`` makes the two policies equal; ``delta = 1`` makes the target always go right.
    The per-step ratio is ``1 + delta`` after *right* and ``1 - delta`` after *left*.
    """
    delta = _unit("The distance δ between the policies", delta)
    pi = np.tile([(1.0 - delta) / 2, (1.0 + delta) / 2], (n_states, 1))
    return pi, np.full((n_states, 2), 0.5)


@dataclass(frozen=True)
class Episodes:
    """Fixed-length episodes, any leading shape (runs, episodes)."""

    states: np.ndarray  # [..., T+1] int S_0..S_T
    actions: np.ndarray  # [..., T] int A_0..A_{T-1}
    rewards: np.ndarray  # [..., T] R_1..R_T (the reward after each action)


def sample_episodes(mdp: TabularMDP, behaviour: np.ndarray, *, shape: tuple[int, ...],
                    horizon: int, rng: np.random.Generator) -> Episodes:
    """Episodes of ``horizon`` steps from the start state, all in lockstep under ``behaviour``."""
    size = int(np.prod(shape))
    cum = np.cumsum(behaviour, axis=1)
    states = np.empty((size, horizon + 1), dtype=np.int64)
    actions = np.empty((size, horizon), dtype=np.int64)
    rewards = np.empty((size, horizon))
    states[:, 0] = mdp.start_state
    for t in range(horizon):
        s = states[:, t]
        a = np.minimum((cum[s] <= rng.random(size)[:, None]).sum(axis=1), cum.shape[1] - 1)
        states[:, t + 1], rewards[:, t] = mdp.step(s, a, rng.random(size))
        actions[:, t] = a
    return Episodes(states.reshape(*shape, horizon + 1), actions.reshape(*shape, horizon),
                    rewards.reshape(*shape, horizon))


def fit_models(episodes: Episodes, group: np.ndarray, n_groups: int, n_states: int,
               n_actions: int) -> tuple[np.ndarray, np.ndarray]:
    r"""Maximum-likelihood models of each run's episodes, one per group of episodes.

    ``P^(s' | s, a) = N(s, a, s') / N(s, a)`` and ``R^(s, a)`` the mean reward seen after
    ``(s, a)``. A pair never seen gets ``P^ = 0`` and ``R^ = 0``: the critic then values it 0.

    Args:
        episodes: ``[R, n, ...]`` the runs' episodes.
        group: ``[n]`` the group (0..G-1) of each episode.
        n_groups: ``G``.
        n_states: ``S``.
        n_actions: ``A``.

    Returns:
        ``(P^ [R, G, S, A, S], R^ [R, G, S, A])``.
    """
    runs, n, horizon = episodes.actions.shape
    run = np.broadcast_to(np.arange(runs)[:, None, None], (runs, n, horizon))
    grp = np.broadcast_to(np.asarray(group)[None, :, None], (runs, n, horizon))
    pair = ((run * n_groups + grp) * n_states + episodes.states[..., :-1]) * n_actions \
        + episodes.actions
    move = pair * n_states + episodes.states[..., 1:]
    cells = runs * n_groups * n_states * n_actions
    counts = np.bincount(move.ravel(), minlength=cells * n_states).reshape(
        runs, n_groups, n_states, n_actions, n_states).astype(np.float64)
    visits = counts.sum(axis=-1)
    reward_sum = np.bincount(pair.ravel(), weights=episodes.rewards.ravel(),
                             minlength=cells).reshape(runs, n_groups, n_states, n_actions)
    seen = visits > 0
    p_hat = np.divide(counts, visits[..., None], out=np.zeros_like(counts),
                      where=seen[..., None])
    r_hat = np.divide(reward_sum, visits, out=np.zeros_like(reward_sum), where=seen)
    return p_hat, r_hat


def finite_horizon_q(p: np.ndarray, r: np.ndarray, pi: np.ndarray, horizon: int,
                     gamma: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Action and state values of ``pi`` with ``h`` steps to go, for ``h = 0..horizon``.

    ``Q_h(s, a) = R(s, a) + gamma sum_s' P(s' | s, a) V_{h-1}(s')``,
    ``V_h(s) = sum_a pi(a | s) Q_h(s, a)``, ``Q_0 = V_0 = 0`` (backward induction).

    Args:
        p: ``[..., S, A, S]`` transition probabilities (leading axes: several models).
        r: ``[..., S, A]`` expected rewards.
        pi: ``[S, A]`` the policy.
        horizon: The longest number of steps to go.
        gamma: Discount factor.

    Returns:
        ``(Q [..., H+1, S, A], V [..., H+1, S])``.
    """
    q = np.zeros(r.shape[:-2] + (horizon + 1,) + r.shape[-2:])
    v = np.zeros(r.shape[:-2] + (horizon + 1, r.shape[-2]))
    for h in range(1, horizon + 1):
        q[..., h, :, :] = r + gamma * (p @ v[..., h - 1, None, :, None])[..., 0]
        v[..., h, :] = np.sum(pi * q[..., h, :, :], axis=-1)
    return q, v


@dataclass(frozen=True)
class EstimatorStudy:
    """Four estimators of ``v_pi`` on the chain as the target drifts from the behaviour."""

    deltas: np.ndarray  # [D] distances swept, the chosen one included
    chosen: int
    """Index of the chosen distance in ``deltas``."""
    horizon: int
    episodes: int
    runs: int
    critic: str
    true_values: np.ndarray  # [D] exact v_pi(start) of each target
    estimates: dict[str, np.ndarray]  # name -> [D, R] each run's estimate
    on_policy: np.ndarray  # [R] the plain average return of each run's episodes (Monte Carlo)
    ess: np.ndarray  # [D, R] Kish effective sample size of each run's episode weights
    second_moment: np.ndarray  # [D] E_b[rho^2] of one episode, exact
    weight_values: np.ndarray  # [K] the distinct episode weights at the chosen distance
    weight_episodes: np.ndarray  # [K] share of episodes with each weight
    weight_mass: np.ndarray  # [K] share of the total weight they carry
    mean_weight: float
    """Mean episode weight at the chosen distance (its expectation is 1)."""
    mean_weight_half: float
    """Half-width of its 95% interval."""
    example: dict[str, np.ndarray]  # the first run at the chosen distance: ratios, rewards,
    # q_taken, v_state [n, T] and weights [n], for the whiteboard check

    def bias(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``[D]`` mean estimate minus the truth, and the half-width of its 95% interval."""
        mean, half = _mean_band(self.estimates[name], axis=1)
        return mean - self.true_values, half

    def variance(self, name: str) -> np.ndarray:
        """``[D]`` variance of the estimate over runs (divided by R, so MSE = bias² + it)."""
        return self.estimates[name].var(axis=1)

    def mse(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """``[D]`` mean squared error over runs, and the half-width of its 95% interval."""
        return _mean_band((self.estimates[name] - self.true_values[:, None]) ** 2, axis=1)

    def mean_ess(self) -> tuple[np.ndarray, np.ndarray]:
        """``[D]`` mean Kish effective sample size over runs, and its 95% half-width."""
        return _mean_band(self.ess, axis=1)


def weight_distribution(weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The distinct weights (to 12 significant digits), the share of episodes and of weight."""
    flat = np.asarray(weights, dtype=np.float64).ravel()
    rounded = np.array([float(f"{w:.12g}") for w in np.unique(flat)])
    values, index = np.unique(rounded[np.searchsorted(np.unique(flat), flat)],
                              return_inverse=True)
    count = np.bincount(index, minlength=values.size)
    mass = np.bincount(index, weights=flat, minlength=values.size)
    total = mass.sum()
    return values, count / flat.size, mass / total if total > 0 else np.zeros(values.size)


def estimator_study(*, delta: float = 0.5, horizon: int = 5, episodes: int = 100,
                    runs: int = 200, critic: str = "cross_fitted", gamma: float = 1.0,
                    seed: int = 0, max_work: int = 400_000) -> EstimatorStudy:
    r"""Ordinary, weighted, per-decision and doubly robust IS on the chain, for every distance.

    Each run is a data set of ``episodes`` episodes of ``horizon`` steps drawn once from the
    uniform behaviour policy; every target policy is evaluated on the same episodes, so the
    distances and the estimators differ only by their ratios and formulas.

    The doubly robust critic (``critic="cross_fitted"``): each run's episodes are split in two
    halves (even and odd), a maximum-likelihood model (transition counts, mean rewards) is fitted
    on each, and ``Q^`` of the target is computed on it by backward induction; an episode is
    corrected by the critic of the *other* half, so the critic never saw it and DR stays
    unbiased. ``"same_data"`` fits one model on all of a run's episodes (a little bias),
    ``"true"`` uses the exact ``Q^pi``, ``"zero"`` none.

    Args:
        delta: The chosen distance (the swept grid ``DELTA_GRID`` is always included).
        horizon: Steps per episode.
        episodes: Episodes per data set (``n``).
        runs: Independent data sets.
        critic: One of ``CRITICS``.
        gamma: Discount factor.
        seed: Seed of the random stream.
        max_work: The largest ``runs * episodes * horizon`` allowed.

    Returns:
        The study.
    """
    delta = _unit("The distance δ between the policies", delta)
    horizon = _whole("The horizon", horizon, 1, 50)
    episodes = _whole("The number of episodes per data set", episodes, 2, 100_000)
    runs = _whole("The number of runs", runs, 2, 100_000)
    if critic not in CRITICS:
        raise InputError(f"The critic must be one of {', '.join(CRITICS)}; got {critic!r}")
    if runs * episodes * horizon > max_work:
        raise InputError(
            f"{runs} runs × {episodes} episodes × {horizon} steps is more than "
            f"{max_work:,} steps: lower one of them")
    mdp = chain_mdp()
    n_states, n_actions = mdp.n_states, mdp.n_actions
    _, behaviour = chain_policies(0.0, n_states)
    data = sample_episodes(mdp, behaviour, shape=(runs, episodes), horizon=horizon,
                           rng=_rng(seed, 1))
    s, a = data.states[..., :-1], data.actions
    pair = s * n_actions + a  # flat (S_t, A_t) of every step
    b_taken = np.take(behaviour, pair)
    returns = np.sum(gamma ** np.arange(horizon) * data.rewards, axis=-1)
    to_go = horizon - np.arange(horizon)  # steps to go at each t

    half = np.arange(episodes) % 2
    p_half, r_half = fit_models(data, half, 2, n_states, n_actions)
    p_all, r_all = fit_models(data, np.zeros(episodes, dtype=np.int64), 1, n_states, n_actions)
    p_hat = np.concatenate([p_half, p_all], axis=1)  # [R, 3, S, A, S]: halves 0, 1, and all
    r_hat = np.concatenate([r_half, r_all], axis=1)
    model = {"cross_fitted": 1 - half, "same_data": np.full(episodes, 2)}.get(critic)
    if model is not None:  # where each step's Q^ and V^ sit in the flattened critic tables
        run = np.arange(runs)[:, None, None] * p_hat.shape[1] + model[None, :, None]
        at_v = (run * (horizon + 1) + to_go) * n_states + s
        at_q = at_v * n_actions + a

    deltas = np.array(sorted(set(DELTA_GRID) | {round(delta, 10)}))
    chosen = int(np.flatnonzero(np.isclose(deltas, delta))[0])
    estimates = {name: np.empty((deltas.size, runs)) for name in ESTIMATORS}
    ess = np.empty((deltas.size, runs))
    true_values = np.empty(deltas.size)
    second = np.empty(deltas.size)
    example: dict[str, np.ndarray] = {}
    for i, d in enumerate(deltas):
        pi, _ = chain_policies(float(d), n_states)
        pi_taken = np.take(pi, pair)
        ratios = pi_taken / b_taken
        weights = importance_ratio(pi_taken, b_taken)
        q_true, v_true = finite_horizon_q(mdp.P, mdp.R, pi, horizon, gamma)
        true_values[i] = v_true[horizon, mdp.start_state]
        # E_b[rho_t^2] = sum_a pi^2 / b is the same in every state, so E_b[rho^2] is its power.
        second[i] = float(np.sum(pi[0] ** 2 / behaviour[0])) ** horizon
        if critic == "true":
            q_taken = np.take(q_true, to_go * n_states * n_actions + pair)
            v_state = np.take(v_true, to_go * n_states + s)
        elif critic == "zero":
            q_taken = v_state = np.zeros_like(ratios)
        else:
            q_hat, v_hat = finite_horizon_q(p_hat, r_hat, pi, horizon, gamma)
            q_taken, v_state = np.take(q_hat, at_q), np.take(v_hat, at_v)
        estimates["ordinary"][i] = ordinary_is(weights, returns)
        estimates["weighted"][i] = weighted_is(weights, returns)
        estimates["per_decision"][i] = per_decision_is(ratios, data.rewards, gamma)
        estimates["doubly_robust"][i] = doubly_robust(ratios, data.rewards, q_taken, v_state,
                                                      gamma)
        ess[i] = kish_ess(weights)
        if i == chosen:
            values, share, mass = weight_distribution(weights)
            mean_w, half_w = _mean_band(weights.ravel())
            example = {"ratios": ratios[0], "rewards": data.rewards[0], "q_taken": q_taken[0],
                       "v_state": v_state[0], "weights": weights[0], "returns": returns[0]}
    return EstimatorStudy(
        deltas=deltas, chosen=chosen, horizon=horizon, episodes=episodes, runs=runs,
        critic=critic, true_values=true_values, estimates=estimates,
        on_policy=returns.mean(axis=-1),
        ess=ess, second_moment=second, weight_values=values, weight_episodes=share,
        weight_mass=mass, mean_weight=float(mean_w), mean_weight_half=float(half_w),
        example=example,
    )


# =========================================================================== worked example
WORKED_EPISODES = {
    "Rewards along the way": {"pi": [0.9, 0.9, 0.2, 0.9], "b": [0.5] * 4, "r": [1.0, 0, 0, 1.0]},
    "Reward only at the end": {"pi": [0.9, 0.9, 0.2, 0.9], "b": [0.5] * 4, "r": [0, 0, 0, 1.0]},
    "π never takes step 2's action": {"pi": [0.9, 0.9, 0.0, 0.9], "b": [0.5] * 4,
                                      "r": [1.0, 1.0, 1.0, 1.0]},
}
"""Short episodes to work the per-decision ratio on: pi(A_t|S_t), b(A_t|S_t) and R_{t+1}."""


@dataclass(frozen=True)
class PerDecisionWorked:
    """One episode's ordinary and per-decision IS terms, step by step."""

    pi: np.ndarray  # [T] pi(A_t | S_t)
    b: np.ndarray  # [T] b(A_t | S_t)
    rewards: np.ndarray  # [T] R_{t+1}
    gamma: float
    ratios: np.ndarray  # [T] rho_t = pi / b
    rho_upto: np.ndarray  # [T] rho_{0:t}
    discount: np.ndarray  # [T] gamma^t
    per_decision_terms: np.ndarray  # [T] gamma^t rho_{0:t} R_{t+1}
    ordinary_terms: np.ndarray  # [T] gamma^t rho_{0:T-1} R_{t+1}
    episode_return: float
    """``G_0 = sum_t gamma^t R_{t+1}``."""
    episode_ratio: float
    """``rho_{0:T-1}``."""
    ordinary: float
    """``rho_{0:T-1} G_0``: this episode's ordinary IS term."""
    per_decision: float
    """``sum_t gamma^t rho_{0:t} R_{t+1}``: its per-decision IS term."""


def _cells(name: str, values: object) -> np.ndarray:
    try:
        arr = np.asarray(values, dtype=np.float64).reshape(-1)
    except (TypeError, ValueError):
        raise InputError(f"The column {name} must hold numbers") from None
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise InputError(f"{name} at step {bad[0]} is empty or not a number: enter it")
    return arr


def worked_per_decision(pi: object, b: object, rewards: object, *,
                        gamma: float = 1.0) -> PerDecisionWorked:
    r"""The per-decision ratio worked on one episode the user wrote down.

    Args:
        pi: ``[T]`` the target's probability of each action taken, in ``[0, 1]``.
        b: ``[T]`` the behaviour's probability of it, in ``(0, 1]``.
        rewards: ``[T]`` the reward after each action.
        gamma: Discount factor in ``[0, 1]``.

    Returns:
        Every intermediate of both estimators on this episode.
    """
    pi_t, b_t, r_t = _cells("π(a|s)", pi), _cells("b(a|s)", b), _cells("reward", rewards)
    if not pi_t.size == b_t.size == r_t.size:
        raise InputError("Every step needs π(a|s), b(a|s) and a reward")
    if pi_t.size == 0:
        raise InputError("The episode is empty: add a step")
    gamma = _unit("γ", gamma)
    for name, col, lo_ok in (("π(a|s)", pi_t, True), ("b(a|s)", b_t, False)):
        bad = np.flatnonzero((col < 0) | (col > 1))
        if bad.size:
            raise InputError(f"{name} at step {bad[0]} is {col[bad[0]]:g}: a probability is "
                             "from 0 to 1")
        if not lo_ok and (col == 0).any():
            t = int(np.flatnonzero(col == 0)[0])
            raise InputError(f"b(a|s) at step {t} is 0: the behaviour policy never takes that "
                             "action, so this episode could not have been observed")
    ratios = pi_t / b_t
    rho_upto = np.cumprod(ratios)
    discount = gamma ** np.arange(r_t.size)
    episode_return = float(np.sum(discount * r_t))
    episode_ratio = float(importance_ratio(pi_t, b_t))
    return PerDecisionWorked(
        pi=pi_t, b=b_t, rewards=r_t, gamma=gamma, ratios=ratios, rho_upto=rho_upto,
        discount=discount, per_decision_terms=discount * rho_upto * r_t,
        ordinary_terms=discount * episode_ratio * r_t, episode_return=episode_return,
        episode_ratio=episode_ratio,
        ordinary=float(ordinary_is(np.array([episode_ratio]), np.array([episode_return]))),
        per_decision=float(per_decision_is(ratios[None, :], r_t[None, :], gamma)),
    )
