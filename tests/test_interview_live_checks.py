"""The whiteboard check on each page: the whiteboard version gives rlviz's numbers on the view."""

import importlib

import numpy as np
import pytest

from rlviz.errors import InputError
from rlviz.interview import whiteboard
from rlviz.interview.whiteboard import LiveCheck, live_check
from rlviz.ui import catalog
from rlviz.ui.questions import LABEL, check_line
from tests.conftest import PAGES, assert_healthy, open_panel, panel_labels, run_page

SLUGS = sorted(p.slug for p in catalog.PAGES
               if p.exists and importlib.util.find_spec(f"rlviz.interview.whiteboard.{p.slug}"))

# A few views of each page other than its defaults, by control name (the page's own values).
VIEWS = {
    "bandits": [{"arms": 2, "ucb_c": 0.5, "t": 3}, {"arms": 20, "ucb_c": 4.0, "t": 1000}],
    "c51": [{"r": 0.0, "gamma": 1.0}, {"r": 15.0, "gamma": 0.99, "atoms": 51},
            {"done": True, "r": -3.3, "shape": "bimodal", "v_min": -5.0, "v_max": 5.0},
            {"shape": "custom", "weights": {"w": [1.0, 0.0, 2.0, 5.0, 1.0]}}],
    "cliff_td": [{"wb_terminal": True, "wb_r": 3.0}, {"wb_a": 2, "wb_eps": 1.0, "wb_gamma": 1.0},
                 {"wb_q0": -1.0, "wb_q1": -1.0, "wb_eps": 0.3}],  # a tie for the greedy action
    "cql": [{"alpha": 0.0}, {"alpha": 10.0, "gamma": 0.5}],
    "deadly_triad": [{"pi": 1 / 7}, {"gamma": 0.8, "pi": 0.5, "alpha": 0.1, "beta": 0.2}],
    "dyna": [{"n": 0, "alpha": 1.0}, {"n": 50, "gamma": 0.5, "kappa": 0.1}],
    "exploration": [{"problem": "deep_sea", "n": 4}, {"problem": "deep_sea", "n": 12, "beta": 0.0},
                    {"beta": 3.0}],
    "gae": [{"lam": 0.0}, {"lam": 1.0, "gamma": 1.0}, {"as_terminal": True},
            {"traj": {"r": [1.0, 0.0, 2.0], "v": [0.5, 0.1, 0.3], "done": [False, False, False],
                      "trunc": [False, True, True], "v_cut": [None, 4.0, 7.0]}, "v_last": 9.0}],
    "grpo": [{"rewards": "1, 1, 1, 1"}, {"rewards": "0.2, -1, 3", "eps": 0.05, "beta": 0.0}],
    "importance_sampling": [{"delta": 0.0}, {"delta": 1.0, "horizon": 10, "n": 10,
                                            "pd_gamma": 0.9}],
    "max_bias": [{"actions": 1, "sigma": 0.0}, {"actions": 30, "epsilon": 0.5, "alpha": 1.0}],
    "mcts": [{"rule": "puct", "prior": "solver"}, {"board": "xo.x.o...", "c": 0.0},
             {"board": "xo.xo....", "rule": "puct", "simulations": 10}],
    "multistep_td": [{"method": m, "n": n, "lam": lam, "alpha": a} for m, n, lam, a in [
        ("n_step", 1, 0.8, 1.0), ("n_step", 512, 0.8, 0.1), ("td_lambda", 4, 0.0, 0.2),
        ("true_online", 4, 1.0, 0.05), ("offline_lambda_return", 4, 0.95, 0.6)]],
    "policy_gradient": [{"wb_tr": 5.0, "wb_tl": -5.0, "wb_a": 0, "wb_b": 0.0}, {"wb_b": -100.0}],
    "ppo_clip": [{"eps": 0.05, "r": 0.01, "a": -1.0}, {"eps": 0.5, "r": 1.5, "a": 0.0}],
    "rlhf": [{"beta": 0.01, "n": 1}, {"beta": 5.0, "n": 1024, "responses": 128,
                                      "dpo_beta": 10.0}],
    "value_iteration": [{"env": "frozen_lake_4x4", "slip": 2 / 3, "step_reward": 0.0,
                         "goal_reward": 1.0, "gamma": 0.9},
                        {"gamma": 0.5, "slip": 0.2}],
}
CASES = [(slug, view) for slug in SLUGS for view in [{}, *VIEWS.get(slug, [])]]
IDS = [f"{slug}-{i}" for slug in SLUGS for i in range(1 + len(VIEWS.get(slug, [])))]


def test_every_page_with_a_whiteboard_has_a_live_check_and_hand_picked_views():
    assert len(SLUGS) >= 17
    assert set(SLUGS) == set(VIEWS)
    for slug in SLUGS:
        assert callable(importlib.import_module(f"rlviz.interview.whiteboard.{slug}").live_check)
    assert live_check("drill") is None and live_check("home") is None


@pytest.mark.parametrize(("slug", "view"), CASES, ids=IDS)
def test_the_whiteboard_gives_rlviz_numbers_on_the_view(slug, view):
    check = live_check(slug, view)
    assert isinstance(check, LiveCheck) and check.label
    assert np.size(check.library) >= 1
    assert np.all(np.isfinite(check.library)), check
    assert check.ok, (check.label, check.max_abs_diff, check.tol)
    # The check can fail: the same numbers with one of rlviz's moved by more than the tolerance.
    lib = np.array(check.library, dtype=float, ndmin=1)
    lib[np.argmax(np.abs(lib))] += 10 * check.tol + 1e-6 * (1 + np.abs(lib).max())
    assert not LiveCheck(check.label, check.whiteboard, lib.reshape(np.shape(check.library)),
                         check.tol).ok


def test_the_views_change_what_is_checked():
    """A setting reaches the instance: a different γ gives different numbers."""
    for slug, a, b in [("value_iteration", {"gamma": 0.9}, {"gamma": 0.5}),
                       ("c51", {"r": 0.5}, {"r": -2.0}), ("gae", {"lam": 0.95}, {"lam": 0.0}),
                       ("ppo_clip", {"eps": 0.2}, {"eps": 0.4}), ("cql", {}, {"alpha": 0.0})]:
        assert not np.allclose(live_check(slug, a).library, live_check(slug, b).library), slug


def test_a_view_the_page_refuses_is_refused_by_its_check():
    with pytest.raises(InputError, match="three in a row"):  # the page names it, not a bug
        live_check("mcts", {"board": "xxxoo...."})


def test_live_check_flags_differences_shapes_and_nans():
    assert LiveCheck("x", [1.0, 2.0], [1.0, 2.0 + 1e-12], tol=1e-9).ok
    bad = LiveCheck("x", [1.0, 2.0], [1.0, 2.1], tol=1e-9)
    assert not bad.ok and bad.max_abs_diff == pytest.approx(0.1)
    assert not LiveCheck("x", [1.0, 2.0], [1.0, 2.0, 3.0]).ok
    assert not LiveCheck("x", [1.0, np.nan], [1.0, 2.0]).ok
    assert "entry 1: whiteboard nan, rlviz 2" in check_line(LiveCheck("x", [1.0, np.nan],
                                                                      [1.0, 2.0]))
    assert LiveCheck("x", [np.inf, 1.0], [np.inf, 1.0]).ok  # untried moves score +inf in both
    assert not LiveCheck("x", [np.inf], [-np.inf]).ok
    assert check_line(bad).count("✗") == 1 and "= 0.1 " in check_line(bad)
    assert "entry 1: whiteboard 2, rlviz 2.1" in check_line(bad)
    assert "2 numbers on the whiteboard, 3 from rlviz" in check_line(
        LiveCheck("x", [1.0, 2.0], [1.0, 2.0, 3.0]))
    good = check_line(LiveCheck("V*", 3.0, 3.0))
    assert good.startswith("Whiteboard check on this view: V*") and "✓" in good


def test_the_panel_shows_the_check_on_the_current_view():
    at = run_page(PAGES / "value_iteration.py", query={"gamma": "0.9"}, timeout=300)
    assert_healthy(at)
    assert LABEL in panel_labels(at)
    open_panel(at, "value_iteration", "questions")
    at.run()
    assert_healthy(at)
    lines = [m.value for m in at.markdown if m.value.startswith("Whiteboard check on this view")]
    assert len(lines) == 1
    assert "γ = 0.9" in lines[0] and "✓" in lines[0] and "✗" not in lines[0]
    assert any("def value_iteration(P, R, terminal, gamma" in c.value for c in at.code)


def test_a_failing_check_is_logged_and_the_questions_stay(monkeypatch, caplog):
    def broken(slug, settings=None):
        raise RuntimeError("boom")

    monkeypatch.setattr(whiteboard, "live_check", broken)
    at = run_page(PAGES / "value_iteration.py", timeout=300)
    open_panel(at, "value_iteration", "questions")
    at.run()
    assert_healthy(at)
    assert any("could not run on this view" in c.value for c in at.caption)
    assert not any(m.value.startswith("Whiteboard check") for m in at.markdown)
    assert sum("Open: " in m.value for m in at.markdown) >= 6  # the questions are all there
