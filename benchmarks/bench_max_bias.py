"""Maximization bias: the book's protocol, the page's heaviest views, its first view and rerun."""

from benchmarks import case, page_first_view, page_rerun
from rlviz import max_bias as mb

BOOK = mb.MaxBiasMDP()
# Sutton & Barto (2018), Figure 6.5: 10 actions at B, ε = α = 0.1, 300 episodes, 10,000 runs.
PROTOCOL = dict(episodes=300, runs=10_000, epsilon=0.1, alpha=0.1, seed=0)
LOOP_RUNS = 20


def _loop_reference():
    """The plain loop: every method, one run after another, one step at a time."""
    return [mb.run_loop(BOOK, algorithm=a, episodes=300, runs=LOOP_RUNS, epsilon=0.1, alpha=0.1)
            for a in mb.METHODS]


@case("book protocol: 3 methods x 10,000 runs x 300 episodes, one call (shared dice)",
      group="max_bias", budget=1.5, reference=_loop_reference, min_ratio=20, repeat=3,
      reference_scale=10_000 / LOOP_RUNS,
      note=f"the reference trains {LOOP_RUNS} runs one at a time, scaled to 10,000")
def book_protocol():
    return mb.run(BOOK, **PROTOCOL)


@case("book protocol as the page trains it: one cached call per method", group="max_bias",
      budget=1.5, repeat=3,
      note="the later calls copy the dice the first drew (mb.shared_dice); a bar shows the "
           "methods done")
def book_protocol_per_method():
    with mb.shared_dice():
        return [mb.run(BOOK, algorithms=(a,), **PROTOCOL) for a in mb.METHODS]


# The page's heaviest trainings: the edge of its cost cap (pages/max_bias.py: cost <= the book's
# protocol), with ε = 0.5 so that as many runs as possible go to B every episode.
WORST = {
    "m = 10, 10,000 runs x 300": (10, 300, 10_000),
    "m = 1, 2,000 runs x 1,000": (1, 1000, 2000),
    "m = 50, 200 runs x 1,000": (50, 1000, 200),
    "m = 100, 500 runs x 500": (100, 500, 500),
    "m = 100, 2,000 runs x 300": (100, 300, 2000),
}


def _register_worst(label, m, episodes, runs):
    def worst():  # as the page trains them: one call per method, on shared dice
        with mb.shared_dice():
            return [mb.run(mb.MaxBiasMDP(n_actions=m, sigma=3.0), algorithms=(a,),
                           episodes=episodes, runs=runs, epsilon=0.5, alpha=0.1, seed=0)
                    for a in mb.METHODS]

    case(f"page worst case, 3 methods, ε = 0.5: {label}", group="max_bias", budget=2.0,
         repeat=3, note="over 0.25 s per method the page shows a bar of the methods trained")(worst)


for _label, _args in WORST.items():
    _register_worst(_label, *_args)


@case("page worst case, the slowest method alone (m = 10, 10,000 runs x 300, ε = 0.5)",
      group="max_bias", budget=1.0, repeat=3,
      note="the longest the page goes without answering a moved control")
def worst_one_method():
    return mb.run(mb.MaxBiasMDP(sigma=3.0), algorithms=("q_learning",), episodes=300,
                  runs=10_000, epsilon=0.5, seed=0)


@case("estimator study at its largest: 20,000 trials, m up to 100, n up to 1,000",
      group="max_bias", budget=0.5, repeat=3)
def study_worst():
    return mb.estimator_study(m=100, sigma=3.0, samples=2, gap=2.0, trials=20_000)


_KNOWN = {}


@case("known answers at the book's settings (whiteboard replay included)", group="max_bias",
      budget=0.3, repeat=3, note="given the view's trained runs and study (computed once)")
def known_book():
    if not _KNOWN:
        _KNOWN["args"] = (mb.run(BOOK, runs=2000, episodes=300, seed=0), mb.estimator_study())
    return mb.known_answers(*_KNOWN["args"])


page_rerun("max_bias")
page_first_view("max_bias")
