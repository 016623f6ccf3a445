"""A page that exercises every piece of the chrome; the fixture of the chrome's tests."""

import time

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from rlviz import ui
from rlviz.envs import gridworld
from rlviz.errors import InputError
from rlviz.ui.catalog import PageInfo

INFO = PageInfo(slug="demo", title="Chrome demo", section="", icon=":material/science:",
                teaches="")


@ui.cached(max_entries=4, show_spinner="Taking two seconds…")
def slow_echo(gamma: float) -> float:
    """A computation long enough for its progress to show."""
    time.sleep(2.0)
    return gamma


with ui.Page("demo", intro="Every control type.", info=INFO) as page:
    p = page.controls([
        ui.FloatSlider(name="gamma", label="γ", min=0.0, max=1.0, value=0.9, step=0.01),
        ui.IntSlider(name="episodes", label="Episodes", min=1, max=500, value=100),
        ui.Choice(name="algo", label="Algorithm", options=["vi", "pi"], value="vi",
                  labels={"vi": "Value iteration", "pi": "Policy iteration"}),
        ui.SelectSlider(name="theta", label="θ", options=[1e-8, 1e-6, 1e-4, 1e-2], value=1e-4),
        ui.MultiChoice(name="racers", label="Racers", options=["ucb", "ts", "eps"],
                       value=["ucb", "ts"]),
        ui.Toggle(name="in_place", label="In place", value=False),
        ui.Seed(),
        ui.Section("Advanced", [
            ui.Number(name="alpha", label="α", min=0.0, max=10.0, value=0.5, step=0.1),
            ui.Text(name="layout", label="Layout", value="S..G", max_chars=200),
            ui.Choice(name="fail", label="Make it fail",
                      options=["no", "value", "bug", "valueerror"], value="no"),
        ]),
    ])
    table = page.controls([
        ui.Table(name="traj", label="Trajectory", columns=[
            ui.TableColumn("r", "reward"), ui.TableColumn("done", "done", kind="bool")],
            value={"r": [1.0, 0.0, 2.0], "done": [False, False, True]}, max_rows=10),
    ], container=st.container())
    slow = page.controls([ui.Toggle(name="slow", label="Take two seconds")])
    if slow.slow:
        st.metric("slow echo", slow_echo(p.gamma))
    rewards = np.asarray(table.traj["r"], dtype=float)
    if not np.isfinite(rewards).all():
        raise InputError(f"reward in row {int(np.argmin(np.isfinite(rewards)))} is empty")
    st.metric("reward sum", float(rewards.sum()))
    if p.fail == "value":
        raise InputError("gamma must be below 1 for this demo")
    if p.fail == "bug":
        raise RuntimeError("an unexpected bug")
    if p.fail == "valueerror":  # a bug that happens to be a ValueError (a broadcast error, say)
        np.zeros(2) + np.zeros(3)
    mdp = gridworld(p.layout)
    st.metric("states", mdp.n_states)
    fig = go.Figure(go.Scatter(x=np.arange(5), y=np.arange(5) * p.gamma))
    ui.chart(fig, key="demo.chart")
    page.known_answer([
        ui.Check("γ echoes", value=p.gamma, reference=0.9, tol=1e-12, source="the default"),
        ui.Check("algorithm", value=p.algo, reference="vi", passed=p.algo == "vi"),
    ])
    page.equations([("Bellman", r"v(s) = \max_a \sum_{s'} P(s'|s,a)[r + \gamma v(s')]")])
    page.source(gridworld)
    page.export(
        figures={"line": fig},
        data={"table": pd.DataFrame({"x": [1, 2]}), "raw": {"a": np.arange(3)}},
    )
