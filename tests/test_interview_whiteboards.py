"""Each original family's whiteboard version equals rlviz on random inputs."""

import math

import numpy as np
import pytest
import torch

from rlviz import distributional, dp, mcts, offline, ppo, returns, td
from rlviz.bandits import agents
from rlviz.games import TICTACTOE
from rlviz.interview.whiteboard import bandits as wb_bandits
from rlviz.interview.whiteboard import c51 as wb_c51
from rlviz.interview.whiteboard import cliff_td as wb_td
from rlviz.interview.whiteboard import cql as wb_cql
from rlviz.interview.whiteboard import gae as wb_gae
from rlviz.interview.whiteboard import mcts as wb_mcts
from rlviz.interview.whiteboard import ppo_clip as wb_ppo
from rlviz.interview.whiteboard import value_iteration as wb_vi
from rlviz.mdp import TabularMDP, outcomes_from_dense

SEEDS = range(5)


def random_mdp(rng, states=6, actions=3):
    P = rng.random((states, actions, states)) * (rng.random((states, actions, states)) < 0.5)
    P[..., 0] += 1e-3  # every row reaches somewhere
    P /= P.sum(axis=2, keepdims=True)
    R = rng.normal(size=(states, actions))
    terminal = np.zeros(states, dtype=bool)
    terminal[-1] = True
    P[-1] = 0.0
    P[-1, :, -1] = 1.0
    R[-1] = 0.0
    next_state, prob, reward = outcomes_from_dense(P, R)
    start = np.full(states, 1.0 / states)
    mdp = TabularMDP(next_state=next_state, prob=prob, reward=reward, terminal=terminal,
                     start=start, action_names=tuple("abc"[:actions]))
    return mdp, P, R, terminal


@pytest.mark.parametrize("seed", SEEDS)
def test_value_iteration(seed):
    rng = np.random.default_rng(seed)
    mdp, P, R, terminal = random_mdp(rng)
    gamma = float(rng.uniform(0.5, 0.95))
    v, greedy = wb_vi.value_iteration(P, R, terminal, gamma, theta=1e-10)
    trace = dp.value_iteration(mdp, gamma=gamma, theta=1e-10, max_sweeps=5000)
    np.testing.assert_allclose(v, trace.final_values, atol=1e-8)
    np.testing.assert_array_equal(greedy[~terminal], trace.greedy_actions[~terminal])


@pytest.mark.parametrize("seed", SEEDS)
def test_td_targets(seed):
    rng = np.random.default_rng(seed)
    q_next = rng.normal(size=4)
    if seed % 2:
        q_next[2] = q_next.max()  # a tie for the greedy action
    r, a_next = float(rng.normal()), int(rng.integers(4))
    gamma, eps, terminal = float(rng.uniform()), float(rng.uniform()), seed == 4
    board = wb_td.td_targets(r, q_next, a_next, gamma, eps, terminal=terminal)
    assert board["q_learning"] == pytest.approx(
        td.q_learning_target(r, q_next, gamma=gamma, terminal=terminal), abs=1e-12)
    assert board["sarsa"] == pytest.approx(
        td.sarsa_target(r, q_next, a_next, gamma=gamma, terminal=terminal), abs=1e-12)
    assert board["expected_sarsa"] == pytest.approx(td.expected_sarsa_target(
        r, q_next, gamma=gamma, epsilon=eps, terminal=terminal), abs=1e-12)
    q_sa, alpha = float(rng.normal()), float(rng.uniform())
    assert wb_td.td_update(q_sa, board["sarsa"], alpha) == pytest.approx(
        td.td_update(q_sa, board["sarsa"], alpha), abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_bandit_ucb_and_update(seed):
    rng = np.random.default_rng(seed)
    arms, runs = 5, 7
    q, n = rng.normal(size=(arms, runs)), rng.integers(0, 6, size=(arms, runs)).astype(float)
    step = int(rng.integers(5, 50))
    ctx = agents.Context(arms=arms, runs=runs, cells=np.zeros((arms, runs), np.uint64),
                         local=np.arange(runs))
    ucb = agents.UCB(c=float(rng.uniform(0.1, 3.0)))
    state = {"Q": q.copy(), "N": n.copy()}
    chosen = ucb.act(state, ctx, step)
    board = [wb_bandits.ucb_action(q[:, r], n[:, r], step + 1, ucb.c) for r in range(runs)]
    untried = [np.flatnonzero(n[:, r] == 0) for r in range(runs)]
    for r in range(runs):  # among several untried arms rlviz breaks the tie at random
        if untried[r].size > 1:
            assert chosen[r] in untried[r]
        else:
            assert chosen[r] == board[r]
    rewards = rng.normal(size=runs)
    agents.UCB(c=ucb.c).learn(state, ctx, step, ctx.flat(chosen), rewards)
    for r in range(runs):
        q_r, n_r = wb_bandits.update(q[:, r], n[:, r], chosen[r], rewards[r])
        np.testing.assert_allclose(state["Q"][:, r], q_r, atol=1e-12)
        np.testing.assert_array_equal(state["N"][:, r], n_r)


@pytest.mark.parametrize("seed", SEEDS)
def test_ppo_clip(seed):
    rng = np.random.default_rng(seed)
    ratio, adv, eps = rng.uniform(0.3, 2.0, 50), rng.normal(size=50), float(rng.uniform(0.05, 0.5))
    np.testing.assert_allclose(wb_ppo.clipped_surrogate(ratio, adv, eps),
                               ppo.clipped_surrogate(ratio, adv, epsilon=eps).numpy(), atol=1e-12)
    np.testing.assert_allclose(wb_ppo.surrogate_grad(ratio, adv, eps),
                               ppo.surrogate_grad(ratio, adv, epsilon=eps), atol=1e-12)
    logp, logp_old = np.log(rng.uniform(0.05, 1, 50)), np.log(rng.uniform(0.05, 1, 50))
    lib = ppo.ppo_clip_loss(torch.tensor(logp), torch.tensor(logp_old), torch.tensor(adv),
                            epsilon=eps)
    assert wb_ppo.ppo_loss(logp, logp_old, adv, eps) == pytest.approx(float(lib), abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_gae(seed):
    rng = np.random.default_rng(seed)
    t = int(rng.integers(3, 20))
    rewards, values = rng.normal(size=t), rng.normal(size=t)
    dones = rng.random(t) < 0.2
    last, gamma, lam = float(rng.normal()), float(rng.uniform()), float(rng.uniform())
    np.testing.assert_allclose(
        wb_gae.gae(rewards, values, last, dones, gamma, lam),
        returns.gae(rewards, values, gamma=gamma, lam=lam, last_value=last, dones=dones),
        atol=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("rule", ["uct", "puct"])
def test_mcts_selection(seed, rule):
    trace = mcts.search(TICTACTOE, TICTACTOE.position("........."), simulations=60 + 20 * seed,
                        c=1.4, rule=rule, prior="solver" if rule == "puct" else "uniform",
                        seed=seed)
    tree = trace.tree
    for node in range(min(tree.n_nodes, 12)):
        if not tree.legal[node].any():
            continue
        step = mcts.selection_scores(tree, node, rule=rule, c=1.4)
        visits, q, prior = tree.child_stats(node)
        m = step.moves
        if rule == "uct":
            board = wb_mcts.uct_scores(q[m], visits[m], tree.visits[node], 1.4)
        else:
            board = wb_mcts.puct_scores(q[m], visits[m], prior[m], tree.visits[node], 1.4)
        np.testing.assert_allclose(board, step.score, atol=1e-12)


def test_mcts_backup_alternates_signs():
    total, visits = wb_mcts.backup(np.zeros(4), np.zeros(4), [0, 1, 3], leaf_value=1.0)
    np.testing.assert_array_equal(total, [1.0, -1.0, 0.0, 1.0])
    np.testing.assert_array_equal(visits, [1, 1, 0, 1])


@pytest.mark.parametrize("seed", SEEDS)
def test_c51_projection(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 52))
    z = distributional.make_support(-10.0, 10.0, n)
    p = rng.dirichlet(np.ones(n))
    r = float(rng.normal(scale=6.0)) if seed != 3 else 0.0
    gamma, done = (1.0 if seed == 3 else float(rng.uniform())), seed == 4
    lib = distributional.categorical_projection(p[None], [r], [done], gamma=gamma, support=z)
    board = wb_c51.project(p, r, done, gamma, z)
    np.testing.assert_allclose(board, lib.probs.numpy()[0], atol=1e-12)
    assert board.sum() == pytest.approx(1.0)
    logits = rng.normal(size=n)
    ce = distributional.cross_entropy(torch.tensor(logits[None]), torch.tensor(board[None]))
    assert wb_c51.cross_entropy(logits, board) == pytest.approx(float(ce.sum()), abs=1e-10)


@pytest.mark.parametrize("seed", SEEDS)
def test_cql_loss(seed):
    rng = np.random.default_rng(seed)
    states, actions, n = 5, 4, 30
    q = rng.normal(size=(states, actions))
    s, a, s2 = rng.integers(states, size=n), rng.integers(actions, size=n), rng.integers(states,
                                                                                           size=n)
    r, done = rng.normal(size=n), rng.random(n) < 0.3
    gamma, alpha = float(rng.uniform(0.5, 0.99)), float(rng.choice([0.0, 0.1, 1.0, 5.0]))
    qt = torch.tensor(q)[None]
    y = offline.bellman_targets(qt, torch.tensor(r), torch.tensor(s2), torch.tensor(done), gamma)
    loss, _, _ = offline.offline_loss(qt, torch.tensor(s), torch.tensor(a), y,
                                      torch.tensor([alpha], dtype=torch.float64),
                                      torch.full((n,), 1.0 / n, dtype=torch.float64))
    board = wb_cql.cql_loss(q, s, a, r, s2, done, gamma, alpha)
    # rlviz's targets multiply γ by a bool tensor, which rounds γ to float32 first.
    assert board == pytest.approx(float(loss[0]), rel=1e-6)
    assert math.isfinite(board)
