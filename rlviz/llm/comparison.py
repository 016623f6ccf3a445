"""The comparison the page runs: every trainer on the same seeded samples."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from rlviz.errors import InputError
from rlviz.llm.exact import EXACT_POINTS, exact_metrics
from rlviz.llm.model import VOCAB, Task
from rlviz.llm.objectives import TRAINERS
from rlviz.llm.training import Settings, _State, _validate, train_step

__all__ = [
    "Comparison",
    "compare",
]


# --------------------------------------------------------------------------- the comparison
def _streams(seed: int, seeds: int) -> list[np.random.Generator]:
    """One generator per seed index; seed ``s``'s stream does not depend on how many there are."""
    return [np.random.default_rng(c) for c in np.random.SeedSequence(int(seed)).spawn(seeds)]


def _seed_uniforms(seed: int, seeds: int, index: int, steps: int, shape) -> np.ndarray:
    """``[steps, P, G, L]`` the sampling uniforms of one seed index, all steps."""
    return _streams(seed, seeds)[index].random((steps, *shape))


@dataclass(frozen=True, eq=False)
class Comparison:
    """Five trainers (or fewer) trained side by side on the toy task, over several seeds.

    Step ``n`` of every per-step array is the policy before the ``n``-th update, so step 0 is the
    reference model and step ``steps`` the final policy. The exact metrics are computed at
    ``checkpoints`` (about 50 evenly spaced steps, the first and last included).

    Attributes:
        trainers: The trainers, in the order of the first axis.
        task, settings: What they trained on and shared.
        steps, seeds, seed: Training steps, seeds per trainer and the base seed.
        checkpoints: ``[C]`` the steps where the exact metrics were computed.
        reward: ``[K, S, C]`` exact expected reward.
        kl: ``[K, S, C]`` exact ``KL(pi || pi_ref)`` over whole responses (nats).
        length: ``[K, S, C]`` exact mean response length (tokens, its end token included).
        wrong_length: ``[K, S, C]`` exact mean length of the responses that miss the pattern.
        reward_by_prompt: ``[K, S, C, P]`` exact expected reward per prompt.
        sampled_reward: ``[K, S, N]`` mean reward of the step's sampled responses.
        flat_groups: ``[K, S, N]`` share of the step's groups whose rewards were all equal.
        clip_fraction: ``[K, S, N]`` share of counted tokens outside the clip range at the
            step's last update (0 with one update per batch).
        logits: ``[K, S, N+1, V, V]`` the policy before each step (and the final one).
        values: ``[S, N+1, T, V]`` PPO's value head before each step (zeros without PPO).
    """

    trainers: tuple[str, ...]
    task: Task
    settings: Settings
    steps: int
    seeds: int
    seed: int
    checkpoints: np.ndarray
    reward: np.ndarray
    kl: np.ndarray
    length: np.ndarray
    wrong_length: np.ndarray
    reward_by_prompt: np.ndarray
    sampled_reward: np.ndarray
    flat_groups: np.ndarray
    clip_fraction: np.ndarray
    logits: np.ndarray
    values: np.ndarray

    def index(self, trainer: str) -> int:
        """Position of ``trainer`` along the first axis of the arrays."""
        if trainer not in self.trainers:
            raise InputError(f"{trainer!r} was not trained in this comparison")
        return self.trainers.index(trainer)

    def band(self, metric: str, level: float = 0.95):
        """Mean over seeds and its t-interval: ``(mean, low, high)``, each ``[K, C]``."""
        x = getattr(self, metric)
        mean = x.mean(axis=1)
        if self.seeds < 2:
            return mean, mean.copy(), mean.copy()
        from scipy.stats import t as student_t

        half = student_t.ppf(0.5 + level / 2, self.seeds - 1) * x.std(axis=1, ddof=1)
        half = half / math.sqrt(self.seeds)
        return mean, mean - half, mean + half

    def table(self) -> dict[str, np.ndarray]:
        """Long form: one row per trainer, seed and step (for export)."""
        k, s, n1 = self.reward.shape
        cols = {
            "trainer": np.repeat(np.array(self.trainers), s * n1),
            "seed_index": np.tile(np.repeat(np.arange(s), n1), k),
            "step": np.tile(self.checkpoints, k * s),
        }
        for name in ("reward", "kl", "length", "wrong_length"):
            cols[name] = getattr(self, name).reshape(-1)
        for p, prompt in enumerate(self.task.prompts):
            cols[f"reward_{prompt}"] = self.reward_by_prompt[..., p].reshape(-1)
        return cols


def compare(
    trainers: Sequence[str] = TRAINERS,
    *,
    task: Task | None = None,
    settings: Settings | None = None,
    steps: int = 200,
    seeds: int = 5,
    seed: int = 0,
    progress: Callable[[float], None] | None = None,
) -> Comparison:
    r"""Train every trainer on the toy task for ``steps`` steps, over ``seeds`` seeds at once.

    All runs start from the reference model and live along one leading axis (trainer-major),
    so one ``train_step`` call advances all of them. Seed ``s`` of every trainer draws the same
    uniforms at every step (paired comparison: at step 0 all trainers see identical groups).
    After every step the exact expected reward, KL and length of every run are computed over
    all responses (``exact_metrics``).

    Args:
        trainers: Names from ``TRAINERS``.
        task: The task (default ``Task()``).
        settings: Shared settings (default ``Settings()``).
        steps: Training steps, in [1, 2000].
        seeds: Independent runs per trainer, in [1, 32].
        seed: Base seed.
        progress: Called with the fraction done, now and then.

    Returns:
        A ``Comparison``.

    Raises:
        InputError: for a setting out of range.
    """
    import torch

    task = task or Task()
    settings = settings or Settings()
    trainers = tuple(trainers)
    _validate(settings, trainers, int(steps), int(seeds))
    k, s, n = len(trainers), int(seeds), int(steps)
    p, g, length, v = len(task.prompts), settings.group_size, task.max_len, len(VOCAB)
    t = 2 + length
    ref = torch.from_numpy(task.ref_logits)
    logits = ref.repeat(k * s, 1, 1).requires_grad_(True)
    values = torch.zeros((s if "ppo" in trainers else 0, t, v), dtype=torch.float64,
                         requires_grad=True)
    state = _State(logits, values, torch.optim.Adam([logits, values], lr=settings.lr, fused=True),
                   ref.expand(k * s, v, v), trainers, s)
    streams = _streams(seed, s)

    hist_logits = np.empty((n + 1, k * s, v, v))
    hist_values = np.zeros((n + 1, s, t, v))
    stats = {m: np.empty((n, k * s)) for m in ("sampled_reward", "flat_groups", "clip_fraction")}
    hist_logits[0] = logits.detach().numpy()
    for i in range(n):
        u = np.stack([rng.random((p, g, length)) for rng in streams])  # [S, P, G, L]
        step = train_step(state, torch.from_numpy(u).repeat(k, 1, 1, 1), task, settings)
        if not bool(torch.isfinite(logits).all()):
            raise InputError("training diverged (the logits overflowed): lower the learning rate")
        for m in stats:
            stats[m][i] = getattr(step, m)
        hist_logits[i + 1] = logits.detach().numpy()
        if values.numel():
            hist_values[i + 1] = values.detach().numpy()
        if progress is not None and (i + 1) % max(1, n // 20) == 0:
            progress((i + 1) / n)

    checkpoints = np.unique(np.linspace(0, n, min(n, EXACT_POINTS) + 1).round().astype(int))
    exact = exact_metrics(hist_logits[checkpoints].reshape(-1, v, v), task)
    metrics = {m: exact[m].reshape(len(checkpoints), k * s, *exact[m].shape[1:])
               for m in ("reward", "kl", "length", "wrong_length", "reward_by_prompt")}

    def split(a: np.ndarray) -> np.ndarray:  # [N, K*S, ...] -> [K, S, N, ...]
        out = np.ascontiguousarray(np.moveaxis(a.reshape(a.shape[0], k, s, *a.shape[2:]), 0, 2))
        out.setflags(write=False)
        return out

    vals = np.ascontiguousarray(np.moveaxis(hist_values, 0, 1))
    vals.setflags(write=False)
    return Comparison(
        trainers=trainers, task=task, settings=settings, steps=n, seeds=s, seed=int(seed),
        checkpoints=checkpoints, reward=split(metrics["reward"]), kl=split(metrics["kl"]),
        length=split(metrics["length"]), wrong_length=split(metrics["wrong_length"]),
        reward_by_prompt=split(metrics["reward_by_prompt"]),
        sampled_reward=split(stats["sampled_reward"]), flat_groups=split(stats["flat_groups"]),
        clip_fraction=split(stats["clip_fraction"]), logits=split(hist_logits), values=vals,
    )
