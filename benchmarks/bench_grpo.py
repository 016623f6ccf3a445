"""GRPO page: the default comparison against one run at a time, the heaviest settings at their
step limit, the estimator study, the first view and the warm rerun. Torch runs on one thread, as
in the app. The default comparison is this page's exception to the 1.5 s first view: 2 s."""

import functools

import torch

from benchmarks import case, page_first_view, page_rerun
from rlviz import llm


def one_thread(fn):
    """Run ``fn`` with one intra-op torch thread (the app's setting), then restore the count."""

    @functools.wraps(fn)
    def run():
        before = torch.get_num_threads()
        torch.set_num_threads(1)
        try:
            return fn()
        finally:
            torch.set_num_threads(before)

    return run


@one_thread
def one_run_at_a_time():
    """Plain loop over runs: each trainer trained alone on one seed (5 of the 25 runs)."""
    return [llm.compare([name], seeds=1) for name in llm.TRAINERS]


@case("grpo: default comparison (5 trainers x 5 seeds x 200 steps, G = 8)", group="grpo",
      budget=2.0, reference=one_run_at_a_time, reference_scale=5, min_ratio=5, repeat=3,
      note="reference: the 25 runs one at a time (timed on 5, scaled by 5)")
@one_thread
def default_comparison():
    return llm.compare()


def _heaviest(seeds, group, updates):
    steps = llm.max_steps(len(llm.TRAINERS), seeds, group, updates)
    return llm.compare(steps=steps, seeds=seeds,
                       settings=llm.Settings(group_size=group, updates=updates))


@case("grpo: worst caps (10 seeds, G = 32, 4 updates, at the step limit)", group="grpo",
      budget=2.0, repeat=2)
@one_thread
def worst_updates():
    return _heaviest(10, 32, 4)


@case("grpo: 10 seeds, G = 32, 1 update, at the step limit", group="grpo", budget=2.0,
      repeat=2)
@one_thread
def worst_samples():
    return _heaviest(10, 32, 1)


@case("grpo: 10 seeds, G = 8, 1 update, 200 steps (the limit)", group="grpo", budget=2.0,
      repeat=2)
@one_thread
def worst_seeds():
    return _heaviest(10, 8, 1)


@functools.cache
def _one_grpo_run():
    return llm.compare(["grpo"], steps=200, seeds=1)


@case("grpo: KL estimator study (21 policies x 4096 responses)", group="grpo", budget=0.5,
      repeat=5)
@one_thread
def estimator_study():
    return llm.kl_study(_one_grpo_run(), "grpo", n_samples=4096)


page_rerun("grpo")
page_first_view("grpo", budget=2.0)
