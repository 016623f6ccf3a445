"""The learners, a table and a small MLP, trained for many values of α at once (torch)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch

from rlviz import optim
from rlviz.offline.losses import _rows, bellman_targets, offline_loss, offline_loss_grad
from rlviz.offline.problems import MAX_STEPS, Dataset

__all__ = [
    "Training",
    "train_mlp",
    "train_table",
]


# ---------------------------------------------------------------------------------- learners
@dataclass(frozen=True, eq=False)
class Training:
    """What a batch of learners (one per α) ended with, and how they got there.

    Attributes:
        alphas: ``[B]`` CQL weight of each learner.
        q: ``[B, S, A]`` final action values.
        steps: ``[R]`` gradient steps at which the curves were recorded (0 to the last).
        q_history: ``[R, B, S, A]`` action values at those steps.
        loss: ``[B, R]`` total loss.
        td: ``[B, R]`` weighted mean ½ TD error².
        gap: ``[B, R]`` weighted mean CQL gap (monitored for α = 0 too).
        model: "table" or "mlp".
    """

    alphas: np.ndarray  # [B]
    q: np.ndarray  # [B, S, A]
    steps: np.ndarray  # [R]
    q_history: np.ndarray  # [R, B, S, A]
    loss: np.ndarray  # [B, R]
    td: np.ndarray  # [B, R]
    gap: np.ndarray  # [B, R]
    model: str


def _check_training(alphas: Sequence[float], gamma: float, steps: int) -> np.ndarray:
    alphas = np.asarray(alphas, dtype=np.float64).reshape(-1)
    if alphas.size == 0:
        raise ValueError("give at least one value of α")
    if not np.isfinite(alphas).all() or (alphas < 0).any():
        raise ValueError("α must be a non-negative number")
    if not 0.0 <= gamma < 1.0:
        raise ValueError(f"the discount γ must be in [0, 1); got {gamma}")
    if not 1 <= int(steps) <= MAX_STEPS:
        raise ValueError(f"the number of training steps must be in [1, {MAX_STEPS}]; got {steps}")
    return alphas


def _record_at(steps: int, records: int) -> np.ndarray:
    return np.unique(np.linspace(0, steps, min(records, steps) + 1).round().astype(np.int64))


class _Recorder:
    def __init__(self, at: np.ndarray):
        self.at = set(at.tolist())
        self.steps: list[int] = []
        self.q: list[np.ndarray] = []
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []

    def __call__(self, step: int, q, loss, td, gap) -> None:
        if step in self.at:
            self.steps.append(step)
            self.q.append(q.detach().numpy().copy())
            self.parts.append(tuple(x.detach().numpy().copy() for x in (loss, td, gap)))

    def result(self, alphas: np.ndarray, q, model: str) -> Training:
        loss, td, gap = (np.stack([p[i] for p in self.parts], axis=1) for i in range(3))
        final = q.detach().numpy().copy()
        if not np.isfinite(final).all():
            raise ValueError(
                "training diverged (values became infinite); lower the learning rate or α"
            )
        return Training(
            alphas=alphas, q=final, steps=np.array(self.steps), q_history=np.stack(self.q),
            loss=loss, td=td, gap=gap, model=model,
        )


def train_table(
    data: Dataset,
    alphas: Sequence[float],
    *,
    gamma: float = 0.0,
    steps: int = 1500,
    lr: float = 0.4,
    momentum: float = 0.5,
    init_std: float = 1.0,
    seed: int = 0,
    records: int = 30,
) -> Training:
    r"""Tabular offline Q-learning with the CQL(H) regulariser, one table per α, trained together.

    Full-batch gradient descent with heavy-ball momentum on the loss of ``offline_loss`` (its
    gradient from ``offline_loss_grad``) with targets from the current table,
    ``y_i = r_i + γ (1 - done_i) max_a' Q(s'_i, a')`` (no gradient through y). Each transition
    is weighted ``w_i = 1 / n(s_i)``, the inverse count of its state: states decouple in a
    table, so this diagonal preconditioner leaves the minimiser unchanged and lets rarely
    visited states learn as fast as common ones. With one state it is the plain mean, the loss
    of ``one_state_fixed_point``. Pairs the data never shows keep their initial values for
    α = 0 and are pushed down by ``α softmax(Q)`` otherwise.

    Source: Kumar, Zhou, Tucker & Levine (2020), "Conservative Q-Learning for Offline
    Reinforcement Learning", eq. 4 (CQL(H)); Ernst, Geurts & Wehenkel (2005), fitted Q-iteration.

    Args:
        data: The logged transitions.
        alphas: ``[B]`` CQL weights, one learner each (0: naive offline Q-learning).
        gamma: Discount factor in [0, 1) (0 for a one-step problem).
        steps: Number of gradient steps.
        lr: Learning rate. Without bootstrapping (``γ = 0``) the loss is a fixed convex
            function, and gradient descent is stable while ``lr (1 + max α / 2) < 2 (1 +
            momentum)`` (the TD term's curvature is at most 1 per state, the log-sum-exp's at
            most 1/2); the bound is enforced. With ``γ > 0`` the targets move too; the defaults
            (0.4, momentum 0.5) converge on every grid of ``GRIDS`` for α <= 10, while heavier
            momentum can oscillate.
        momentum: Heavy-ball momentum in [0, 1).
        init_std: Standard deviation of the initial values (the same table for every α).
        seed: Seed of the ``torch.Generator`` drawing the initial table.
        records: Roughly how many points the training curves get.

    Returns:
        The training.

    Raises:
        ValueError: for settings out of range or a step size that would diverge.
    """
    alphas = _check_training(alphas, gamma, steps)
    if not 0.0 <= momentum < 1.0:
        raise ValueError(f"momentum must be in [0, 1); got {momentum}")
    if not (lr > 0 and lr * (1.0 + alphas.max() / 2) < 2.0 * (1.0 + momentum)):
        raise ValueError(
            f"learning rate {lr} with α up to {alphas.max():g} makes gradient descent on the "
            f"table diverge; keep lr·(1 + α/2) below {2 * (1 + momentum):g}"
        )
    if not (math.isfinite(init_std) and init_std >= 0):
        raise ValueError(f"the initial spread must be a non-negative number; got {init_std}")
    rows = _rows(data, per_state=True)
    gen = torch.Generator().manual_seed(int(seed))
    q0 = init_std * torch.randn(data.n_states, data.n_actions, generator=gen, dtype=torch.float64)
    q = q0.expand(len(alphas), -1, -1).clone()
    alpha = torch.tensor(alphas)
    opt = optim.SGD([q], lr=lr, momentum=momentum)
    rec = _Recorder(_record_at(steps, records))
    y = None
    with torch.inference_mode():  # the gradient has a closed form: no autograd bookkeeping
        p_hat = rows.per_pair(rows.weights)
        for step in range(int(steps) + 1):
            if y is None or gamma > 0:  # without bootstrapping the targets are the rewards
                y = bellman_targets(q, rows.rewards, rows.next_states, rows.dones, gamma)
                y_sum = rows.per_pair(rows.weights * y)
            if step in rec.at:
                loss, td, gap = offline_loss(q, rows.states, rows.actions, y, alpha, rows.weights)
                rec(step, q, loss + rows.spread, td + rows.spread, gap)
            if step == steps:
                break
            opt.step([offline_loss_grad(q, p_hat, y_sum, alpha)])
    return rec.result(alphas, q, "table")


def _mlp_init(
    sizes: Sequence[int], batch: int, gen: torch.Generator
) -> tuple[torch.Tensor, list[tuple[torch.Tensor, torch.Tensor]]]:
    """``batch`` copies of one network, their weights in one flat tensor.

    Returns the flat tensor and each layer's ``(W [B, in, out], b [B, 1, out])`` as views into
    it. Uniform in ±1/sqrt(in), PyTorch's default for ``nn.Linear``. Being one tensor, the
    weights take an optimiser step in a handful of operations.
    """
    parts = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:], strict=True):
        bound = 1.0 / math.sqrt(fan_in)
        w = (torch.rand(fan_in, fan_out, generator=gen, dtype=torch.float32) * 2 - 1) * bound
        b = (torch.rand(fan_out, generator=gen, dtype=torch.float32) * 2 - 1) * bound
        parts += [w.expand(batch, -1, -1), b.expand(batch, 1, -1)]
    theta = torch.cat([p.reshape(-1) for p in parts])
    views, start = [], 0
    for p in parts:
        views.append(theta[start : start + p.numel()].view(p.shape))
        start += p.numel()
    return theta, list(zip(views[::2], views[1::2], strict=True))


def _product(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a @ b`` for ``[B, m, k] @ [B, k, n]``, avoiding slow paths for ``k = 1`` and ``n = 1``.

    A batched product with one column (``n = 1``) is several times slower than the same numbers
    as a row times a matrix, ``(bᵀ aᵀ)ᵀ``, and one with ``k = 1`` than an elementwise product:
    the one-state network has one input and one output.
    """
    if a.shape[2] == 1:
        return a * b
    if b.shape[2] == 1:
        return torch.bmm(b.transpose(1, 2), a.transpose(1, 2)).transpose(1, 2)
    return torch.bmm(a, b)


def _mlp(
    layers: Sequence[tuple[torch.Tensor, torch.Tensor]], x: torch.Tensor, one_hot: int = 0
):
    """``[B, M, in] -> [B, M, out]``, ReLU between layers; also the hidden layers' outputs.

    With ``one_hot = M`` the input's first ``M`` columns are the identity (a one-hot code of each
    row, as the grid's states are given), so the first layer adds those rows of its weights
    instead of multiplying by the identity: ``[I | x'] W = W[:M] + x' W[M:]``.
    """
    hidden = []
    for i, (w, b) in enumerate(layers):
        if i == 0 and one_hot:
            x = _affine(x[:, :, one_hot:], w[:, one_hot:], b).add_(w[:, :one_hot])
        else:
            x = _affine(x, w, b)
        if i < len(layers) - 1:
            x = x.relu_()
            hidden.append(x)
    return x, hidden


def _affine(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return torch.baddbmm(b, x, w) if min(x.shape[2], w.shape[2]) > 1 else _product(x, w) + b


def _mlp_backward(
    layers: Sequence[tuple[torch.Tensor, torch.Tensor]],
    x: torch.Tensor,
    hidden: Sequence[torch.Tensor],
    grad_out: torch.Tensor,
    one_hot: int = 0,
) -> torch.Tensor:
    """Backpropagation through ``_mlp``: the gradient of every weight, laid out as ``_mlp_init``'s.

    For a layer ``z = h W + b`` with output gradient ``g``: ``∂W = hᵀ g``, ``∂b = Σ_rows g``, and
    ``g Wᵀ`` flows to ``h``, times ReLU's slope (1 where the unit is on, else 0); a one-hot
    block of the input gets ``Iᵀ g = g``. Written out because autograd's bookkeeping costs more
    than these few products on networks this small (a test checks it against autograd). Each
    hidden output is overwritten with its ReLU slopes once it has been used.

    Args:
        layers: The network, as ``_mlp_init`` returns it.
        x: ``[B, M, in]`` the input of the forward pass.
        hidden: The hidden outputs of that pass (overwritten).
        grad_out: ``[B, M, out]`` gradient of the loss with respect to the network's output.
        one_hot: As for ``_mlp``.

    Returns:
        ``[P]`` the gradient of the flat weights.
    """
    inputs = [x, *hidden]
    grads = []
    g = grad_out
    for i in reversed(range(len(layers))):
        h = inputs[i]
        if i == 0 and one_hot:
            dw = torch.cat([g, _product(h[:, :, one_hot:].transpose(1, 2), g)], dim=1)
        else:
            dw = _product(h.transpose(1, 2), g)
        grads += [g.sum(dim=1, keepdim=True), dw]
        if i > 0:
            g = _product(g, layers[i][0].transpose(1, 2)).mul_(h.sign_())  # h >= 0: slope 0 or 1
    return torch.cat([t.reshape(-1) for t in reversed(grads)])


def train_mlp(
    data: Dataset,
    alphas: Sequence[float],
    features: np.ndarray,
    *,
    per_action: bool = False,
    gamma: float = 0.0,
    steps: int = 1500,
    lr: float = 3e-3,
    hidden: int = 64,
    target_every: int = 10,
    seed: int = 0,
    records: int = 30,
) -> Training:
    r"""Offline Q-learning with a small MLP and the CQL(H) regulariser, one network per α.

    Adam on the mean loss of ``offline_loss`` (weights ``1/N``), targets
    ``y = r + γ (1 - done) max_a' Q_target(s', a')`` from a target network, a copy of the
    weights refreshed every ``target_every`` steps (so the targets are recomputed only then).
    The gradient with respect to the network's values comes from ``offline_loss_grad`` and is
    backpropagated through the layers by hand. The networks of all α start from the same
    weights; they are stored with a leading batch dimension and evaluated with batched matrix
    products.

    Source: Kumar et al. (2020), eq. 4; Riedmiller (2005), neural fitted Q-iteration.

    Args:
        data: The logged transitions.
        alphas: ``[B]`` CQL weights (0: naive).
        features: ``[S, F]`` input of each state (the network outputs A values), or with
            ``per_action`` and one state, ``[A, F]`` input of each action (the network outputs
            one value per action: how a network generalises along the action line).
        per_action: Whether ``features`` describe actions rather than states.
        gamma: Discount factor in [0, 1).
        steps: Number of Adam steps.
        lr: Adam's learning rate.
        hidden: Width of the two hidden layers.
        target_every: Steps between refreshes of the target network.
        seed: Seed of the ``torch.Generator`` drawing the initial weights.
        records: Roughly how many points the training curves get.

    Returns:
        The training.

    Raises:
        ValueError: for settings out of range, or if training diverged.
    """
    alphas = _check_training(alphas, gamma, steps)
    feats = torch.tensor(np.asarray(features, dtype=np.float32))
    n_rows = data.n_actions if per_action else data.n_states
    if feats.ndim != 2 or feats.shape[0] != n_rows:
        raise ValueError(f"features must have shape [{n_rows}, F]; got {tuple(feats.shape)}")
    if per_action and data.n_states != 1:
        raise ValueError("per-action features need a one-state problem")
    if not (lr > 0 and target_every >= 1 and 1 <= hidden <= 512):
        raise ValueError("need lr > 0, target_every >= 1 and a hidden width in [1, 512]")
    batch = len(alphas)
    gen = torch.Generator().manual_seed(int(seed))
    out = 1 if per_action else data.n_actions
    theta, layers = _mlp_init([feats.shape[1], hidden, hidden, out], batch, gen)
    x = feats.expand(batch, -1, -1)
    one_hot = n_rows if feats.shape[1] >= n_rows and torch.equal(
        feats[:, :n_rows], torch.eye(n_rows)) else 0

    def as_q(t):  # [B, rows, out] -> [B, S, A]: per-action outputs are a column (and back)
        return t.transpose(1, 2) if per_action else t

    rows = _rows(data, per_state=False, dtype=torch.float32)
    alpha = torch.tensor(alphas, dtype=torch.float32)
    opt = optim.Adam([theta], lr=lr)
    rec = _Recorder(_record_at(steps, records))
    with torch.inference_mode():  # gradients by hand: no autograd bookkeeping
        p_hat = rows.per_pair(rows.weights)
        for step in range(int(steps) + 1):
            output, units = _mlp(layers, x, one_hot)
            q = as_q(output)
            if step % target_every == 0:
                y = bellman_targets(q, rows.rewards, rows.next_states, rows.dones, gamma)
                y_sum = rows.per_pair(rows.weights * y)
            if step in rec.at:
                loss, td, gap = offline_loss(q, rows.states, rows.actions, y, alpha, rows.weights)
                rec(step, q, loss + rows.spread, td + rows.spread, gap)
            if step == steps:
                break
            grad_q = offline_loss_grad(q, p_hat, y_sum, alpha)
            opt.step([_mlp_backward(layers, x, units, as_q(grad_q), one_hot)])
    return rec.result(alphas, q, "mlp")
