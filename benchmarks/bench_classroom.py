"""The classroom: warm reruns of a presented page, a teacher link and the lessons page."""

from benchmarks import page_rerun

# The figure-heaviest page, presented: one figure drawn, its projector copy made once.
page_rerun("grpo", query={"_present": "1", "_slide": "3"}, view="a presentation link")
page_rerun("cliff_td", view="a teacher link", query={
    "epsilon": "0.2", "_hide": "seed,rows,cols,slip,max_steps", "_lock": "algos,epsilon",
    "_text": "0"})
page_rerun("lessons")
