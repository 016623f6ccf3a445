"""CQL page: default trainings (every α in one batch), the worst capped case, the warm rerun."""

import numpy as np
import torch

from benchmarks import case, page_rerun
from rlviz import offline

# Timed as the app runs torch: one intra-op thread (rlviz.ui.chrome._one_torch_thread).
torch.set_num_threads(1)

_PROBLEM = offline.one_state_problem()
_DATA = offline.sample_one_state(_PROBLEM, 500, np.random.default_rng(0))


@case("one state, defaults: table + MLP, 11 α each", group="cql", budget=1.5, repeat=3)
def one_state_defaults():
    return offline.one_state_experiment()


@case("grid view, defaults: cliff, MLP, 11 α", group="cql", budget=1.5, repeat=3)
def grid_defaults():
    return offline.grid_experiment()


@case("grid view: cliff, table, 11 α, + exact FQI check", group="cql", budget=1.5, repeat=3)
def grid_table_with_check():
    res = offline.grid_experiment(model="table")
    i = offline.ALPHAS.index(1.0)
    for k in (0, i):
        offline.exact_fitted_q(res.data, offline.ALPHAS[k], 0.95, res.training.q_history[0, k],
                               tol=1e-9)
    return res


def _table_one_alpha_at_a_time():
    return [offline.train_table(_DATA, [a], steps=2000, lr=0.5, momentum=0.9)
            for a in offline.ALPHAS]


@case("one-state table: 11 α as a batch vs one at a time", group="cql",
      reference=_table_one_alpha_at_a_time, min_ratio=3.0, repeat=3)
def table_batched():
    return offline.train_table(_DATA, offline.ALPHAS, steps=2000, lr=0.5, momentum=0.9)


@case("worst capped case: four rooms, MLP, 20k transitions, 1500 steps", group="cql",
      budget=2.0, repeat=1, note="the page shows a spinner while it computes")
def worst_grid():
    return offline.grid_experiment("four_rooms", epsilon=1.0, size=20_000, gamma=0.99, slip=0.3,
                                   model="mlp", steps=1500)


@case("worst capped case: one state, 201 actions, MLP, 1500 steps", group="cql", budget=2.0,
      repeat=1)
def worst_one_state():
    return offline.one_state_experiment(n_actions=201, coverage=1.0, size=20_000, model="mlp",
                                        steps=1500)


page_rerun("cql")
