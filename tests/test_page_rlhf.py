import base64
import json
import math

import numpy as np
import pytest

from rlviz import preferences as pref
from tests.conftest import PAGES, assert_healthy, open_panels, run_page

PAGE = PAGES / "rlhf.py"
QUICK = {"pg_steps": "100", "dpo_steps": "250"}  # where training length is not the point


def checks(at):
    table = next(m.value for m in at.markdown if "| check |" in m.value)
    return table.splitlines()[2:]


def figure(at, key):
    return json.loads(next(c for c in at.get("plotly_chart") if c.proto.id.endswith(key)
                           or key in c.proto.id).proto.spec)


def charts(at):
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def arr(field):
    """A trace's data array, whether plotly wrote it as a list or as typed base64."""
    if isinstance(field, dict):
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=field["dtype"])
    return np.asarray(field)


def traces(spec):
    return {t.get("name"): t for t in spec["data"]}


def test_defaults():
    at = run_page(PAGE)
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 5
    rows = checks(at)
    assert len(rows) == 11 and all("check_circle" in r for r in rows)
    assert not at.query_params  # defaults leave the link clean
    assert at.session_state["rlhf.beta"] == 0.2
    assert at.session_state["rlhf.n"] == 16
    open_panels(at, "rlhf")
    assert_healthy(at)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"reward_model.html", "policies.html", "overoptimisation.html", "training.html",
            "implicit_reward.html", "responses.csv", "pairs.csv", "policies.csv",
            "overoptimisation.csv", "best_of_n.csv", "settings.json"} <= labels
    code = " ".join(c.value for c in at.code)
    assert code.index("def dpo_loss") < code.index("def bradley_terry_loss") < code.index(
        "def sampled_kl") < code.index("def best_of_n") < code.index("def train_dpo")
    latex = [x.value for x in at.get("latex")]
    assert any(r"\mathcal L_{DPO}" in x for x in latex)


def test_the_charts_show_the_library_values():
    at = run_page(PAGE)
    data = pref.preference_data()
    run = pref.alignment(data)
    reward, policies, frontier = charts(at)[:3]
    gold = traces(reward)["gold reward r* (hidden)"]
    np.testing.assert_allclose(arr(gold["y"]), data.space.gold)
    model = traces(reward)["reward model r̂ (learned)"]
    np.testing.assert_allclose(arr(model["y"]), data.aligned(data.proxy))
    star = traces(policies)["closed form π* (β = 0.2)"]
    np.testing.assert_allclose(arr(star["y"]), np.exp(run.logp["closed_form"]))
    sweep = traces(frontier)["π*_β: gold"]
    np.testing.assert_allclose(arr(sweep["x"]), data.frontier.sweep.sqrt_kl)
    marker = traces(frontier)["best-of-16"]
    assert arr(marker["x"])[0] == pytest.approx(math.sqrt(run.bon.kl))


def test_the_table_lists_every_policy_with_exact_scores():
    at = run_page(PAGE)
    table = next(d for d in at.dataframe).value
    assert list(table["policy"]) == ["π_ref", "closed form π*", "DPO", "KL-penalised PG",
                                     "best-of-16"]
    assert table["KL(π‖π_ref)"].iloc[0] == 0.0
    assert np.all(np.isfinite(table.iloc[:, 1:].to_numpy(dtype=float)))


@pytest.mark.parametrize(
    "query",
    [{"beta": "0.01"}, {"beta": "5"}, {"n": "1"}, {"n": "1024"}, {"pairs": "25"},
     {"pairs": "5000", "flip": "0.5"}, {"width": "0.05", "responses": "16"},
     {"width": "0.3", "responses": "256", "degree": "6"}, {"policy": "table", "beta": "0.01"},
     {"degree": "2", "runs": "1", "batch": "8"}, {"seed": "2147483647"},
     {"bt_w": "100", "bt_l": "-100", "dpo_w": "-50", "dpo_l": "0", "dpo_beta": "10"}],
    ids=lambda q: ",".join(f"{k}={v}" for k, v in q.items()),
)
def test_extremes_stay_healthy(query):
    at = run_page(PAGE, query={**QUICK, **query})
    assert_healthy(at)
    assert not at.warning  # every value above is valid: no notice
    assert all("check_circle" in r for r in checks(at))


@pytest.mark.slow
def test_the_heaviest_settings_stay_healthy():
    query = {"responses": "256", "degree": "6", "pairs": "5000", "width": "0.3", "beta": "0.01",
             "n": "1024", "policy": "table", "dpo_steps": "1000", "pg_steps": "500",
             "batch": "256", "runs": "16"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert all("check_circle" in r for r in checks(at))


def test_a_link_restores_every_control():
    query = {"beta": "0.05", "n": "256", "pairs": "500", "flip": "0.1", "width": "0.15",
             "responses": "32", "degree": "3", "policy": "table", "dpo_steps": "1000",
             "pg_steps": "200", "batch": "32", "runs": "4", "seed": "7", "bt_w": "2.5",
             "bt_l": "-1", "dpo_w": "-0.5", "dpo_l": "-3", "dpo_rw": "-1", "dpo_rl": "-2",
             "dpo_beta": "0.5"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.session_state["rlhf.beta"] == 0.05
    assert at.session_state["rlhf.policy"] == "table"
    assert at.number_input(key="rlhf.bt_w").value == 2.5
    assert at.slider(key="rlhf.runs").value == 4
    assert {k: at.query_params.get(k) for k in query} == query


def test_a_moved_slider_lands_in_the_link():
    at = run_page(PAGE, query=QUICK)
    at.slider(key="rlhf.flip").set_value(0.25).run()
    assert_healthy(at)
    assert at.query_params.get("flip") == "0.25"


@pytest.mark.parametrize(
    ("query", "name"),
    [({"beta": "0.3"}, "beta"), ({"n": "3"}, "n"), ({"policy": "mlp"}, "policy"),
     ({"degree": "9"}, "degree"), ({"bt_w": "nan"}, "bt_w"), ({"dpo_w": "1"}, "dpo_w")],
)
def test_bad_link_values_fall_back_with_a_notice(query, name):
    at = run_page(PAGE, query={**QUICK, **query})
    assert_healthy(at)
    notices = " ".join(w.value for w in at.warning)
    assert f"`{name}=" in notices and "was ignored" in notices


def test_the_worked_losses_use_the_library_and_the_values_shown():
    query = {"bt_w": "0.75", "bt_l": "-0.125", "dpo_w": "-1.25", "dpo_l": "-2",
             "dpo_rw": "-1.5", "dpo_rl": "-1.75", "dpo_beta": "0.2"}
    at = run_page(PAGE, query={**QUICK, **query})
    latex = " ".join(x.value for x in at.get("latex"))
    bt = float(pref.bradley_terry_loss(0.75, -0.125))
    dpo = float(pref.dpo_loss(-1.25, -2.0, -1.5, -1.75, beta=0.2))
    assert f"{bt:.6g}" in latex and f"{dpo:.6g}" in latex
    assert "0.75 - (-0.125) = 0.875" in latex
    assert "0.2 \\times (0.25 - (-0.25)) = 0.1" in latex


def test_typed_inputs_are_rounded_to_what_the_box_shows():
    at = run_page(PAGE, query=QUICK)
    at.number_input(key="rlhf.bt_w").set_value(1.23456).run()
    latex = " ".join(x.value for x in at.get("latex"))
    assert "1.235 - 0" in latex and "1.23456" not in latex


def test_the_default_view_says_where_gold_peaks():
    at = run_page(PAGE, query=QUICK)
    data = pref.preference_data()
    peak = data.frontier.betas[data.frontier.peak]
    assert any(f"β ≈ {peak:.2g}" in c.value for c in at.caption)


def test_each_method_has_its_own_colour():
    from rlviz.figures import preferences as figs

    methods = ["reference", "closed_form", "best_of_n", "dpo", "policy_gradient"]
    assert len({figs.COLORS[m] for m in methods}) == len(methods)
    assert figs.COLORS["gold"] != figs.COLORS["proxy"]


def test_policy_gradient_runs_share_their_random_numbers_across_beta():
    data = pref.preference_data()
    a = pref.train_policy_gradient(data.space, data.proxy, beta=0.2, steps=20, policy="table")
    b = pref.train_policy_gradient(data.space, data.proxy, beta=0.5, steps=20, policy="table")
    # Step 0 samples from π_ref with the same numbers whatever β: the same responses.
    np.testing.assert_array_equal(a.kl_estimate[0], b.kl_estimate[0])
