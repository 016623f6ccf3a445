import base64
import json

import numpy as np
import pytest

from rlviz import returns
from rlviz.ui.chrome import FRIENDLY_ERROR
from tests.conftest import PAGES, assert_healthy, open_panels, run_page

PAGE = PAGES / "gae.py"
SMALL = {"episodes": "500"}  # keep the study quick where it is not the point


def checks(at):
    table = next(m.value for m in at.markdown if "| check |" in m.value)
    return table.splitlines()[2:]


def figure(at, index):
    return json.loads(at.get("plotly_chart")[index].proto.spec)


def arr(field):
    """A trace's data array, whether plotly wrote it as a list or as typed base64."""
    if isinstance(field, dict):
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=field["dtype"])
    return np.asarray(field)


def test_defaults():
    at = run_page(PAGE)
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 4
    rows = checks(at)
    assert len(rows) == 4 and all("check_circle" in r for r in rows)
    assert not at.query_params  # defaults leave the link clean
    assert at.slider(key="gae.lam").value == 0.95
    assert at.session_state["gae.traj"]["trunc"][10] is True
    open_panels(at, "gae")
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"advantages.html", "weights.html", "study.html", "trajectory.csv", "study.csv",
            "settings.json"} <= labels


def test_the_advantage_bars_are_the_library_values():
    at = run_page(PAGE, query=SMALL)
    ex = returns.EXAMPLES["goal_and_time_limit"]
    expected = returns.gae(ex.rewards, ex.values, gamma=0.99, lam=0.95,
                           last_value=ex.last_value, dones=ex.dones, truncated=ex.truncated,
                           truncated_values=ex.truncated_values)
    bars = {t["name"]: arr(t["y"]) for t in figure(at, 0)["data"] if t["type"] == "bar"}
    np.testing.assert_allclose(bars["GAE  (λ = 0.95)"], expected, atol=1e-12)


@pytest.mark.parametrize(
    "query",
    [
        {"lam": "0"}, {"lam": "1"}, {"gamma": "0"}, {"gamma": "1", "lam": "1"},
        {"as_terminal": "1", "lam": "0.5"}, {"walk": "5", "bias": "-0.5", "noise": "0.5"},
        {"bias": "0", "noise": "0"}, {"episodes": "20000", "walk": "19"},
        {"traj": "r=1;v=0;done=0;trunc=0;v_cut=nan", "v_last": "-3"},
        {"step": "11", "seed": "2147483647"},
    ],
    ids=lambda q: ",".join(f"{k}={v[:12]}" for k, v in q.items()),
)
def test_extremes_stay_healthy(query):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    assert not at.warning  # every value above is valid: no notice
    assert all("check_circle" in r for r in checks(at))


def test_a_link_restores_every_control():
    query = {"lam": "0.42", "gamma": "0.9", "as_terminal": "1", "walk": "5", "bias": "-0.2",
             "noise": "0.35", "episodes": "1000", "seed": "7", "step": "2", "v_last": "1.5",
             "traj": "r=1,0,2;v=0.5,0.25,0;done=0,0,1;trunc=1,0,0;v_cut=0.75,nan,nan"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.slider(key="gae.lam").value == 0.42
    assert at.slider(key="gae.gamma").value == 0.9
    assert at.toggle(key="gae.as_terminal").value is True
    assert at.slider(key="gae.step").value == 2
    assert at.number_input(key="gae.seed").value == 7
    assert at.number_input(key="gae.v_last").value == 1.5
    assert at.session_state["gae.walk"] == 5
    assert at.session_state["gae.traj"]["v_cut"][0] == 0.75
    # The page writes back exactly what it was given.
    assert {k: at.query_params.get(k) for k in query} == query


def test_a_moved_slider_lands_in_the_link():
    at = run_page(PAGE, query=SMALL)
    at.slider(key="gae.lam").set_value(0.5).run()
    assert_healthy(at)
    assert at.query_params.get("lam") == "0.5"
    weights = arr(next(t for t in figure(at, 1)["data"] if t["type"] == "bar")["y"])
    np.testing.assert_allclose(weights, returns.lambda_weights(0.5, 7))


@pytest.mark.parametrize(
    ("traj", "message"),
    [
        ("r=1,nan;v=0,0;done=0,0;trunc=0,0;v_cut=nan,nan", "reward r_t at step 1 is empty"),
        ("r=1,2;v=0,nan;done=0,0;trunc=0,0;v_cut=nan,nan", r"value V(s_t) at step 1 is empty"),
        ("r=1,2;v=0,0;done=0,0;trunc=1,0;v_cut=nan,nan", "step 0 is truncated but the value"),
        ("r=;v=;done=;trunc=;v_cut=", "the trajectory is empty"),
    ],
)
def test_bad_cells_give_a_clear_message_and_the_page_keeps_working(traj, message):
    at = run_page(PAGE, query={**SMALL, "traj": traj})
    assert not at.exception
    errors = " ".join(e.value for e in at.error)
    assert message in errors
    assert FRIENDLY_ERROR not in errors  # the user's mistake, not the note for a bug
    assert "Traceback" not in errors
    assert at.slider(key="gae.lam")  # the controls are still there to fix it
    at.button(key="gae.preset0").click().run()
    assert_healthy(at)


@pytest.mark.parametrize(
    ("query", "name"),
    [({"lam": "2"}, "lam"), ({"walk": "7"}, "walk"), ({"traj": "r=1,2;v=0"}, "traj"),
     ({"episodes": "123"}, "episodes")],
)
def test_bad_link_values_fall_back_with_a_notice(query, name):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    notices = " ".join(w.value for w in at.warning)
    assert f"`{name}=" in notices and "was ignored" in notices


def test_presets_replace_the_table_and_the_toggle_changes_the_advantages():
    at = run_page(PAGE, query=SMALL)
    at.button(key="gae.preset2").click().run()  # cut by a time limit
    ex = returns.EXAMPLES["time_limit"]
    assert at.session_state["gae.traj"]["r"] == list(ex.rewards)
    assert at.number_input(key="gae.v_last").value == ex.last_value
    before = arr(next(t for t in figure(at, 0)["data"] if t["name"].startswith("GAE"))["y"])
    at.toggle(key="gae.as_terminal").set_value(True).run()
    assert_healthy(at)
    traces = {t["name"]: arr(t["y"]) for t in figure(at, 0)["data"]}
    after = next(y for name, y in traces.items() if name.startswith("GAE  ("))
    assert np.allclose(traces["GAE with truncations bootstrapped"], before)
    assert after[6] < before[6] - 1.0  # the cut state's value 1.25 is no longer bootstrapped
    assert after[7] == pytest.approx(before[7])  # the next episode is untouched
    assert any("moves the advantages by up to" in c.value for c in at.caption)


def test_random_preset_follows_the_seed():
    at = run_page(PAGE, query={**SMALL, "seed": "5"})
    at.button(key="gae.preset3").click().run()
    assert_healthy(at)
    assert at.session_state["gae.traj"]["r"] == list(returns.random_example(5).rewards)


def test_the_study_marks_the_chosen_and_the_best_lambda():
    at = run_page(PAGE, query={**SMALL, "lam": "0.3"})
    traces = {t["name"]: t for t in figure(at, 2)["data"]}
    mine = traces["your λ = 0.3"]
    np.testing.assert_array_equal(arr(mine["x"]), [0.3, 0.3, 0.3])
    best = next(t for name, t in traces.items() if name.startswith("best λ"))
    mse = arr(traces["MSE = bias² + variance"]["y"])
    assert arr(best["y"])[0] == mse.min()


# --------------------------------------------------------------------------- figure builders
def example_breakdown(**kw):
    ex = returns.EXAMPLES["goal_and_time_limit"]
    return returns.breakdown(ex.rewards, ex.values, gamma=0.99, lam=kw.get("lam", 0.9),
                             last_value=ex.last_value, dones=ex.dones, truncated=ex.truncated,
                             truncated_values=ex.truncated_values, step=kw.get("step", 0))


def test_advantages_figure_labels_each_episode_end_by_its_kind():
    from rlviz.figures import returns as figs

    fig = figs.advantages_figure(example_breakdown())
    labels = [a.text for a in fig.layout.annotations]
    assert labels == ["terminal", "time limit"]
    assert [s.x0 for s in fig.layout.shapes if s.type == "line"] == [6.5, 10.5]


@pytest.mark.parametrize(("lam", "step"), [(0.9, 0), (0.0, 3), (1.0, 7), (0.5, 11)])
def test_weights_figure_puts_the_tail_mass_on_the_last_bar(lam, step):
    from rlviz.figures import returns as figs

    b = example_breakdown(lam=lam, step=step)
    bar = next(t for t in figs.weights_figure(b).data if t.type == "bar")
    assert len(bar.y) == b.horizons[step]
    assert bar.y[-1] == pytest.approx(lam ** (len(bar.y) - 1))
    assert bar.marker.color[-1] != bar.marker.color[0] or len(bar.y) == 1


def test_study_figure_keeps_the_u_in_frame_and_says_what_left_it():
    from rlviz.figures import returns as figs

    res = returns.bias_variance_study(n_states=19, left_reward=-1, right_reward=1, gamma=0.99,
                                      lams=np.linspace(0, 1, 21), critic_bias=0.1,
                                      critic_noise=0.2, n_episodes=500, seed=0)
    fig = figs.study_figure(res)
    top = fig.layout.yaxis.range[1]
    assert res.mse[res.best] < top < res.mse[-1]
    assert "MSE reaches" in fig.layout.annotations[0].text
    perfect = returns.bias_variance_study(n_states=5, left_reward=0, right_reward=1, gamma=0.9,
                                          lams=[0.0, 1.0], critic_bias=0.0, critic_noise=0.0,
                                          n_episodes=100, seed=0)
    assert figs.study_figure(perfect).layout.yaxis.range is None  # nothing to cap against
