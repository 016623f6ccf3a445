import base64
import json

import numpy as np
import pytest

from rlviz import llm
from tests.conftest import PAGES, assert_healthy, open_panel, open_panels, run_page

PAGE = PAGES / "grpo.py"
SMALL = {"steps": "40", "seeds": "2"}  # quick where the length of training is not the point
CHARTS = 10


def checks(at):
    table = next(m.value for m in at.markdown if "| check |" in m.value)
    return table.splitlines()[2:]


def figure(at, index):
    return json.loads(at.get("plotly_chart")[index].proto.spec)


def arr(field):
    if isinstance(field, dict):
        return np.frombuffer(base64.b64decode(field["bdata"]), dtype=field["dtype"])
    return np.asarray(field)


@pytest.mark.slow
def test_defaults():
    at = run_page(PAGE, timeout=300)
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == CHARTS
    rows = checks(at)
    assert len(rows) == 11 and all("check_circle" in r for r in rows)
    assert not at.query_params and not at.warning
    assert at.slider(key="grpo.steps").value == 200
    assert at.session_state["grpo.trainers"] == list(llm.TRAINERS)
    open_panels(at, "grpo")
    assert_healthy(at)
    labels = {b.proto.label for b in at.get("download_button")}
    assert {"reward.html", "mask.html", "curves.csv", "group.csv", "kl_estimators.csv",
            "whiteboard.csv", "settings.json"} <= labels
    latex = " ".join(e.value for e in at.get("latex"))
    assert r"\frac{r_i - \bar r}" in latex and "k_3" in latex


def test_the_reward_curves_are_the_library_values():
    at = run_page(PAGE, query=SMALL)
    assert_healthy(at)
    res = llm.compare(steps=40, seeds=2)
    lines = {t["name"]: arr(t["y"]) for t in figure(at, 0)["data"] if t.get("mode") == "lines"
             and "band" not in t["name"]}
    mean = res.reward.mean(axis=1)
    np.testing.assert_allclose(lines["GRPO"], mean[res.index("grpo")], atol=1e-12)
    np.testing.assert_allclose(lines["PPO"], mean[res.index("ppo")], atol=1e-12)


@pytest.mark.parametrize(
    "query",
    [
        {"trainers": "ppo"}, {"trainers": "reinforce"}, {"trainers": "grpo,dr_grpo"},
        {"beta": "0"}, {"beta": "1", "kl_in": "reward", "estimator": "k1"},
        {"mask": "0", "updates": "4", "eps": "0.05"}, {"lam": "0", "lr": "0.1"},
        {"penalty": "0.5", "offset": "-1"}, {"offset": "1", "group": "2"},
        {"group": "32", "seeds": "1"}, {"seed": "2147483647", "step": "39", "prompt": "3"},
        {"inspect": "ppo", "loss_of": "ppo", "samples": "64"}, {"samples": "4096"},
        {"rewards": "1, 1, 1, 1"}, {"rewards": "0.5, -2, 3"},
    ],
    ids=lambda q: ",".join(f"{k}={v[:10]}" for k, v in q.items()),
)
def test_extremes_stay_healthy(query):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    assert not at.warning  # every value above is valid: no notice
    assert all("check_circle" in r for r in checks(at))


def test_a_link_restores_every_control():
    query = {"trainers": "rloo,grpo,ppo", "group": "4", "seeds": "3", "lr": "0.05",
             "beta": "0.1", "kl_in": "reward", "estimator": "k1", "updates": "2", "eps": "0.3",
             "mask": "0", "lam": "0.8", "penalty": "0.1", "offset": "0.25", "seed": "7",
             "steps": "30", "inspect": "ppo", "step": "12", "prompt": "2", "loss_of": "rloo",
             "rewards": "1, 0, 1", "samples": "256"}
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert at.session_state["grpo.trainers"] == ["rloo", "grpo", "ppo"]
    assert at.slider(key="grpo.steps").value == 30
    assert at.slider(key="grpo.step").value == 12
    assert at.toggle(key="grpo.mask").value is False
    assert at.session_state["grpo.inspect"] == "ppo"
    assert at.text_input(key="grpo.rewards").value == "1, 0, 1"
    assert {k: at.query_params.get(k) for k in query} == query


def test_a_moved_slider_lands_in_the_link_and_redraws():
    at = run_page(PAGE, query=SMALL)
    before = figure(at, 0)
    at.slider(key="grpo.steps").set_value(60).run()
    assert_healthy(at)
    assert at.query_params.get("steps") == "60"
    assert figure(at, 0) != before


@pytest.mark.parametrize(
    ("query", "name"),
    [({"beta": "0.3"}, "beta"), ({"trainers": "grpo,dpo"}, "trainers"), ({"group": "7"}, "group"),
     ({"seeds": "0"}, "seeds"), ({"kl_in": "prompt"}, "kl_in"), ({"steps": "5"}, "steps")],
)
def test_bad_link_values_fall_back_with_a_notice(query, name):
    at = run_page(PAGE, query={**SMALL, **query})
    assert_healthy(at)
    notices = " ".join(w.value for w in at.warning)
    assert f"`{name}=" in notices and "was ignored" in notices


def test_heavy_settings_cap_the_steps_and_say_so():
    heavy = {"seeds": "10", "group": "32", "updates": "4"}
    limit = llm.max_steps(5, 10, 32, 4)
    at = run_page(PAGE, query={**heavy, "steps": str(limit)})
    assert_healthy(at)
    assert at.slider(key="grpo.steps").max == limit < llm.MAX_STEPS
    assert any(f"At most {limit} steps" in c.value for c in at.sidebar.caption)
    # A link asking for more than the limit falls back (with a notice) to a value the page runs.
    at = run_page(PAGE, query={**heavy, "steps": str(limit + 10)})
    assert_healthy(at)
    assert at.slider(key="grpo.steps").value <= limit
    assert any("`steps=" in w.value for w in at.warning)


def test_raising_the_work_clamps_the_steps_already_chosen():
    at = run_page(PAGE, query={"steps": "300", "seeds": "1", "trainers": "grpo"})
    assert at.slider(key="grpo.steps").value == 300
    at.session_state["grpo.seeds"] = 10
    at.session_state["grpo.group"] = 32
    at.session_state["grpo.updates"] = 4
    at.session_state["grpo.trainers"] = list(llm.TRAINERS)
    at.run()
    assert_healthy(at)
    assert at.slider(key="grpo.steps").value == llm.max_steps(5, 10, 32, 4)


def test_no_trainer_gives_a_clear_message():
    at = run_page(PAGE, query=SMALL)
    at.session_state["grpo.trainers"] = []
    at.run()
    assert not at.exception
    assert any("Choose at least one trainer" in e.value for e in at.error)


def test_the_whiteboard_presets_and_a_bad_group():
    at = run_page(PAGE, query=SMALL)
    at.button(key="grpo.preset.all equal").click().run()
    assert_healthy(at)
    assert at.text_input(key="grpo.rewards").value == "1, 1, 1, 1"
    table = at.dataframe[0].value
    assert (table["GRPO"] == 0).all() and (table["RLOO"] == 0).all()
    assert any("all equal" in e.value for e in at.get("latex"))
    at.button(key="grpo.preset.the sampled group").click().run()
    assert_healthy(at)
    assert len(at.dataframe[0].value) == 8
    at.text_input(key="grpo.rewards").set_value("1, x").run()
    assert not at.exception
    assert any("reward 2 of the group is not a number" in e.value for e in at.error)
    assert len(at.get("plotly_chart")) == CHARTS  # the rest of the page is still there
    assert all("check_circle" in r for r in checks(at))


def test_the_group_bars_are_the_library_advantages():
    at = run_page(PAGE, query={**SMALL, "step": "10", "prompt": "1"})
    res = llm.compare(steps=40, seeds=2)
    view = llm.replay_group(res, "grpo", 10, 1)
    bars = {t["name"]: arr(t["y"]) for t in figure(at, 4)["data"] if t["type"] == "bar"}
    want = llm.worked_group(view.seq_rewards).advantages
    np.testing.assert_allclose(bars["GRPO"], want["grpo"], atol=1e-12)
    np.testing.assert_allclose(bars["RLOO"], want["rloo"], atol=1e-12)
    z = figure(at, 5)["data"][0]["z"]
    if isinstance(z, dict):
        z = arr(z).reshape([int(n) for n in z["shape"].split(",")])
    z = np.asarray(z, dtype=float)
    assert np.isnan(z[:, :2]).all()  # the prompt's two tokens are masked
    assert np.isfinite(z[:, 2]).all()  # every response's first token counts


def test_the_interview_panel_lists_the_questions_with_their_links():
    from rlviz.interview import grpo as bank

    at = run_page(PAGE, query=SMALL)
    open_panel(at, "grpo", "questions")
    at.run()
    assert_healthy(at)
    text = " ".join(m.value for m in at.markdown)
    for q in bank.QUESTIONS:
        assert q.question in text
        assert all(link.url in text for link in q.links)
