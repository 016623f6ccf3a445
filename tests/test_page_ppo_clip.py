"""The PPO clip page in AppTest: defaults, views, extremes, links, bad input, explanations."""

import json

import pytest

from tests.conftest import (
    PAGES,
    assert_healthy,
    open_panels,
    open_share,
    panel_labels,
    run_page,
    shown_text,
)

PAGE = PAGES / "ppo_clip.py"
KEY = "ppo_clip.{}".format


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def charts(at):
    return {c.proto.id: json.loads(c.proto.spec) for c in at.get("plotly_chart")}


def chart_text(at):
    return " | ".join(t for t in shown_text(at))


def badge_rows(at):
    table = next(m.value for m in at.markdown if "| check |" in m.value)
    return [row for row in table.splitlines()[2:]]


@pytest.fixture(scope="module")
def default():
    return run_page(PAGE)


def test_defaults(default):
    at = default
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 7
    rows = badge_rows(at)
    assert len(rows) == 4 and all(":green[" in r for r in rows), rows
    assert any(":green-badge[:material/check: matches]" in m.value for m in at.markdown)
    assert {"The equations", "The code that ran", "Export"} <= panel_labels(at)
    open_panels(at, "ppo_clip")
    assert any("def clipped_surrogate" in c.value for c in at.code)
    assert any("def run_toy" in c.value for c in at.code)
    # The default point (r = 1.5, A = 1) sits in the flat region.
    assert metric(at, "∂L/∂r (autograd)") == "0"
    assert metric(at, "L(r, A)") == "1.2"
    assert "**Flat.**" in " ".join(m.value for m in at.markdown)
    assert not at.query_params
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"surface.html", "surface.csv", "toy_epochs.csv", "toy_samples.csv", "point.json",
            "settings.json"} <= labels


@pytest.mark.parametrize("view", ["heatmap", "gradient", "3d"])
def test_each_surface_view(view):
    at = run_page(PAGE, query={"view": view})
    assert_healthy(at)
    first = next(iter(charts(at).values()))
    kinds = {t["type"] for t in first["data"]}
    assert ("surface" in kinds) == (view == "3d")
    assert ("contour" in kinds) == (view == "heatmap")


@pytest.mark.parametrize(
    ("r", "a", "grad", "region", "picks"),
    [(0.5, 1.0, "1", "Pessimistic", "the unclipped term"), (1.0, 0.5, "0.5", "Inside", "a tie"),
     (0.5, -1.0, "0", "Flat", "the clipped term"),
     (1.5, -0.5, "-0.5", "Pessimistic", "the unclipped term"), (1.2, 1.0, "1", "Edge", "a tie"),
     (1.0, 0.0, "0", "Zero", "a tie")],
)
def test_explain_this_point(default, r, a, grad, region, picks):
    at = default
    at.slider(key=KEY("r")).set_value(r)
    at.slider(key=KEY("a")).set_value(a)
    at.run()
    assert_healthy(at)
    assert metric(at, "∂L/∂r (autograd)") == grad
    text = " ".join(m.value for m in at.markdown)
    assert f"**{region}.**" in text and f"the min picks **{picks}" in text
    assert at.query_params.get("r", "1.5") == f"{r:g}"  # the default leaves the link


def test_epsilon_moves_the_kinks_and_the_toy():
    at = run_page(PAGE, query={"eps": "0.3"})
    assert_healthy(at)
    shapes = next(iter(charts(at).values()))["layout"]["shapes"]
    assert sorted(round(s["x0"], 6) for s in shapes if s["type"] == "line") == [0.7, 1.3]
    assert "1 − ε" in chart_text(at)


def test_link_round_trip():
    query = {"eps": "0.3", "lr": "0.2", "epochs": "20", "minibatch": "8", "norm": "0",
             "seed": "5", "beta": "3.0", "adaptive": "0", "kl_target": "0.03", "batch": "128",
             "noise": "0.5", "opt": "sgd", "r": "0.6", "a": "-0.5", "view": "gradient",
             "epoch": "7", "mu": "mu=1,0,-1"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert not at.warning
    assert at.slider(key=KEY("eps")).value == 0.3
    assert at.select_slider(key=KEY("lr")).value == 0.2
    assert at.slider(key=KEY("epochs")).value == 20
    assert at.select_slider(key=KEY("minibatch")).value == 8
    assert at.toggle(key=KEY("norm")).value is False
    assert at.number_input(key=KEY("seed")).value == 5
    assert at.radio(key=KEY("opt")).value == "sgd"
    assert at.slider(key=KEY("epoch")).value == 7
    assert "Action probabilities after epoch 7" in chart_text(at)
    assert "a2<br>μ=-1" in json.dumps(list(charts(at).values())[-2], ensure_ascii=False)
    assert dict(at.query_params) == query
    open_share(at, "ppo_clip")
    assert any(c.value.startswith("/ppo_clip?eps=0.3&") and "mu=mu%3D1,0,-1" in c.value
               for c in at.code)


def test_changing_the_seed_changes_the_batch():
    at = run_page(PAGE)
    before = list(charts(at).values())[3]["data"]
    at.number_input(key=KEY("seed")).set_value(11).run()
    assert_healthy(at)
    after = list(charts(at).values())[3]["data"]
    assert json.dumps(before) != json.dumps(after)
    again = run_page(PAGE, query={"seed": "11"})
    assert json.dumps(list(charts(again).values())[3]["data"]) == json.dumps(after)


@pytest.mark.parametrize(
    "query",
    [
        {"eps": "0.05", "lr": "5", "epochs": "50", "minibatch": "4", "batch": "256",
         "opt": "sgd", "beta": "10", "adaptive": "0", "noise": "3"},
        {"eps": "0.5", "lr": "0.001", "epochs": "1", "minibatch": "256", "batch": "16",
         "norm": "0", "noise": "0", "r": "0.01", "a": "-1", "view": "3d", "epoch": "0"},
        {"mu": "mu=0,0", "noise": "0"},
        {"mu": "mu=5,-5,4,-4,3,-3,2,-2", "opt": "sgd", "lr": "5", "epochs": "50"},
    ],
)
def test_extremes_stay_healthy(query):
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 7
    assert all(":green[" in r for r in badge_rows(at))


def test_epoch_scrubber_follows_the_last_epoch_unless_moved():
    at = run_page(PAGE)
    at.slider(key=KEY("epochs")).set_value(20).run()
    assert at.slider(key=KEY("epoch")).value == 20 and "epoch" not in at.query_params
    at.slider(key=KEY("epoch")).set_value(4).run()
    at.slider(key=KEY("epochs")).set_value(30).run()
    assert at.slider(key=KEY("epoch")).value == 4
    assert "Action probabilities after epoch 4" in chart_text(at)
    at.slider(key=KEY("epochs")).set_value(3).run()
    assert at.slider(key=KEY("epoch")).value == 3
    assert_healthy(at)


def test_the_minibatch_slider_offers_only_sizes_up_to_the_batch():
    at = run_page(PAGE, query={"batch": "16", "minibatch": "64"})
    assert_healthy(at)
    slider = at.select_slider(key=KEY("minibatch"))
    assert slider.value == 16 and max(slider.options, key=float) == "16"
    assert "minibatch" not in at.query_params  # 16 is the default: a clean link


def test_the_epochs_slider_ends_where_the_step_budget_does():
    at = run_page(PAGE, query={"batch": "256", "minibatch": "4", "epochs": "50"})
    assert_healthy(at)
    epochs = at.slider(key=KEY("epochs"))
    assert epochs.max == 31 and epochs.value == 31  # 64 steps an epoch, 2000 steps at most
    assert "At most 31 here: 64 minibatch steps an epoch" in epochs.help
    at.select_slider(key=KEY("minibatch")).set_value(8).run()
    assert at.slider(key=KEY("epochs")).max == 50 and at.slider(key=KEY("epochs")).value == 31


@pytest.mark.parametrize(
    ("query", "fragment"),
    [({"eps": "abc"}, "`eps=abc` was ignored"), ({"epochs": "999"}, "outside [1, 50]"),
     ({"opt": "rmsprop"}, "not one of the options"), ({"r": "0"}, "outside [0.01, 2]"),
     ({"mu": "mu=1,x"}, "has a non-number")],
)
def test_bad_links_fall_back_with_a_notice(query, fragment):
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert fragment in " ".join(w.value for w in at.warning)


@pytest.mark.parametrize(
    ("mu", "message"),
    [("mu=1", "between 2 and 16 actions"), ("mu=1,nan,0", "finite true reward"),
     ("mu=1.5e308,-1.5e308", "training diverged")],
)
def test_bad_rewards_give_a_clear_message_and_the_surface_still_shows(mu, message):
    at = run_page(PAGE, query={"mu": mu})
    assert not at.exception
    assert [message in e.value for e in at.error] == [True]
    assert len(at.get("plotly_chart")) == 2  # the surface and its slices came before the toy
