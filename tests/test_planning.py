"""rlviz.planning: hand-computed steps, the plain-loop reference, td's Q-learning, the book."""

import numpy as np
import pytest

from rlviz import planning as pl
from rlviz import td
from rlviz.errors import InputError
from tests.oracle_planning import dyna_loop

DYNA = pl.maze(pl.DYNA_MAZE)
BLOCKING = pl.maze(*pl.BLOCKING_MAZE)
SHORTCUT = pl.maze(*pl.SHORTCUT_MAZE)
FIELDS = ("lengths", "played", "steps_taken", "first_reward", "q", "tried", "model_next",
          "visits", "stopped_early")


# --------------------------------------------------------------------------- mazes
def test_the_books_mazes_by_value_iteration():
    assert DYNA.shortest == (14,)  # Figure 8.2: the curves end at 14 steps
    assert BLOCKING.shortest == (10, 16)  # Figure 8.4: right-hand gap, then left-hand gap
    assert SHORTCUT.shortest == (16, 10)  # Figure 8.5: a second gap opens on the right
    assert DYNA.shape == (6, 9) and DYNA.start[0] == DYNA.cell(2, 0)
    assert DYNA.terminal[0, DYNA.cell(0, 8)] and DYNA.reward[0].max() == 1.0


def test_cells_mean_the_same_place_in_both_worlds():
    gap = BLOCKING.cell(3, 8)
    assert BLOCKING.floor[0, gap] and not BLOCKING.floor[1, gap]
    below = BLOCKING.cell(4, 8)
    up = 0
    assert BLOCKING.next_cell[0, below, up] == gap  # the gap is open...
    assert BLOCKING.next_cell[1, below, up] == below  # ...then walled up


@pytest.mark.parametrize(("layout", "after", "message"), [
    ("S.H.G", None, "cannot be used here"),
    ("S...", None, "has no goal"),
    ("S#G", None, "no goal can be reached"),
    ("S.G\n...", "S..G\n....", "the same size"),
    ("S" + "." * 210 + "G", None, "at most"),
    ("", None, "the maze: the layout is empty"),
    ("S.G", "..G", "the maze after the change: the layout has no start"),
])
def test_bad_layouts_say_what_is_wrong(layout, after, message):
    with pytest.raises(InputError, match=message):
        pl.maze(layout, after)


def test_random_walk_on_a_corridor_by_hand():
    # S . G, four actions (up and down bump): m0 = 1 + 3/4 m0 + 1/4 m1, m1 = 1 + 1/4 m0 +
    # 1/2 m1 (+ 1/4 into G), so m1 = 2 + m0 / 2 and m0 = 12.
    assert pl.random_walk_steps(pl.maze("S.G").mdps[0]) == pytest.approx(12.0)


# --------------------------------------------------------------------------- the steps
def test_q_update_by_hand():
    q_next = np.array([0.2, 0.5, -1.0, 0.0])
    assert pl.q_update(0.3, 1.0, q_next, alpha=0.5, gamma=0.9) == pytest.approx(
        0.3 + 0.5 * (1.0 + 0.9 * 0.5 - 0.3))
    assert pl.q_update(0.3, 1.0, q_next, alpha=0.5, gamma=0.9, terminal=True) == pytest.approx(
        0.3 + 0.5 * (1.0 - 0.3))


@pytest.mark.parametrize("seed", range(3))
def test_q_update_is_td_target_then_update_to_the_bit(seed):
    rng = np.random.default_rng(seed)
    q_sa, r, q_next = rng.normal(size=30), rng.normal(size=30), rng.normal(size=(30, 4))
    terminal = rng.random(30) < 0.3
    for term in (False, terminal):
        target = td.q_learning_target(r, q_next, gamma=0.95, terminal=term)
        np.testing.assert_array_equal(
            pl.q_update(q_sa, r, q_next, alpha=0.1, gamma=0.95, terminal=term),
            td.td_update(q_sa, target, 0.1))


def test_exploration_bonus_by_hand():
    np.testing.assert_allclose(pl.exploration_bonus(np.array([0.0, 1.0]), np.array([100, 0]),
                                                    1e-3), [0.01, 1.0])


def test_sample_model_reads_the_lists_in_order():
    seen = np.array([[4, 2, 0, 0, 0]])
    tried = np.zeros((1, 5, 4), dtype=np.int64)
    tried[0, 2, :2] = [3, 1]
    n_tried = np.zeros((1, 5), dtype=np.int64)
    n_tried[0, 2], n_tried[0, 4] = 2, 1
    u_s, u_a = np.array([[0.7, 0.1]]), np.array([[0.6, 0.9]])
    s, a = pl.sample_model(u_s, u_a, seen, np.array([2]), tried, n_tried,
                           any_action=np.array([False]))
    np.testing.assert_array_equal(s, [[2, 4]])  # position floor(0.7 * 2) = 1, then 0
    np.testing.assert_array_equal(a, [[1, 0]])  # in state 2: floor(0.6 * 2) = 1 -> action 1
    s, a = pl.sample_model(u_s, u_a, seen, np.array([2]), tried, n_tried,
                           any_action=np.array([True]))
    np.testing.assert_array_equal(a, [[2, 3]])  # any of the 4 actions: floor(u * 4)


@pytest.mark.parametrize("seed", range(4))
def test_plan_is_the_updates_in_order(seed):
    rng = np.random.default_rng(seed)
    lanes, cells, actions, n = 3, 5, 4, 12
    q = rng.normal(size=(lanes, cells, actions))
    s, a = rng.integers(cells, size=(lanes, n)), rng.integers(actions, size=(lanes, n))
    r, s2 = rng.normal(size=(lanes, n)), rng.integers(cells, size=(lanes, n))
    want = q.copy()
    for lane in range(lanes):
        for k in range(n):
            i, j = s[lane, k], a[lane, k]
            want[lane, i, j] += 0.3 * (r[lane, k] + 0.9 * want[lane, s2[lane, k]].max()
                                       - want[lane, i, j])
    got = pl.plan(q, s, a, r, s2, alpha=0.3, gamma=0.9)
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-14)
    assert not np.shares_memory(got, q)


def test_greedy_mask_has_no_arrow_where_all_values_are_equal():
    mask = pl.greedy_mask(np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 0.2, 0.2, 0.1]]))
    np.testing.assert_array_equal(mask, [[False] * 4, [False, True, True, False]])


# --------------------------------------------------------------------------- the engine
CASES = [
    (DYNA, ("dyna_q",), dict(n=5, runs=3, episodes=6, seed=1)),
    (DYNA, ("dyna_q", "dyna_q_plus"), dict(n=3, runs=2, episodes=4, seed=2, kappa=0.01)),
    (DYNA, ("dyna_q", "dyna_q_plus"), dict(n=0, runs=3, episodes=5, seed=6)),
    (DYNA, ("dyna_q",), dict(n=5, runs=3, episodes=10, seed=5, max_updates=3000)),
    (DYNA, ("dyna_q_plus",), dict(n=4, runs=2, episodes=3, seed=7, kappa=0.0)),
    (BLOCKING, pl.PLANNERS, dict(n=4, runs=3, steps=700, change_at=300, alpha=1.0, seed=3)),
    (BLOCKING, pl.PLANNERS, dict(n=2, runs=2, steps=400, change_at=0, alpha=1.0, seed=4)),
    (SHORTCUT, pl.PLANNERS, dict(n=3, runs=2, steps=300, change_at=260, epsilon=0.3, seed=8)),
]


@pytest.mark.parametrize(("maze", "planners", "kw"), CASES,
                         ids=[f"case{i}" for i in range(len(CASES))])
def test_the_engine_equals_the_plain_loop(maze, planners, kw):
    res = pl.run_dyna(maze, planners=planners, **kw)
    for i, planner in enumerate(planners):
        ref = dyna_loop(maze, planner=planner, **kw)
        for name in FIELDS:
            np.testing.assert_array_equal(getattr(res, name)[i], ref[name], err_msg=name)
        if res.rewards is not None:
            np.testing.assert_array_equal(res.rewards[i], ref["rewards"])


def test_a_wall_that_appears_under_the_agent_sends_it_to_the_start():
    before = "S...\n....\n...G"
    after = "S...\n####\n...G"  # no way through: the run wanders, and stays healthy
    with pytest.raises(InputError, match="no goal can be reached"):
        pl.maze(before, after)
    after = "S...\n###.\n...G"
    m = pl.maze(before, after)
    kw = dict(n=2, runs=6, steps=200, change_at=40, seed=11)
    res = pl.run_dyna(m, planners=pl.PLANNERS, **kw)
    for i, planner in enumerate(pl.PLANNERS):
        ref = dyna_loop(m, planner=planner, **kw)
        np.testing.assert_array_equal(res.q[i], ref["q"])
    walls = np.flatnonzero(~m.floor[1])
    # After the change nobody stands on a wall: visits there are from before the change only.
    assert res.visits[:, :, walls].sum() <= 40 * 6 * 2


@pytest.mark.parametrize("seed", [0, 3])
def test_n_0_is_tds_q_learning_draw_for_draw(seed):
    kw = dict(epsilon=0.1, alpha=0.1, gamma=0.95, seed=seed)
    res = pl.run_dyna(DYNA, n=0, runs=4, episodes=12, **kw)
    ref = td.run_control_loop(DYNA.mdps[0], algorithm="q_learning", episodes=12, runs=4,
                              max_steps=10**6, **kw)
    fast = td.run_control(DYNA.mdps[0], algorithm="q_learning", episodes=12, runs=4,
                          max_steps=10**6, **kw)
    cells = DYNA.mdps[0].grid.cells @ np.array([DYNA.shape[1], 1])
    np.testing.assert_array_equal(res.lengths[0], ref.lengths)
    np.testing.assert_array_equal(res.lengths[0], fast.lengths)
    np.testing.assert_array_equal(res.q[0][:, cells], ref.q)
    np.testing.assert_array_equal(res.visits[0][:, cells], ref.visits)


def test_same_seed_same_result_and_run_r_does_not_depend_on_the_run_count():
    a = pl.run_dyna(DYNA, n=5, runs=4, episodes=5, seed=9)
    b = pl.run_dyna(DYNA, n=5, runs=4, episodes=5, seed=9)
    one = pl.run_dyna(DYNA, n=5, runs=1, episodes=5, seed=9)
    other = pl.run_dyna(DYNA, n=5, runs=4, episodes=5, seed=10)
    np.testing.assert_array_equal(a.q, b.q)
    np.testing.assert_array_equal(a.q[:, :1], one.q)
    np.testing.assert_array_equal(a.lengths[:, :1], one.lengths)
    assert not np.array_equal(a.lengths, other.lengths)


def test_paired_dice_give_every_n_the_same_first_episode():
    firsts = [pl.run_dyna(DYNA, n=n, runs=6, episodes=2, seed=4).lengths[0, :, 0]
              for n in (0, 5, 50)]
    np.testing.assert_array_equal(firsts[0], firsts[1])
    np.testing.assert_array_equal(firsts[0], firsts[2])


def test_budgets_stop_a_run_and_say_so():
    res = pl.run_dyna(DYNA, n=50, runs=3, episodes=20, seed=0, max_updates=2000)
    assert res.stopped_early.all() and (res.played < 20).all()
    assert (res.steps_taken - res.first_reward <= 2000 // 51 + 1).all()
    res = pl.run_dyna(DYNA, n=0, runs=2, episodes=50, seed=0, max_steps=300)
    assert (res.steps_taken <= 300).all() and res.stopped_early.any()


@pytest.mark.parametrize(("kw", "message"), [
    (dict(alpha=0.0), "step size"), (dict(epsilon=1.5), "exploration"),
    (dict(gamma=-0.1), "discount"), (dict(kappa=-1.0), "bonus"), (dict(runs=0), "runs"),
    (dict(n=-1), "planning steps"), (dict(episodes=0), "episodes"),
])
def test_bad_settings_raise_input_errors(kw, message):
    settings = dict(n=5, runs=2, episodes=3) | kw
    with pytest.raises(InputError, match=message):
        pl.run_dyna(DYNA, **settings)


# --------------------------------------------------------------------------- the book
@pytest.fixture(scope="module")
def book_study():
    return pl.planning_study(pl.DYNA_MAZE)


def test_figure_8_2_planning_settles_sooner(book_study):
    settle = {n: pl.settled_at(book_study.mean_lengths(n)) for n in pl.BOOK_NS}
    # The book: about 25, 5 and 3 episodes for n = 0, 5, 50.
    assert 20 <= settle[0] <= 32 and 4 <= settle[5] <= 8 and 2 <= settle[50] <= 4
    for n in pl.BOOK_NS:
        assert 14 < np.mean(book_study.mean_lengths(n)[-10:]) < 20  # ε-greedy above 14


def test_figure_8_3_planning_spreads_the_value_before_the_episode_ends(book_study):
    cells = book_study.maze.mdps[0].grid.cells @ np.array([9, 1])
    arrows = {n: pl.greedy_mask(q[cells]).any(axis=1).sum()
              for n, (q, _, _) in book_study.halfway.items()}
    assert arrows[0] == 1  # Q-learning: only the move into G has a value
    assert arrows[50] >= 10


def test_the_pages_known_answers_hold_at_the_books_settings(book_study):
    checks = pl.planning_known_answers(book_study)
    assert len(checks) == 7
    failed = [k.label for k in checks if not _ok(k)]
    assert not failed


@pytest.mark.parametrize("which", ["blocking", "shortcut"])
def test_figures_8_4_and_8_5_dyna_q_plus_adapts(which):
    (before, after), change_at, steps = pl.CHANGES[which]
    study = pl.changing_study(before, after, change_at=change_at, steps=steps, runs=5)
    failed = [k.label for k in pl.changing_known_answers(study, which) if not _ok(k)]
    assert not failed
    if which == "shortcut":
        paths = study.path_lengths()
        assert (paths["dyna_q"] == 16).mean() >= 0.8  # Example 8.3: never finds the shortcut


def _ok(k: pl.Known) -> bool:
    if k.passed is not None:
        return bool(k.passed)
    return abs(float(k.value) - float(k.reference)) <= k.tol


@pytest.mark.parametrize(("ns", "planner"), [((0, 5, 50), "dyna_q"), ((1, 10), "dyna_q"),
                                              ((0, 3), "dyna_q_plus")])
def test_budgets_in_one_call_equal_one_call_each(ns, planner):
    from rlviz.planning.engine import agent

    kw = dict(runs=6, episodes=15, seed=4)
    both = pl.run_dyna(DYNA, planners=(planner,) * len(ns), n=ns, **kw)
    for i, n in enumerate(ns):
        alone = pl.run_dyna(DYNA, planners=(planner,), n=n, **kw)
        one = agent(both, i)
        assert one.n == n
        for f in ("lengths", "played", "steps_taken", "first_reward", "q", "tried",
                  "model_next", "visits", "stopped_early"):
            np.testing.assert_array_equal(getattr(one, f), getattr(alone, f), err_msg=f)


def test_dyna_q_plus_at_kappa_0_differs_from_dyna_q_only_by_replaying_untried_moves(monkeypatch):
    # The blocking maze at the page's defaults: at κ = 0 Dyna-Q+ still earns more than Dyna-Q
    # (120 against 67 per run), because it replays moves it never tried as "stay, reward 0",
    # which gives them γ·max Q(S, ·): optimism about what it has not tried. Replaying only
    # tried moves, it is Dyna-Q draw for draw.
    (before, after), change_at, steps = pl.CHANGES["blocking"]
    kw = dict(planners=("dyna_q", "dyna_q_plus"), n=10, runs=10, steps=steps,
              change_at=change_at, alpha=1.0, kappa=0.0, seed=0)
    world = pl.maze(before, after)
    res = pl.run_dyna(world, **kw)
    earned = res.rewards.sum(-1).mean(-1)
    assert earned[1] > earned[0] + 10

    from rlviz.planning import engine

    def tried_only(*args, any_action):
        return pl.sample_model(*args, any_action=np.zeros_like(any_action))

    monkeypatch.setattr(engine, "sample_model", tried_only)
    res = pl.run_dyna(world, **kw)
    for name in ("lengths", "played", "rewards", "steps_taken", "q", "tried", "visits"):
        np.testing.assert_array_equal(getattr(res, name)[0], getattr(res, name)[1], err_msg=name)
