"""A user's mistake is a message in their terms; a bug is the short note, and a logged traceback.

For the value-iteration, PPO, MCTS, C51 and CQL pages: a bad input a person can type or link
shows the library's InputError message and never the "something went wrong" note; a plain
exception from the library (here forced by breaking the function the page calls) shows the note,
never its own text, and is logged with its traceback.
"""

import logging

import pytest
import streamlit as st

from rlviz import distributional, dp, mcts, offline, ppo
from rlviz.ui.catalog import page_info
from rlviz.ui.chrome import FRIENDLY_ERROR
from tests.conftest import plain, run_page

BAD_INPUT = {
    "value_iteration": ({"env": "custom", "layout": "S..\n.G"}, "row 2 has 2 columns"),
    "value_iteration:size": ({"env": "custom", "layout": "\n".join(["S" + "." * 20]
                                                                    + ["." * 21] * 20)},
                             "at most 400 cells"),
    "ppo_clip": ({"mu": "mu=1,nan,0"}, "every action needs a finite true reward"),
    "mcts": ({"board": "xxo.o.o.x"}, "O has three in a row, so the game is over"),
    "c51": ({"v_min": "5", "v_max": "5"}, "V_min (5) must be below V_max (5)"),
    "c51:weights": ({"shape": "custom", "weights": "w=0,0,0"}, "All weights are zero"),
}

BUGS = {
    "value_iteration": (dp, "policy_evaluation"),
    "ppo_clip": (ppo, "run_toy"),
    "mcts": (mcts, "search"),
    "c51": (distributional, "walkthrough"),
    "cql": (offline, "one_state_experiment"),
}


@pytest.fixture(autouse=True)
def fresh_caches():
    """A cached view from another test would hide a broken function."""
    st.cache_data.clear()
    st.cache_resource.clear()
    yield
    st.cache_data.clear()
    st.cache_resource.clear()


@pytest.mark.parametrize("case", BAD_INPUT)
def test_a_users_bad_input_is_a_clear_message(case):
    slug = case.split(":")[0]
    query, fragment = BAD_INPUT[case]
    at = run_page(page_info(slug).file, query=query)
    assert not at.exception
    errors = [plain(e.value) for e in at.error]
    assert len(errors) == 1 and fragment in errors[0], errors
    assert FRIENDLY_ERROR not in at.error[0].value


def test_cql_takes_no_free_input_and_a_bad_link_is_a_notice():
    at = run_page(page_info("cql").file, query={"steps": "2000", "actions": "7.5"})
    assert not at.exception and not at.error
    notices = " ".join(w.value for w in at.warning)
    assert "steps=2000" in notices and "actions=7.5" in notices


@pytest.mark.parametrize("slug", BUGS)
def test_a_bug_is_the_short_note_and_a_logged_traceback(slug, monkeypatch, caplog):
    module, name = BUGS[slug]

    def broken(*args, **kwargs):
        raise ValueError("operands could not be broadcast together with shapes (3,) (4,)")

    monkeypatch.setattr(module, name, broken)
    with caplog.at_level(logging.ERROR, logger="rlviz.ui"):
        at = run_page(page_info(slug).file)
    assert not at.exception
    errors = [e.value for e in at.error]
    assert errors == [FRIENDLY_ERROR]
    assert not any("broadcast" in e for e in errors)
    logged = [r for r in caplog.records if r.name == "rlviz.ui" and slug in r.getMessage()]
    assert logged and logged[0].exc_info and "broadcast" in str(logged[0].exc_info[1])


# ------------------------------------------------------------------ which errors are the user's

from rlviz.envs import parse_layout  # noqa: E402
from rlviz.errors import InputError  # noqa: E402
from rlviz.games import TICTACTOE  # noqa: E402

USERS = {
    "layout without a start": lambda: parse_layout("..G"),
    "layout too large": lambda: dp.make_problem("custom", slip=0, step_reward=0, goal_reward=1,
                                                layout=BAD_INPUT["value_iteration:size"][0][
                                                    "layout"]),
    "board that cannot happen": lambda: TICTACTOE.position("ooo......"),
    "finished board": lambda: TICTACTOE.position("xxxoo...."),
    "empty rewards cell": lambda: ppo.run_toy([1.0, float("nan")]),
    "one reward": lambda: ppo.run_toy([1.0]),
    "support upside down": lambda: distributional.make_support(3.0, -3.0, 11),
    "weights all zero": lambda: distributional.normalise_weights([0.0, 0.0]),
}
CODE = {
    "gamma out of range": lambda: dp.value_iteration(dp.make_problem(
        "sutton_barto_4x4", slip=0, step_reward=-1, goal_reward=-1), gamma=2.0, theta=1e-3),
    "unknown environment": lambda: dp.make_problem("moon", slip=0, step_reward=0,
                                                   goal_reward=0),
    "clip range": lambda: ppo.clipped_surrogate([1.0], [1.0], epsilon=1.5),
    "simulations": lambda: mcts.search(TICTACTOE, 0, simulations=0),
    "gamma of a projection": lambda: distributional.walkthrough(
        [0.5, 0.5], reward=0.0, gamma=2.0, done=False,
        support=distributional.make_support(0, 1, 2)),
    "cql steps": lambda: offline.one_state_experiment(steps=10**6),
}


@pytest.mark.parametrize("case", USERS)
def test_what_a_person_can_get_wrong_raises_input_error(case):
    with pytest.raises(InputError):
        USERS[case]()


@pytest.mark.parametrize("case", CODE)
def test_what_only_code_can_get_wrong_stays_a_plain_value_error(case):
    with pytest.raises(ValueError) as err:
        CODE[case]()
    assert not isinstance(err.value, InputError)
