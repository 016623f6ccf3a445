"""C51 cases: the batched projection against its per-atom loop, the page's worst case, the rerun."""

import numpy as np
import torch

from benchmarks import case, page_rerun
from rlviz import distributional as dist
from rlviz.figures import distributional as figs

# Timed as the app runs torch: one intra-op thread (rlviz.ui.chrome._one_torch_thread).
torch.set_num_threads(1)

BATCH, ATOMS, GAMMA = 4096, 51, 0.99
SUPPORT = dist.make_support(-10.0, 10.0, ATOMS)


def _batch(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(BATCH, ATOMS))
    probs = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = torch.as_tensor(probs / probs.sum(axis=1, keepdims=True)).to(dtype)
    probs = probs / probs.sum(dim=-1, keepdim=True)
    rewards = torch.as_tensor(rng.normal(0.0, 3.0, BATCH)).to(dtype)
    dones = torch.as_tensor(rng.random(BATCH) < 0.1)
    return probs, rewards, dones


P32, R32, D32 = _batch(torch.float32)
P64, R64, D64 = _batch(torch.float64)
P_NP, R_NP, D_NP = P64.numpy(), R64.numpy(), D64.numpy()


def loop_reference():
    return dist.projection_reference(P_NP, R_NP, D_NP, gamma=GAMMA, support=SUPPORT)


@case(f"projection {BATCH} x {ATOMS} atoms, float32 (torch)", group="c51", budget=0.010,
      reference=loop_reference, min_ratio=20, repeat=20)
def projection_float32():
    return dist.categorical_projection(P32, R32, D32, gamma=GAMMA, support=SUPPORT)


@case(f"projection {BATCH} x {ATOMS} atoms, float64 (torch)", group="c51", budget=0.010,
      reference=loop_reference, min_ratio=20, repeat=20)
def projection_float64():
    return dist.categorical_projection(P64, R64, D64, gamma=GAMMA, support=SUPPORT)


@case(f"loss {BATCH} x {ATOMS}: projection + cross-entropy", group="c51", budget=0.010,
      repeat=20)
def projection_and_loss():
    target = dist.categorical_projection(P32, R32, D32, gamma=GAMMA, support=SUPPORT).probs
    return dist.cross_entropy(torch.log(P32 + 1e-8), target).mean()


WORST = dist.make_support(-100.0, 100.0, 201)
WORST_P = dist.source_distribution("bimodal", WORST, mean=30.0, width=20.0, separation=40.0)


@case("page worst case: 201 atoms, clipping, naive, figure", group="c51", budget=0.5)
def page_worst_case():
    w = dist.walkthrough(WORST_P, reward=20.0, gamma=1.0, done=False, support=WORST)
    return figs.projection_panels(w, atom=200, show_naive=True).to_json()


page_rerun("c51")
