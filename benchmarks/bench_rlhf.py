"""Preference-learning page: the default view from cold, the heaviest settings, DPO's engine
against the torch-autograd way of writing it, batched policy-gradient runs, the warm rerun."""

from benchmarks import case, page_rerun
from rlviz import preferences as pref
from rlviz.figures import preferences as figs
from tests.preferences_reference import dpo_torch, policy_gradient_one_run_at_a_time

WORST_DATA = dict(n_responses=256, degree=6, ref_width=0.3, n_pairs=5000, flip=0.0)
WORST_RUN = dict(beta=0.01, n=1024, policy="table", dpo_steps=1000, pg_steps=500, batch=256,
                 runs=16)  # the page's caps
_DATA = pref.preference_data()


def _view(data_kw: dict, run_kw: dict):
    """Everything one view computes: data and reward model, the β sweep and best-of-n to 1024,
    DPO, the policy-gradient runs, the known-answer checks and the five figures."""
    data = pref.preference_data(**data_kw)
    run = pref.alignment(data, **run_kw)
    checks = pref.verify(data, run)
    return (figs.reward_figure(data), figs.policies_figure(run, data),
            figs.frontier_figure(data, run), figs.training_figure(run, data),
            figs.implicit_reward_figure(run, data), figs.policy_table(run, data), checks)


@case("default view: RM, β sweep, best-of-n ≤ 1024, 500 DPO + 300×8 PG steps, checks, "
      "figures", group="rlhf", budget=1.5, repeat=5)
def default_view():
    return _view({}, {})


@case("worst: K=256, degree 6, 5000 pairs, table, 1000 DPO + 500×16×256 PG steps",
      group="rlhf", budget=2.0, repeat=3)
def worst_view():
    return _view(WORST_DATA, WORST_RUN)


@case("DPO, 500 steps on the features: numpy engine vs torch autograd + Adam", group="rlhf",
      reference=lambda: dpo_torch(_DATA.space, _DATA.pairs, beta=0.2, steps=500),
      min_ratio=5, repeat=9, reference_repeat=3)
def dpo_engine():
    return pref.train_dpo(_DATA.space, _DATA.pairs, beta=0.2, steps=500)


@case("PG: 16 runs × 300 steps × 64 samples as one batch vs one run at a time", group="rlhf",
      reference=lambda: policy_gradient_one_run_at_a_time(_DATA.space, _DATA.proxy, beta=0.2,
                                                          steps=300, runs=16),
      min_ratio=3, repeat=5, reference_repeat=3)
def pg_batched():
    return pref.train_policy_gradient(_DATA.space, _DATA.proxy, beta=0.2, steps=300, runs=16)


page_rerun("rlhf")
