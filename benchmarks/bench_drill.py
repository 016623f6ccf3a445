"""Drill cases: the page's first view and warm rerun, the handout, and the slowest answer."""

import functools

from benchmarks import case, page_first_view, page_rerun
from rlviz import drill, interview

BANK = interview.bank()


@functools.cache
def _points(question_id: str) -> tuple[str, ...]:
    return next(q for q in BANK if q.id == question_id).answer_points()


@case("the whole bank's Markdown and HTML handouts (numbers already computed)", group="drill",
      budget=0.2)
def handouts():
    for q in BANK:  # as the page does: every number once per process, then reused
        _points(q.id)
    return (drill.handout_markdown(BANK, points=lambda q: _points(q.id)),
            drill.handout_html(BANK, points=lambda q: _points(q.id)))


@case("progress for the whole bank through the URL and back", group="drill", budget=0.01)
def progress_round_trip():
    progress = drill.Progress(frozenset(q.id for q in BANK[::2]),
                              frozenset(q.id for q in BANK[1::2]))
    return drill.decode(drill.encode(progress, BANK), BANK)


@case("the slowest answer's numbers: bandit regret, 3 racers x 20 runs x 10,000 steps",
      group="drill", budget=2.0, repeat=1)
def slowest_numbers():
    return next(q for q in BANK if q.id == "bandits.regret").numbers()


page_first_view("drill")
page_rerun("drill")
