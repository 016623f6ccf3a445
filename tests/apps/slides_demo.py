"""A page with three figures under two sub-headings, read-it text and a try-this list: the
fixture of the classroom's tests (presentation mode, hidden text)."""

import plotly.graph_objects as go
import streamlit as st

from rlviz import ui
from rlviz.ui.catalog import PageInfo

INFO = PageInfo(slug="slides", title="Slides demo", section="", icon=":material/slideshow:",
                teaches="")

with ui.Page("slides", intro="Three figures.", info=INFO) as page:
    p = page.controls([
        ui.FloatSlider(name="gamma", label="γ", min=0.0, max=1.0, value=0.9, step=0.01),
        ui.Choice(name="algo", label="Algorithm", options=["vi", "pi"], value="vi"),
        ui.Section("Advanced", [
            ui.IntSlider(name="n", label="Points", min=2, max=50, value=5),
            ui.Seed(),
        ]),
    ])
    page.section("Lines")
    for k in (1, 2):
        fig = go.Figure(go.Scatter(x=list(range(p.n)), y=[k * p.gamma * i for i in range(p.n)]))
        ui.chart(fig.update_layout(title=f"line {k}"), key=f"slides.line{k}")
    page.section("Bars")
    st.caption("Under the bars.")
    ui.chart(go.Figure(go.Bar(x=["a", "b"], y=[1, 2])).update_layout(title="bars"),
             key="slides.bars")
    page.read_it("The lines grow with γ.")
    page.try_this(["Predict what γ = 0 does."])
