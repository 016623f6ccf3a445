"""Blackjack's Example 5.4: one state valued off-policy, against the book's value."""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from rlviz.off_policy._common import _mean_band, _rng, _whole
from rlviz.off_policy.estimators import ordinary_is_running, weighted_is_running

__all__ = [
    "BLACKJACK_BOOK_STATE",
    "BLACKJACK_BOOK_VALUE",
    "BlackjackState",
    "BlackjackStudy",
    "add_card",
    "blackjack_episodes",
    "blackjack_moment",
    "blackjack_study",
    "blackjack_value",
    "dealer_final_probs",
    "dealer_plays",
    "draw_cards",
    "target_hits",
]


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


@functools.lru_cache(maxsize=256)  # exact, so a page asks again for the same number
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
