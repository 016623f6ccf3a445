"""rlviz.planning.sweeping: hand-computed sweeps, the plain-loop reference, θ, Example 8.4."""

import heapq
import itertools

import numpy as np
import pytest

from rlviz import planning as pl
from rlviz.errors import InputError
from rlviz.planning import sweeping as sw
from tests.oracle_sweeping import sweep_loop

UP, RIGHT, DOWN, LEFT = range(4)


def corridor():
    """``S . G`` in a row: cells 0, 1, 2; the model after trying right, right, left, left."""
    model = [[None] * 4 for _ in range(3)]
    predecessors = [[] for _ in range(3)]
    for s, a, r, s2 in [(0, RIGHT, 0.0, 1), (1, RIGHT, 1.0, 2), (0, LEFT, 0.0, 0),
                        (1, LEFT, 0.0, 0)]:
        model[s][a] = (r, s2)
        predecessors[s2].append((s, a))
    return model, predecessors


def test_a_sweep_of_the_corridor_by_hand():
    # After the first reward, (1, right) is queued with P = 1; three sweep steps, α = ½, γ = .95:
    # Q(1,R) = ½·1 = .5; its predecessor (0,R) gets P = .95·.5 = .475, then Q(0,R) = .2375;
    # the predecessors of 0, (0,L) and (1,L), get P = .95·.2375 = .225625 each (first come,
    # first served); Q(0,L) = .1128125, and (0,L) is queued again with .225625 − .1128125.
    model, predecessors = corridor()
    q = [[0.0] * 4 for _ in range(3)]
    queue, queued, order = [], {}, itertools.count()
    p = sw.priority(1.0, q[2], q[1][RIGHT], gamma=0.95)
    assert p == 1.0
    assert sw.push(queue, queued, (1, RIGHT), p, theta=1e-4, order=order)
    kw = dict(alpha=0.5, gamma=0.95, theta=1e-4, order=order)
    assert [sw.sweep_step(q, queue, queued, model, predecessors, **kw) for _ in range(3)] == [
        1, 0, 0]
    expected = np.zeros((3, 4))
    expected[1, RIGHT], expected[0, RIGHT], expected[0, LEFT] = 0.5, 0.2375, 0.1128125
    np.testing.assert_allclose(q, expected, rtol=0, atol=1e-15)
    assert queued == pytest.approx({(1, LEFT): 0.225625, (0, LEFT): 0.1128125}, abs=1e-15)
    assert [e[2] for e in sorted(queue)] == [(1, LEFT), (0, LEFT)]


def test_the_sweep_update_is_dyna_qs_update():
    model, predecessors = corridor()
    q = [[0.0, 0.3, 0.0, 0.1], [0.0, 0.2, 0.0, 0.4], [0.0] * 4]
    before = np.array(q)
    queue, queued, order = [], {}, itertools.count()
    sw.push(queue, queued, (0, RIGHT), 0.9, theta=0.0, order=order)
    sw.sweep_step(q, queue, queued, model, predecessors, alpha=0.3, gamma=0.9, theta=0.0,
                  order=order)
    assert q[0][RIGHT] == pl.q_update(before[0, RIGHT], 0.0, before[1], alpha=0.3, gamma=0.9)
    q2 = before.tolist()
    sw.replay(q2, model, [0], [[RIGHT], [], []], [[0.0, 0.0]], alpha=0.3, gamma=0.9)
    assert q2[0][RIGHT] == q[0][RIGHT]


def test_nothing_is_queued_at_or_below_theta():
    queue, queued, order = [], {}, itertools.count()
    assert not sw.push(queue, queued, (0, 0), 0.01, theta=0.01, order=order)
    assert not sw.push(queue, queued, (0, 0), 0.0, theta=0.0, order=order)
    assert sw.push(queue, queued, (0, 0), 0.02, theta=0.01, order=order)
    assert not sw.push(queue, queued, (0, 0), 0.015, theta=0.01, order=order)  # queued higher
    assert sw.push(queue, queued, (0, 0), 0.03, theta=0.01, order=order)
    assert queued == {(0, 0): 0.03}
    # The stale entry (0.02) is skipped: one update, then the queue is empty.
    model, predecessors = [[(0.0, 0)]], [[]]
    q = [[0.0]]
    kw = dict(alpha=1.0, gamma=0.9, theta=0.01, order=order)
    assert sw.sweep_step(q, queue, queued, model, predecessors, **kw) == 0
    assert sw.sweep_step(q, queue, queued, model, predecessors, **kw) is None
    assert not queue and not queued


def test_a_threshold_above_every_priority_makes_no_update():
    m = sw.scaled_maze(0)
    res = sw.run_sweeping(m, planners=("prioritized",), runs=2, theta=1.0, max_steps=3000)
    assert (res.updates == 0).all() and not res.reached.any()
    assert (res.q == 0).all()


def test_the_scaled_mazes():
    sizes = [(sw.blocks(k), int(sw.scaled_maze(k).floor[0].sum())) for k in sw.LEVELS]
    assert sizes == [((1, 1), 47), ((1, 2), 94), ((2, 2), 188)]  # the book's axis: 47, 94, 186
    for k in sw.LEVELS:
        m = sw.scaled_maze(k)
        assert sw.distances(m)[int(m.start[0])] == m.shortest[0]  # BFS = value iteration
        assert sw.states_at(k) == int(m.floor[0].sum())
        assert m.terminal[0].sum() == np.prod(sw.blocks(k))
    assert sw.scaled_maze(0).shortest == (14,)
    assert sw.scaled_layout("S.G", 1) == "S...GG"
    assert sw.scaled_layout("S.G", 2) == "S...GG\n....GG"


@pytest.mark.parametrize("planner", sw.SWEEPERS)
@pytest.mark.parametrize(("level", "seed", "kw"), [
    (0, 0, {}), (0, 3, {"alpha": 0.5, "theta": 1e-3}), (1, 1, {"n": 2, "epsilon": 0.2}),
    (0, 5, {"gamma": 0.8, "theta": 0.0})])
def test_the_engine_equals_the_plain_loop(planner, level, seed, kw):
    m = sw.scaled_maze(level)
    settings = dict(n=5, theta=sw.BOOK_THETA, epsilon=0.1, alpha=1.0, gamma=0.95,
                    max_updates=20_000, max_steps=5_000) | kw
    res = sw.run_sweeping(m, planners=(planner,), runs=2, seed=seed, key=(level,), **settings)
    for r in range(2):
        updates, steps, reached, first, q = sweep_loop(m, planner, seed=seed, key=(level, r),
                                                       **settings)
        assert (res.updates[0, r], res.steps[0, r], res.reached[0, r],
                res.first_episode[0, r]) == (updates, steps, reached, first)
        np.testing.assert_array_equal(res.q[0, r], q)


def test_paired_dice_give_both_planners_the_same_first_walk():
    res = sw.run_sweeping(sw.scaled_maze(0), runs=6, seed=2)
    walked = res.first_episode > 0
    assert walked.all()
    np.testing.assert_array_equal(res.first_episode[0], res.first_episode[1])


def test_same_seed_same_result_other_seed_other_result():
    m = sw.scaled_maze(0)
    a, b = (sw.run_sweeping(m, runs=3, seed=4) for _ in range(2))
    np.testing.assert_array_equal(a.updates, b.updates)
    c = sw.run_sweeping(m, runs=3, seed=5)
    assert not np.array_equal(a.updates, c.updates)


def test_example_8_4_prioritized_sweeping_needs_fewer_updates():
    # Example 8.4: prioritized sweeping reaches an optimal solution with far fewer updates.
    study = sw.sweeping_study((0, 1), runs=6, seed=0)
    ps, dq = (study.summary(p)[0] for p in ("prioritized", "dyna_q"))
    assert (ps * 5 < dq).all(), (ps, dq)
    wins = study.updates("prioritized") < study.updates("dyna_q")
    assert wins.mean() >= 0.9
    both = study.reached("prioritized") & study.reached("dyna_q")
    assert both.sum() >= 4
    assert (study.updates("prioritized")[both] * 5 < study.updates("dyna_q")[both]).all()
    assert study.states == (47, 94) and study.shortest == (14, 22)


def test_the_band_is_around_the_geometric_mean():
    study = sw.sweeping_study((0,), runs=4)
    mean, low, high = study.summary("prioritized")
    logs = np.log10(study.updates("prioritized")[0])
    assert mean[0] == pytest.approx(10 ** logs.mean())
    assert low[0] < mean[0] < high[0]
    assert np.log10(mean / low) == pytest.approx(np.log10(high / mean))


@pytest.mark.parametrize(("kw", "message"), [
    ({"theta": -1.0}, "threshold θ must be 0 or more"),
    ({"runs": 0}, "runs must be a whole number ≥ 1"),
    ({"n": 0}, "planning steps n must be a whole number ≥ 1"),
    ({"alpha": 0.0}, "step size α must be in (0, 1]"),
    ({"epsilon": 1.5}, "exploration rate ε must be between 0 and 1"),
    ({"gamma": float("nan")}, "discount γ must be between 0 and 1"),
])
def test_bad_settings_raise_input_errors(kw, message):
    with pytest.raises(InputError, match=message.replace("(", r"\(").replace("]", r"\]")):
        sw.run_sweeping(sw.scaled_maze(0), **kw)


@pytest.mark.parametrize(("levels", "message"), [
    ((), "choose at least one maze size"), ((0, 7), "must be among 0, 1, 2")])
def test_bad_sizes_raise_input_errors(levels, message):
    with pytest.raises(InputError, match=message):
        sw.sweeping_study(levels)


def test_an_unreachable_goal_and_a_bad_level_are_the_users_errors():
    with pytest.raises(InputError, match="resolution level"):
        sw.scaled_layout(pl.DYNA_MAZE, -1)
    with pytest.raises(InputError, match="no goal can be reached"):
        sw.scaled_maze(0, "S#G")


def test_the_heap_orders_like_the_book():
    queue, queued, order = [], {}, itertools.count()
    for pair, p in [((0, 0), 0.2), ((1, 0), 0.5), ((2, 0), 0.2)]:
        sw.push(queue, queued, pair, p, theta=0.0, order=order)
    assert [heapq.heappop(queue)[2] for _ in range(3)] == [(1, 0), (0, 0), (2, 0)]


def test_the_figure_marks_runs_stopped_by_their_budget():
    from rlviz.figures import planning as figs

    study = sw.sweeping_study((0,), runs=3, max_updates=2_000)  # Dyna-Q cannot get there
    assert not study.reached("dyna_q").any()
    fig = figs.sweeping_figure(study)
    assert fig.layout.xaxis.type == "log" and fig.layout.yaxis.type == "log"
    stopped = [t for t in fig.data if t.name == "Dyna-Q: run stopped by its budget"]
    assert len(stopped) == 1 and stopped[0].marker.symbol == "triangle-up-open"
    assert len(stopped[0].y) == 3
    line = next(t for t in fig.data if t.name == "Prioritized sweeping")
    np.testing.assert_allclose(line.y, study.summary("prioritized")[0])
    assert "lower bounds" in figs.sweeping_caption(study)
    frame = figs.sweeping_frame(study)
    assert len(frame) == 6 and set(frame.planner) == set(sw.SWEEPERS)
