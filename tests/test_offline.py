"""Offline RL and CQL: losses, datasets, learners against exact fixed points, true returns."""

import math

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import root

from rlviz import offline
from rlviz.envs import cliff_walking
from rlviz.mdp import policy_value

ALPHAS = offline.ALPHAS


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    # Tiny tensors gain nothing from threads, and on a crowded shared machine idle OpenMP
    # workers spinning for each other make these tests many times slower.
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def t(x, dtype=torch.float64):
    return torch.tensor(x, dtype=dtype)


# ------------------------------------------------------------------------------------ losses


def test_cql_gap_by_hand():
    q = t([[[1.0, 2.0, 3.0]]])  # [B=1, S=1, A=3]
    gap = offline.cql_gap(q, torch.tensor([0, 0]), torch.tensor([0, 2]))
    lse = math.log(math.e + math.e**2 + math.e**3)
    np.testing.assert_allclose(gap.numpy(), [[lse - 1.0, lse - 3.0]], atol=1e-14)


@settings(max_examples=60, deadline=None)
@given(arrays(np.float64, (3, 4, 5), elements=st.floats(-1e4, 1e4)),
       st.lists(st.integers(0, 3), min_size=1, max_size=8),
       st.data())
def test_cql_gap_is_never_negative_and_stays_finite(q, states, data):
    actions = data.draw(st.lists(st.integers(0, 4), min_size=len(states), max_size=len(states)))
    gap = offline.cql_gap(t(q), torch.tensor(states), torch.tensor(actions)).numpy()
    assert np.isfinite(gap).all()
    assert (gap >= 0).all()
    # log Σ exp ≥ max: the gap is at least how far the logged action is below the best one.
    below_best = q[:, states].max(axis=-1) - q[:, states, actions]
    assert (gap >= below_best - 1e-9 * np.maximum(1, np.abs(q).max())).all()


def test_bellman_targets_by_hand():
    q = t([[[1.0, 5.0], [2.0, -1.0], [9.0, 9.0]]])  # [1, S=3, A=2]
    y = offline.bellman_targets(q, t([1.0, 0.5, -1.0]), torch.tensor([0, 1, 2]),
                                torch.tensor([False, False, True]), 0.9)
    np.testing.assert_allclose(y.numpy(), [[1 + 0.9 * 5, 0.5 + 0.9 * 2, -1.0]])


def test_offline_loss_by_hand():
    q = t([[[0.0, 1.0]], [[0.0, 1.0]]])  # two learners, one state, two actions
    states, actions = torch.tensor([0, 0]), torch.tensor([0, 1])
    targets = t([[1.0, 1.0], [1.0, 1.0]])
    loss, td, gap = offline.offline_loss(q, states, actions, targets, t([0.0, 2.0]), t([0.5, 0.5]))
    lse = math.log(1 + math.e)
    np.testing.assert_allclose(td.numpy(), [0.25, 0.25])  # ½ (0 − 1)² / 2
    np.testing.assert_allclose(gap.numpy(), [0.5 * (lse - 0) + 0.5 * (lse - 1)] * 2)
    np.testing.assert_allclose(loss.numpy(), [0.25, 0.25 + 2 * gap[1].item()])


@pytest.mark.parametrize("grid", [True, False])
def test_closed_form_gradient_equals_autograd_of_the_loss(grid):
    if grid:  # repeated pairs, states the data never visits, terminal transitions
        prob = offline.grid_problem("cliff", epsilon=0.3, slip=0.2)
        data = offline.sample_grid(prob.mdp, prob.behaviour, 300, np.random.default_rng(2))
    else:  # one state, a window of actions
        data = offline.sample_one_state(offline.one_state_problem(n_actions=9), 40,
                                        np.random.default_rng(2))
    assert (data.counts.sum(axis=1) == 0).any() == grid
    rows = offline._rows(data, per_state=grid)
    gen = torch.Generator().manual_seed(1)
    q = 3 * torch.randn(4, data.n_states, data.n_actions, generator=gen, dtype=torch.float64)
    alphas = t([0.0, 0.3, 2.0, 10.0])
    y = offline.bellman_targets(q, rows.rewards, rows.next_states, rows.dones, 0.9)
    leaf = q.clone().requires_grad_(True)
    loss = offline.offline_loss(leaf, rows.states, rows.actions, y, alphas, rows.weights)[0]
    (expected,) = torch.autograd.grad(loss.sum(), [leaf])
    grad = offline.offline_loss_grad(q, rows.per_pair(rows.weights),
                                     rows.per_pair(rows.weights * y), alphas)
    np.testing.assert_allclose(grad.numpy(), expected.numpy(), rtol=1e-12, atol=1e-14)


def test_closed_form_gradient_by_hand():
    """One state, p̂ = (½, ½, 0): ∂L/∂Q_a = p̂_a (Q_a − r̄_a) + α (π_a − p̂_a)."""
    q = t([[[0.0, 1.0, 2.0]]])
    pi = np.exp([0.0, 1.0, 2.0]) / np.exp([0.0, 1.0, 2.0]).sum()
    p_hat, rbar = np.array([0.5, 0.5, 0.0]), np.array([1.0, 3.0, 0.0])
    grad = offline.offline_loss_grad(q, t(p_hat[None]), t((p_hat * rbar)[None, None]), t([0.5]))
    np.testing.assert_allclose(grad.numpy()[0, 0],
                               p_hat * ([0.0, 1.0, 2.0] - rbar) + 0.5 * (pi - p_hat), atol=1e-15)


@pytest.mark.parametrize("per_state", [True, False])
def test_grouped_rows_give_the_same_loss_and_gradient_as_every_transition(per_state):
    prob = offline.grid_problem("cliff", epsilon=0.5, slip=0.2)
    data = offline.sample_grid(prob.mdp, prob.behaviour, 700, np.random.default_rng(3))
    rows = offline._rows(data, per_state=per_state)
    assert len(rows.states) < data.size  # grouping did something
    gen = torch.Generator().manual_seed(0)
    q_target = torch.randn(2, data.n_states, data.n_actions, generator=gen, dtype=torch.float64)
    alphas = t([0.0, 0.7])
    s, a = torch.tensor(data.states), torch.tensor(data.actions)
    counts = np.bincount(data.states, minlength=data.n_states)
    w = 1.0 / counts[data.states] if per_state else np.full(data.size, 1.0 / data.size)

    def grad_of(fn):
        q = q_target.clone().requires_grad_(True)
        loss = fn(q)
        loss.sum().backward()
        return loss.detach(), q.grad

    def every(q):
        y = offline.bellman_targets(q_target, t(data.rewards), torch.tensor(data.next_states),
                                    torch.tensor(data.dones), 0.9)
        return offline.offline_loss(q, s, a, y, alphas, t(w))[0]

    def grouped(q):
        y = offline.bellman_targets(q_target, rows.rewards, rows.next_states, rows.dones, 0.9)
        return offline.offline_loss(q, rows.states, rows.actions, y, alphas, rows.weights)[0]

    loss_every, grad_every = grad_of(every)
    loss_grouped, grad_grouped = grad_of(grouped)
    np.testing.assert_allclose(grad_grouped.numpy(), grad_every.numpy(), atol=1e-12)
    # The losses differ by the rewards' spread within each group, which rows.spread holds.
    np.testing.assert_allclose((loss_grouped + rows.spread).numpy(), loss_every.numpy(),
                               rtol=1e-12)


# ------------------------------------------------------------------------------------ datasets


def test_one_state_problem_window():
    prob = offline.one_state_problem("hill", n_actions=41, coverage=0.4, centre=-0.5)
    supported = np.flatnonzero(prob.supported)
    assert len(supported) == round(0.4 * 41)
    assert (np.diff(supported) == 1).all()  # one contiguous window
    step = prob.positions[1] - prob.positions[0]
    assert abs(prob.positions[supported].mean() + 0.5) <= step / 2 + 1e-12
    np.testing.assert_allclose(prob.behaviour.sum(), 1.0)
    edge = offline.one_state_problem("hill", n_actions=11, coverage=0.5, centre=1.0)
    assert np.flatnonzero(edge.supported).tolist() == [5, 6, 7, 8, 9, 10]  # moved inwards


def test_one_state_samples_follow_the_behaviour_and_the_seed():
    prob = offline.one_state_problem(coverage=0.3, noise=0.2)
    a = offline.sample_one_state(prob, 3000, np.random.default_rng(1))
    b = offline.sample_one_state(prob, 3000, np.random.default_rng(1))
    c = offline.sample_one_state(prob, 3000, np.random.default_rng(2))
    np.testing.assert_array_equal(a.rewards, b.rewards)
    assert not np.array_equal(a.actions, c.actions)
    assert prob.supported[a.actions].all() and a.dones.all() and (a.states == 0).all()
    seen = a.counts[0] > 0
    assert seen.sum() == prob.supported.sum()
    # Mean rewards approach the truth: within 5 standard errors on every action.
    err = np.abs(a.mean_rewards[0][seen] - prob.true_reward[seen])
    assert (err < 5 * 0.2 / np.sqrt(a.counts[0][seen])).all()


def test_grid_samples_are_real_transitions_from_the_start():
    prob = offline.grid_problem("cliff", epsilon=0.3, slip=0.2)
    mdp = prob.mdp
    data = offline.sample_grid(mdp, prob.behaviour, 2000, np.random.default_rng(0), walkers=8)
    assert data.size == 2000
    assert (data.states[:8] == mdp.start_state).all()  # every walker starts at S
    possible = mdp.prob[data.states, data.actions] > 0
    hit = mdp.next_state[data.states, data.actions] == data.next_states[:, None]
    assert (possible & hit).any(axis=1).all()
    np.testing.assert_array_equal(data.dones, mdp.terminal[data.next_states])
    again = offline.sample_grid(mdp, prob.behaviour, 2000, np.random.default_rng(0), walkers=8)
    np.testing.assert_array_equal(data.actions, again.actions)


def test_greedy_behaviour_takes_only_the_safe_path():
    prob = offline.grid_problem("cliff", epsilon=0.0)
    data = offline.sample_grid(prob.mdp, prob.behaviour, 300, np.random.default_rng(0))
    np.testing.assert_array_equal(data.actions, prob.safe_actions[data.states])


def test_the_safe_path_keeps_off_the_cliff_edge():
    prob = offline.grid_problem("cliff", caution=5.0)
    states, reaches = offline.greedy_path(prob.mdp, prob.safe_actions)
    cells = prob.mdp.grid.cells[states]
    assert reaches and len(states) - 1 == 15  # two steps longer than the edge
    on_edge_row = cells[(cells[:, 0] == 2)]
    assert set(on_edge_row[:, 1].tolist()) <= {0, 11}  # only beside S and G
    optimal = offline.greedy_path(prob.mdp, prob.q_star.argmax(axis=1))
    assert optimal[1] and len(optimal[0]) - 1 == 13


def test_optimal_q_equals_value_iteration_and_the_closed_form():
    mdp = cliff_walking(slip=0.1)
    gamma = 0.9
    q_star = offline._optimal_q(mdp, gamma)
    q = np.zeros_like(q_star)
    for _ in range(2000):  # plain Bellman optimality backups
        v = np.where(mdp.terminal, 0.0, q.max(axis=1))
        q = (mdp.prob * (mdp.reward + gamma * v[mdp.next_state])).sum(axis=2)
        q[mdp.terminal] = 0.0
    np.testing.assert_allclose(q_star, q, atol=1e-9)
    det = offline._optimal_q(cliff_walking(), gamma)
    assert det[cliff_walking().start_state].max() == pytest.approx(-(1 - gamma**13) / (1 - gamma))


# ------------------------------------------------------------------------------------ oracle


@pytest.mark.parametrize("alpha", [0.01, 0.3, 1.0, 10.0, 100.0])
def test_fixed_point_solves_the_gradient_equations(alpha):
    rng = np.random.default_rng(7)
    n = rng.integers(0, 25, 30).astype(float)
    n[:6] = 0
    rbar = rng.normal(size=30)
    fp = offline.one_state_fixed_point(n, rbar, alpha)
    seen = n > 0
    p = n[seen] / n.sum()

    def gradient(q):
        pi = np.exp(q - np.logaddexp.reduce(q))
        return p * (q - rbar[seen]) + alpha * (pi - p)

    independent = root(gradient, rbar[seen], method="hybr", tol=1e-14).x
    np.testing.assert_allclose(fp.q[seen], independent, atol=1e-10)
    assert np.abs(gradient(fp.q[seen])).max() < 1e-12
    assert np.isneginf(fp.q[~seen]).all() and fp.policy[~seen].sum() == 0
    # Summing the equations: the data-weighted mean of Q equals the mean reward.
    assert p @ fp.q[seen] == pytest.approx(p @ rbar[seen], abs=1e-10)
    # Q_a = r̄_a + α (1 − π_a / p̂_a), Kumar et al. (2020), Theorem 3.1.
    np.testing.assert_allclose(fp.q[seen], rbar[seen] + alpha * (1 - fp.policy[seen] / p),
                               atol=1e-9)


def test_fixed_point_by_symmetry_and_at_alpha_zero():
    fp = offline.one_state_fixed_point(np.array([5, 5, 0]), np.array([0.3, 0.3, 9.0]), 2.0)
    np.testing.assert_allclose(fp.q[:2], [0.3, 0.3], atol=1e-13)  # π = p̂ = ½: no shift
    zero = offline.one_state_fixed_point(np.array([2, 0, 1]), np.array([1.0, 7.0, -2.0]), 0.0)
    np.testing.assert_array_equal(zero.q[[0, 2]], [1.0, -2.0])
    assert np.isnan(zero.q[1])  # free: the loss does not depend on it


def test_vectorised_fixed_point_equals_one_state_at_a_time():
    rng = np.random.default_rng(1)
    counts = rng.integers(0, 4, (9, 5))
    counts[3] = 0  # a state without data
    targets = rng.normal(size=(9, 5)) * 3
    together = offline.cql_fixed_point(counts, targets, 0.7)
    for s in range(9):
        if counts[s].sum() == 0:
            assert np.isnan(together[s]).all()
            continue
        alone = offline.one_state_fixed_point(counts[s], targets[s], 0.7).q
        np.testing.assert_allclose(together[s], alone, atol=1e-12)


# ------------------------------------------------------------------------------------ learners


@pytest.fixture(scope="module")
def one_state():
    return offline.one_state_experiment(model="table", size=500, seed=0)


def test_alpha_zero_is_the_naive_learner(one_state):
    """α = 0: the sample mean on seen actions, the untouched initial value elsewhere."""
    res = one_state
    seen = res.counts > 0
    naive = res.table.q[0, 0]
    np.testing.assert_allclose(naive[seen], res.data.mean_rewards[0][seen], atol=1e-9)
    np.testing.assert_array_equal(naive[~seen], res.table.q_history[0, 0, 0][~seen])
    assert res.fit_error(0) < 1e-9


def test_trained_values_match_the_fixed_point(one_state):
    for i, alpha in enumerate(ALPHAS):
        assert one_state.fit_error(i) < 0.01, alpha
        assert alpha * one_state.unseen_mass(i) < 0.01, alpha


def test_unseen_values_fall_monotonically_in_alpha(one_state):
    unseen = one_state.counts == 0
    q = one_state.table.q[:, 0][:, unseen]  # [B, unseen]
    assert unseen.sum() >= 10
    assert (np.diff(q, axis=0) < 0).all()
    assert (q[-1] < q[0] - 3).all()  # not a rounding-error decrease


def test_regulariser_never_negative_during_training(one_state):
    assert (one_state.table.gap >= 0).all()
    grid = offline.grid_experiment(size=300, steps=200)
    assert (grid.training.gap >= 0).all()


def test_batched_learners_equal_separate_runs():
    prob = offline.one_state_problem(n_actions=15, coverage=0.5)
    data = offline.sample_one_state(prob, 80, np.random.default_rng(4))
    batch = offline.train_table(data, [0.0, 0.5, 3.0], steps=150, lr=0.5, momentum=0.9, seed=9)
    for k, alpha in enumerate([0.0, 0.5, 3.0]):
        alone = offline.train_table(data, [alpha], steps=150, lr=0.5, momentum=0.9, seed=9)
        np.testing.assert_allclose(batch.q[k], alone.q[0], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(batch.loss[k], alone.loss[0], rtol=1e-12)
    mlp = offline.train_mlp(data, [0.0, 2.0], prob.positions[:, None], per_action=True,
                            steps=60, hidden=8, seed=3)
    alone = offline.train_mlp(data, [2.0], prob.positions[:, None], per_action=True, steps=60,
                              hidden=8, seed=3)
    np.testing.assert_allclose(mlp.q[1], alone.q[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("sizes, one_hot", [([1, 8, 8, 1], 0), ([6, 8, 8, 4], 0),
                                            ([9, 8, 8, 4], 7)])
def test_backpropagation_by_hand_equals_autograd(sizes, one_hot):
    """The one-state network (one input, one output: the broadcast products), a grid's, and a
    grid's whose input starts with a one-hot code of the state (read as a lookup)."""
    from rlviz.offline.learners import _mlp, _mlp_backward, _mlp_init

    gen = torch.Generator().manual_seed(0)
    theta, _ = _mlp_init(sizes, 3, gen)
    theta = theta.double() + 0.1 * torch.randn(theta.shape, generator=gen, dtype=torch.float64)
    x = torch.randn(3, 7, sizes[0], generator=gen, dtype=torch.float64)
    if one_hot:
        x[:, :, :one_hot] = torch.eye(one_hot, dtype=torch.float64)
    upstream = torch.randn(3, 7, sizes[-1], generator=gen, dtype=torch.float64)

    def layers_of(flat):
        out, start = [], 0
        for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
            w = flat[start : start + 3 * fan_in * fan_out].view(3, fan_in, fan_out)
            start += w.numel()
            b = flat[start : start + 3 * fan_out].view(3, 1, fan_out)
            start += b.numel()
            out.append((w, b))
        return out

    leaf = theta.clone().requires_grad_(True)
    dense, _ = _mlp(layers_of(leaf), x)  # the plain product with the whole input
    (expected,) = torch.autograd.grad((dense * upstream).sum(), [leaf])
    output, hidden = _mlp(layers_of(theta), x, one_hot)
    np.testing.assert_allclose(output.numpy(), dense.detach().numpy(), rtol=1e-12, atol=1e-14)
    assert (hidden[0] == 0).any() and (hidden[0] > 0).any()  # both sides of the ReLUs
    grad = _mlp_backward(layers_of(theta), x, hidden, upstream, one_hot)
    np.testing.assert_allclose(grad.numpy(), expected.numpy(), rtol=1e-12, atol=1e-14)


def test_same_seed_same_learners_different_seed_different():
    prob = offline.grid_problem("cliff")
    data = offline.sample_grid(prob.mdp, prob.behaviour, 400, np.random.default_rng(0))
    run = lambda seed: offline.train_table(data, [0.0, 1.0], gamma=0.9, steps=100, seed=seed)  # noqa: E731
    np.testing.assert_array_equal(run(5).q, run(5).q)
    assert not np.allclose(run(5).q, run(6).q)
    cells = prob.mdp.grid.cells / 11
    mlp = lambda seed: offline.train_mlp(data, [1.0], cells, gamma=0.9, steps=30, hidden=8,  # noqa: E731
                                         seed=seed)
    np.testing.assert_array_equal(mlp(5).q, mlp(5).q)
    assert not np.allclose(mlp(5).q, mlp(6).q)
    a = offline.grid_experiment(size=300, steps=100, seed=1)
    b = offline.grid_experiment(size=300, steps=100, seed=1)
    c = offline.grid_experiment(size=300, steps=100, seed=2)
    np.testing.assert_array_equal(a.data.actions, b.data.actions)
    np.testing.assert_array_equal(a.training.q, b.training.q)
    assert not np.array_equal(a.data.actions, c.data.actions)


@pytest.fixture(scope="module")
def grid_table():
    return offline.grid_experiment(model="table", size=500, seed=0)


def test_only_the_table_has_an_exact_fixed_point():
    res = offline.grid_experiment(model="mlp", size=100, steps=20)
    with pytest.raises(ValueError, match="MLP"):
        res.fixed_point_gap(0)


def test_grid_table_reaches_fitted_q_iteration_solved_exactly(grid_table):
    res = grid_table
    seen = res.data.counts > 0
    for i in (0, ALPHAS.index(0.1), ALPHAS.index(1.0), ALPHAS.index(10.0)):
        exact = offline.exact_fitted_q(res.data, ALPHAS[i], res.problem.gamma,
                                       res.training.q_history[0, i], tol=1e-9)
        err = np.abs(res.training.q[i][seen] - exact[seen]).max()
        assert err < (1e-3 if i == 0 else 0.05), (ALPHAS[i], err)
        assert res.fixed_point_gap(i) == err
    assert not np.isfinite(exact[~seen & seen.any(axis=1, keepdims=True)]).any()


def test_exact_naive_is_value_iteration_on_the_empirical_mdp(grid_table):
    data, gamma = grid_table.data, grid_table.problem.gamma
    q0 = grid_table.training.q_history[0, 0]
    counts = data.counts
    q = q0.copy()
    for _ in range(3000):  # transition by transition, no vectorisation
        total = np.zeros_like(q)
        for s, a, r, s2, d in zip(data.states, data.actions, data.rewards, data.next_states,
                                  data.dones, strict=True):
            total[s, a] += r + (0.0 if d else gamma * q[s2].max())
        q = np.where(counts > 0, total / np.maximum(counts, 1), q0)
    exact = offline.exact_fitted_q(data, 0.0, gamma, q0)
    np.testing.assert_allclose(exact, q, atol=1e-8)


# ------------------------------------------------------------------------------------ returns


@pytest.mark.parametrize("model", ["mlp", "table"])
def test_cql_beats_naive_on_the_default_one_state_dataset(model):
    res = offline.one_state_experiment(model=model)
    i = ALPHAS.index(1.0)
    assert res.true_return[i] >= res.true_return[0]
    assert res.true_return[i] > res.behaviour_return
    if model == "mlp":  # the network extrapolates upwards past the data: naive picks outside
        assert res.counts[res.training.q[0, 0].argmax()] == 0
        assert res.true_return[i] > res.true_return[0] + 0.5


@pytest.mark.parametrize("model", ["table", "mlp"])
def test_cql_beats_naive_on_the_default_grid_dataset(model):
    res = offline.grid_experiment(model=model, size=500)
    i = ALPHAS.index(1.0)
    assert res.true_return[i] >= res.true_return[0]
    assert res.true_return[i] > res.behaviour_return
    states, reaches = offline.greedy_path(res.problem.mdp, res.training.q[i].argmax(axis=1))
    assert reaches


def test_true_returns_are_exact_policy_values(grid_table):
    res = grid_table
    mdp, gamma = res.problem.mdp, res.problem.gamma
    for i in (0, 5, 10):
        policy = np.eye(mdp.n_actions)[res.training.q[i].argmax(axis=1)]
        value = policy_value(mdp, policy, gamma)[mdp.start_state]
        assert res.true_return[i] == pytest.approx(value, rel=1e-12)
        assert res.return_history[i, -1] == pytest.approx(res.true_return[i])
    assert res.optimal_return == pytest.approx(-(1 - gamma**13) / (1 - gamma))
    assert res.optimal_return >= res.true_return.max() - 1e-12


def test_error_split_by_hand():
    q = np.array([[[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]]])  # [B=1, S=2, A=3]
    truth = np.zeros((2, 3))
    counts = np.array([[1, 0, 0], [0, 0, 0]])  # state 1 has no data: ignored
    inside, outside = offline.error_split(q, truth, counts)
    assert inside.tolist() == [1.0] and outside.tolist() == [2.5]
    full = offline.error_split(q, truth, np.ones((2, 3)))[1]
    assert np.isnan(full).all()


# ------------------------------------------------------------------------------------ messages


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: offline.one_state_problem("cubic"), "unknown reward curve"),
        (lambda: offline.one_state_problem(coverage=0.0), "coverage"),
        (lambda: offline.one_state_problem(n_actions=1), "number of actions"),
        (lambda: offline.one_state_problem(centre=2.0), "centre"),
        (lambda: offline.one_state_problem(noise=-1.0), "noise"),
        (lambda: offline.sample_one_state(offline.one_state_problem(), 0,
                                          np.random.default_rng(0)), "dataset size"),
        (lambda: offline.grid_problem("moon"), "unknown grid"),
        (lambda: offline.grid_problem(epsilon=1.5), "ε"),
        (lambda: offline.grid_problem(gamma=1.0), "γ"),
        (lambda: offline.grid_problem(slip=0.9), "slip"),
        (lambda: offline.one_state_experiment(model="forest"), "model"),
        (lambda: offline.grid_experiment(size=10**6), "dataset size"),
        (lambda: offline.one_state_fixed_point([0, 0], [1.0, 2.0], 1.0), "at least one sample"),
        (lambda: offline.one_state_fixed_point([1, 1], [1.0, 2.0], -1.0), "α"),
        (lambda: offline.cql_fixed_point(np.ones((2, 3)), np.ones((2, 2)), 1.0), "shape"),
        (lambda: offline.Dataset([0], [5], [0.0], [0], [False], 1, 3), "actions"),
        (lambda: offline.Dataset([0], [0], [np.nan], [0], [False], 1, 3), "finite"),
        (lambda: offline.Dataset([], [], [], [], [], 1, 3), "at least one transition"),
    ],
)
def test_invalid_settings_give_clear_messages(call, message):
    with pytest.raises(ValueError, match=message):
        call()


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        (dict(alphas=[-1.0]), "non-negative"),
        (dict(alphas=[]), "at least one"),
        (dict(steps=0), "training steps"),
        (dict(gamma=1.0), "γ"),
        (dict(alphas=[20.0], lr=0.5, momentum=0.5), "diverge"),
        (dict(momentum=1.0), "momentum"),
        (dict(init_std=-1.0), "initial spread"),
    ],
)
def test_table_learner_rejects_bad_settings(kwargs, message):
    data = offline.sample_one_state(offline.one_state_problem(), 20, np.random.default_rng(0))
    args = dict(alphas=[1.0]) | kwargs
    with pytest.raises(ValueError, match=message):
        offline.train_table(data, args.pop("alphas"), **args)


def test_mlp_learner_rejects_bad_features():
    data = offline.sample_one_state(offline.one_state_problem(), 20, np.random.default_rng(0))
    with pytest.raises(ValueError, match="features must have shape"):
        offline.train_mlp(data, [1.0], np.zeros((3, 1)), per_action=True)


def test_infinite_values_are_reported_not_returned():
    rec = offline._Recorder(np.array([0]))
    q = torch.full((1, 1, 2), math.inf)
    rec(0, q, *(torch.zeros(1),) * 3)
    with pytest.raises(ValueError, match="diverged"):
        rec.result(np.array([1.0]), q, "table")


# ------------------------------------------------------------------------------------ figures


def test_one_state_figure_shades_the_gaps_and_marks_what_falls_off_the_axis(one_state):
    from rlviz.figures import offline as figs

    i = ALPHAS.index(10.0)
    fig = figs.one_state(one_state, i, fixed_point=True)
    unseen = one_state.counts == 0
    runs = int((np.diff(np.concatenate([[0], unseen.astype(int), [0]])) == 1).sum())
    assert len(fig.layout.shapes) == runs
    below = next(t for t in fig.data if t.name == "cql values below the axis")
    floor = below.y[0]
    assert fig.layout.yaxis.range[0] < floor  # the ▼ markers sit inside the plot
    q = one_state.table.q[i, 0]
    np.testing.assert_allclose(below.customdata, q[q < floor])
    assert (q < floor).sum() == unseen.sum()  # at α = 10 exactly the unseen actions sink
    picks = [t for t in fig.data if (t.name or "").startswith(("naive's pick", "CQL's pick"))]
    assert len(picks) == 2
    cql_pick = int(np.argmax(one_state.table.q[i, 0]))
    assert picks[1].x[0] == one_state.problem.positions[cql_pick]
    assert f"{one_state.problem.true_reward[cql_pick]:.2f}" in picks[1].name
    fixed = next(t for t in fig.data if (t.name or "").startswith("exact fixed point"))
    np.testing.assert_allclose(fixed.y, one_state.fixed_points[i][~unseen])


def test_alpha_figures_mark_the_chosen_alpha(grid_table):
    from rlviz.figures import offline as figs

    res, i = grid_table, ALPHAS.index(0.5)
    fig = figs.return_vs_alpha(res.training.alphas, res.true_return, chosen=i,
                               naive=res.true_return[0], behaviour=res.behaviour_return,
                               optimal=res.optimal_return)
    chosen = next(t for t in fig.data if t.name == "chosen α")
    assert chosen.x == (0.5,) and chosen.y == (res.true_return[i],)
    assert fig.layout.xaxis.type == "log"
    cql = next(t for t in fig.data if t.name == "CQL")
    assert len(cql.x) == len(ALPHAS) - 1  # α = 0 is the naive line, not a point on a log axis
    split = figs.error_vs_alpha(res.training.alphas, *res.error_split(), chosen=i)
    assert sum(t.name == "chosen α" for t in split.data) == 2


def test_grid_figures_draw_routes_and_shared_colour_limits(grid_table):
    from rlviz.figures import offline as figs

    res = grid_table
    zr = figs.error_range(res, (0, 7))
    assert zr[1] == -zr[0] > 0
    naive = figs.grid_learner(res, 0, title="naive", role="naive", zrange=zr)
    cql = figs.grid_learner(res, 7, title="cql", role="cql", zrange=zr)
    heat = [t for t in cql.data if t.type == "heatmap" and t.zmin is not None][0]
    assert (heat.zmin, heat.zmax) == zr
    routes = {t.name for fig in (naive, cql) for t in fig.data
              if (t.name or "").startswith("route")}
    assert "route: earns -20.00 (never reaches the goal)" in routes  # naive loops forever
    assert f"route: earns {res.true_return[7]:.2f}" in routes
    data = figs.grid_data(res)
    assert any(t.name == "behaviour's safe path" for t in data.data)


@pytest.mark.parametrize("name", list(offline.GRIDS))
def test_sparse_policy_values_equal_the_dense_solve_for_stochastic_policies(name):
    problem = offline.grid_problem(name, epsilon=0.3, gamma=0.95, slip=0.1)
    mdp, rng = problem.mdp, np.random.default_rng(3)
    random = rng.dirichlet(np.ones(mdp.n_actions), size=mdp.n_states)
    policies = np.stack([problem.behaviour, random])
    expected = [policy_value(mdp, pi, 0.95) for pi in policies]
    np.testing.assert_allclose(offline._policy_values(mdp, policies, 0.95), expected,
                               rtol=1e-12, atol=1e-11)


@pytest.mark.parametrize("name", list(offline.GRIDS))
def test_batched_policy_values_equal_one_linear_solve_each(name):
    mdp = offline.grid_problem(name, epsilon=0.2, gamma=0.9, slip=0.2).mdp
    actions = np.random.default_rng(1).integers(0, mdp.n_actions, size=(70, mdp.n_states))
    eye = np.eye(mdp.n_actions)
    expected = [mdp.start @ policy_value(mdp, eye[a], 0.9) for a in actions]
    np.testing.assert_allclose(offline._start_values(mdp, actions, 0.9), expected,
                               rtol=1e-12, atol=1e-11)
