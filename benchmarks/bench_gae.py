"""GAE page: the advantage filter against the plain loop, the bias-variance study, the page."""

import numpy as np

from benchmarks import case, page_first_view, page_rerun
from rlviz import returns
from tests.oracle_returns import gae_loop

LAMS = np.linspace(0.0, 1.0, 21)
MAX_EPISODES = 20_000  # the page's cap on sampled episodes


def _batch(shape=(16, 62_500), seed=0):
    """A rollout of 16 environments x 62,500 steps, 1% terminations and 1% truncations."""
    rng = np.random.default_rng(seed)
    truncated = rng.random(shape) < 0.01
    return dict(
        rewards=rng.normal(size=shape), values=rng.normal(size=shape),
        last_value=rng.normal(size=shape[0]), dones=rng.random(shape) < 0.01,
        truncated=truncated, truncated_values=np.where(truncated, rng.normal(size=shape), np.nan),
    )


BATCH = _batch()


def _loop():
    return gae_loop(gamma=0.99, lam=0.95, **BATCH)


@case("GAE over 1,000,000 steps (16 x 62,500, ends 2%)", group="gae", budget=0.050,
      reference=_loop, min_ratio=50, repeat=9)
def gae_million():
    return returns.gae(gamma=0.99, lam=0.95, **BATCH)


def _study(n_states, n_episodes, lams=LAMS):
    left, right = returns.SUTTON_BARTO_WALKS[n_states]
    return returns.bias_variance_study(
        n_states=n_states, left_reward=left, right_reward=right, gamma=0.99, lams=lams,
        critic_bias=0.1, critic_noise=0.1, n_episodes=n_episodes, seed=0,
    )


@case("study: 10,000 walks x 21 λ, 19 states (~1M steps)", group="gae", budget=0.5)
def study_19():
    return _study(19, 10_000)


@case("study: 10,000 walks x 21 λ, 5 states (~90k steps)", group="gae", budget=0.5)
def study_5():
    return _study(5, 10_000)


@case("worst caps: 20,000 walks, 19 states, 21 λ + chosen λ", group="gae", budget=2.0,
      repeat=3)
def study_worst():
    return _study(19, MAX_EPISODES), _study(19, MAX_EPISODES, lams=[0.97])


page_rerun("gae")
page_first_view("gae")
