import pytest

from rlviz.ui.catalog import page_info
from tests.conftest import assert_healthy, open_panels, run_page, shown_text

PAGE = page_info("value_iteration").file
K = "value_iteration."


def metric(at, start):
    return next(m.value for m in at.metric if m.label.startswith(start))


def badge_rows(at):
    table = next(m.value for m in at.markdown if "| check |" in m.value)
    return [row for row in table.splitlines()[2:]]


def test_defaults_show_the_book_example_and_pass_its_checks():
    at = run_page(PAGE)
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 3  # sweeps, convergence, sweeps against γ
    assert metric(at, "Sweeps to converge") == "173"
    assert metric(at, "Greedy policy final from sweep") == "3"
    assert metric(at, "V_173(start)") == "-18"
    rows = badge_rows(at)
    assert len(rows) == 3 and all("check_circle" in r for r in rows)
    assert at.slider(key=K + "sweep").value == 173
    assert not at.query_params  # defaults leave the link clean
    open_panels(at, "value_iteration")
    assert any("def value_iteration" in c.value or "def policy_evaluation" in c.value
               for c in at.code)


@pytest.mark.parametrize(
    "query",
    [
        {"gamma": "0"},
        {"algorithm": "value_iteration", "theta": "1e-10", "in_place": "1"},
        {"env": "maze", "algorithm": "policy_iteration", "slip": "1.0", "gamma": "0.99"},
        {"env": "corridor", "algorithm": "value_iteration", "step_reward": "1",
         "goal_reward": "10", "gamma": "0.5", "max_sweeps": "10"},
        {"env": "cliff", "algorithm": "policy_iteration", "slip": "0.3", "theta": "0.1"},
        {"env": "frozen_lake_4x4", "algorithm": "policy_evaluation", "slip": "0.5",
         "step_reward": "-2", "goal_reward": "-2", "gamma": "0.9", "episodes": "200"},
    ],
    ids=["gamma0", "vi_in_place_tiny_theta", "maze_pi_full_slip", "corridor_limit",
         "cliff_pi_coarse", "frozen_lake_odd_rewards"],
)
def test_extreme_settings_run_cleanly(query):
    at = run_page(PAGE, query=query)
    assert_healthy(at)
    assert len(at.get("plotly_chart")) >= 3
    assert not [w.value for w in at.warning if "link" in w.value]  # every value was accepted


def test_gamma_one_without_a_goal_stops_and_says_so_on_the_page():
    at = run_page(PAGE, query={"env": "custom", "layout": "S...\n....", "algorithm":
                               "value_iteration", "max_sweeps": "100"})
    assert_healthy(at)
    warning = " ".join(w.value for w in at.warning)
    assert "stopped at the limit of 100 sweeps" in warning and "γ = 1" in warning
    assert metric(at, "Sweeps (limit reached)") == "100"
    assert metric(at, "Largest gap to exact values") == "n/a"
    rows = badge_rows(at)
    assert "never ends" in rows[2] and "cancel" in rows[2]


def test_frozen_lake_plays_the_greedy_policy_in_gymnasium():
    at = run_page(PAGE, query={"env": "frozen_lake_8x8", "algorithm": "value_iteration",
                               "slip": "0.6666666666666666", "step_reward": "0",
                               "goal_reward": "1", "gamma": "0.99", "episodes": "1000",
                               "theta": "1e-08"})
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 4
    assert metric(at, "V*(start) by value iteration") == "0.4146"
    rows = badge_rows(at)
    assert "1000 greedy episodes in gymnasium" in rows[3] and "check_circle" in rows[3]
    assert float(metric(at, "Success rate").rstrip("%")) > 80


def test_policy_iteration_shows_its_cycles():
    at = run_page(PAGE, query={"algorithm": "policy_iteration"})
    assert_healthy(at)
    assert len(at.get("plotly_chart")) == 4
    assert "Policy iteration's cycles" in [s.value for s in at.subheader]


def test_widgets_write_the_link_and_it_restores_the_view():
    at = run_page(PAGE)
    at.radio(key=K + "algorithm").set_value("value_iteration")
    at.slider(key=K + "gamma").set_value(0.9)
    at.select_slider(key=K + "theta").set_value(1e-6)
    at.toggle(key=K + "in_place").set_value(True)
    at.run()
    at.slider(key=K + "sweep").set_value(2).run()
    assert_healthy(at)
    link = dict(at.query_params)
    assert link == {"algorithm": "value_iteration", "gamma": "0.9", "theta": "1e-06",
                    "in_place": "1", "sweep": "2"}
    again = run_page(PAGE, query=link)
    assert_healthy(again)
    assert again.radio(key=K + "algorithm").value == "value_iteration"
    assert again.slider(key=K + "gamma").value == 0.9
    assert again.toggle(key=K + "in_place").value is True
    assert again.slider(key=K + "sweep").value == 2
    assert metric(again, "V_2(start)") == metric(at, "V_2(start)")


def test_a_new_run_opens_at_its_last_sweep():
    at = run_page(PAGE, query={"sweep": "5"})
    assert at.slider(key=K + "sweep").value == 5
    at.slider(key=K + "gamma").set_value(0.5).run()
    assert_healthy(at)
    final = int(metric(at, "Sweeps to converge"))
    assert at.slider(key=K + "sweep").value == final and final < 173


def test_picking_an_environment_loads_its_usual_settings():
    at = run_page(PAGE)
    at.selectbox(key=K + "env").set_value("frozen_lake_4x4").run()
    assert_healthy(at)
    assert at.select_slider(key=K + "slip").value == pytest.approx(2 / 3)
    assert at.slider(key=K + "goal_reward").value == 1.0
    assert at.slider(key=K + "step_reward").value == 0.0
    assert at.slider(key=K + "gamma").value == 0.99


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ("S..G\n..", "row 2 has 2 columns but row 1 has 4"),
        ("S.X.G", "row 1, column 3: unknown character 'X'"),
        ("....G", "the layout has no start"),
        ("\n".join(["S" + "." * 20] + ["." * 21] * 20), "at most 400 cells"),
    ],
)
def test_layout_errors_are_clear_messages(layout, message):
    at = run_page(PAGE, query={"env": "custom", "layout": layout})
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and message in errors[0]
    assert at.text_area(key=K + "layout").value == layout  # the user can fix it in place
    # Fixing it brings the page back.
    at.text_area(key=K + "layout").set_value("S..\n.#G").run()
    assert_healthy(at)
    assert len(at.get("plotly_chart")) >= 3


def test_junk_in_the_link_falls_back_with_a_notice():
    at = run_page(PAGE, query={"gamma": "2", "theta": "0.5", "env": "moon", "sweep": "9999"})
    assert_healthy(at)
    notices = " ".join(w.value for w in at.warning)
    assert "gamma=2" in notices and "theta=0.5" in notices and "env=moon" in notices
    assert "sweep=9999" in notices
    assert metric(at, "Sweeps to converge") == "173"


def test_nothing_shown_reads_nan_or_infinity_in_a_hard_case():
    at = run_page(PAGE, query={"env": "bridge", "algorithm": "policy_evaluation",
                               "gamma": "1", "slip": "0.2", "step_reward": "0",
                               "goal_reward": "1", "max_sweeps": "30"})
    assert_healthy(at)
    assert shown_text(at)


def test_a_greedy_policy_that_never_ends_is_explained_not_checked():
    # Undiscounted and fully converged, V* of FrozenLake 8x8 is 1 almost everywhere, and the
    # greedy policy breaks ties by wandering safely forever.
    at = run_page(PAGE, query={"env": "frozen_lake_8x8", "algorithm": "value_iteration",
                               "slip": "0.6666666666666666", "step_reward": "0",
                               "goal_reward": "1", "theta": "1e-10", "max_sweeps": "2000",
                               "episodes": "200"})
    assert_healthy(at)
    assert "hit the 1000-step limit" in " ".join(c.value for c in at.caption)
    assert metric(at, "Success rate") == "0.0%"
    rows = badge_rows(at)
    assert len(rows) == 3 and "never ends" in rows[2]
