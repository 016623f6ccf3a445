"""Plain-loop references for ``rlviz.off_policy``: one episode, one step at a time.

The blackjack episode is played to its end as the book describes it (the ratio is the product
of pi/b over every decision, the return whatever happened), with scalar draws from the same
kind of Generator. The estimators loop over episodes and steps straight from their formulas.
The benchmark times ``blackjack_study_loop`` against ``off_policy.blackjack_study``.
"""

from __future__ import annotations

import numpy as np

from rlviz import off_policy as op


def _card(rng) -> int:
    return min(int(rng.integers(1, 14)), 10)


def _add(total: int, usable: bool, card: int) -> tuple[int, bool]:
    total += card
    if card == 1 and total + 10 <= 21:
        total, usable = total + 10, True
    if total > 21 and usable:
        total, usable = total - 10, False
    return total, usable


def blackjack_episode_loop(state: op.BlackjackState, rng) -> tuple[float, float]:
    """(ratio, return) of one episode from ``state`` under the random behaviour policy."""
    total, usable = state.player_sum, state.usable_ace
    ratio = 1.0
    while True:
        hit = rng.random() < 0.5
        target_hit = total < 20
        ratio *= (1.0 if hit == target_hit else 0.0) / 0.5
        if not hit:
            break
        total, usable = _add(total, usable, _card(rng))
        if total > 21:
            return ratio, -1.0
    dealer, soft = (11, True) if state.dealer_card == 1 else (state.dealer_card, False)
    dealer, soft = _add(dealer, soft, _card(rng))
    while dealer < 17:
        dealer, soft = _add(dealer, soft, _card(rng))
    if dealer > 21 or total > dealer:
        return ratio, 1.0
    return ratio, 0.0 if total == dealer else -1.0


def blackjack_study_loop(runs: int, episodes: int, state=op.BLACKJACK_BOOK_STATE, seed=0):
    """Ordinary and weighted IS after every episode of every run, with plain loops."""
    rng = np.random.default_rng(seed)
    ordinary = np.empty((runs, episodes))
    weighted = np.empty((runs, episodes))
    for r in range(runs):
        total_w = total_wg = 0.0
        for i in range(episodes):
            w, g = blackjack_episode_loop(state, rng)
            total_w += w
            total_wg += w * g
            ordinary[r, i] = total_wg / (i + 1)
            weighted[r, i] = total_wg / total_w if total_w > 0 else 0.0
    return ordinary, weighted


def one_state_episode_loop(rng) -> tuple[float, float]:
    """(ratio, return) of one episode of Example 5.5 under b."""
    ratio = 1.0
    while True:
        if rng.random() >= 0.5:  # right: pi never goes right
            return 0.0, 0.0
        ratio *= 1.0 / 0.5
        if rng.random() < 0.1:
            return ratio, 1.0


def weighted_incremental(weights, returns):
    """The book's incremental weighted IS (§5.6): C <- C + W; V <- V + (W / C)(G - V)."""
    v, c, out = 0.0, 0.0, []
    for w, g in zip(weights, returns, strict=True):
        c += w
        if c > 0:
            v += (w / c) * (g - v)
        out.append(v)
    return np.array(out)


def estimators_loop(ratios, rewards, q, v, gamma):
    """The four estimators of one data set [n, T], looping over episodes and steps."""
    n, horizon = ratios.shape
    ordinary = weighted_num = weighted_den = per_decision = doubly_robust = 0.0
    for i in range(n):
        rho_before, episode_return = 1.0, 0.0
        for t in range(horizon):
            rho_upto = rho_before * ratios[i, t]
            per_decision += gamma**t * rho_upto * rewards[i, t]
            doubly_robust += gamma**t * (rho_upto * (rewards[i, t] - q[i, t])
                                         + rho_before * v[i, t])
            episode_return += gamma**t * rewards[i, t]
            rho_before = rho_upto
        ordinary += rho_before * episode_return
        weighted_num += rho_before * episode_return
        weighted_den += rho_before
    weighted = weighted_num / weighted_den if weighted_den > 0 else 0.0
    return ordinary / n, weighted, per_decision / n, doubly_robust / n
