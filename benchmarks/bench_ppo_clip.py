"""PPO clip page: the 200x200 surface with autograd gradients, the toy runs, the warm rerun."""

import torch

from benchmarks import case, page_rerun
from rlviz import ppo
from tests.test_ppo import reference_toy

# Timed as the app runs torch: one intra-op thread (rlviz.ui.chrome._one_torch_thread).
torch.set_num_threads(1)

MU = (1.0, 0.5, 0.0, -0.5, -1.0)
RATIO, ADVANTAGE = ppo.ratio_grid(200), ppo.advantage_grid(200)
DEFAULT = dict(batch_size=64, epochs=10, minibatch_size=16, lr=0.05, epsilon=0.2, beta=1.0,
               adaptive_beta=True, kl_target=0.01, normalize_advantages=True, reward_noise=1.0,
               optimizer="adam", seed=0)
# The page holds epochs × minibatch steps per epoch to at most 2000: 31 epochs of 64 steps.
WORST = dict(DEFAULT, batch_size=256, minibatch_size=4, epochs=31)


def surface_row_by_row():
    """Plain loop: one autograd pass per advantage row."""
    rows = []
    for a in ADVANTAGE:
        r = torch.tensor(RATIO, requires_grad=True)
        objective = ppo.clipped_surrogate(r, torch.full_like(r, a), epsilon=0.2)
        (grad,) = torch.autograd.grad(objective.sum(), r)
        rows.append((objective.detach(), grad))
    return rows


@case("ppo: 200x200 clip surface with autograd dL/dr", group="ppo_clip", budget=0.050,
      reference=surface_row_by_row, repeat=20)
def surface():
    return ppo.clip_surface(RATIO, ADVANTAGE, epsilon=0.2)


@case("ppo: default toy run (3 objectives, 10 epochs x 4 steps)", group="ppo_clip",
      budget=0.5, reference=lambda: reference_toy(MU, **DEFAULT), repeat=5)
def toy_default():
    return ppo.run_toy(MU, **DEFAULT)


@case("ppo: worst the page allows (N=256, minibatch 4, 31 epochs: 1984 steps)", group="ppo_clip",
      budget=2.0, repeat=2)
def toy_worst():
    return ppo.run_toy(MU, **WORST)


page_rerun("ppo_clip")
