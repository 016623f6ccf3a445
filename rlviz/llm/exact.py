"""Exact metrics: every response of the toy task enumerated and scored, no sampling."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rlviz.llm.model import VOCAB, Task, enumerate_responses

if TYPE_CHECKING:
    import torch

__all__ = [
    "exact_metrics",
]


EXACT_CHUNK = 64
EXACT_POINTS = 50
"""About how many steps of a comparison are scored exactly (evenly spaced)."""


# --------------------------------------------------------------------------- exact metrics
@dataclass(frozen=True, eq=False)
class _Exact:
    """Every response after every distinct prompt ending, ready to be scored exactly.

    A response's probability depends on its prompt only through the prompt's last token (the
    first response token's context), so prompts that end alike share their rows.
    """

    counts: torch.Tensor  # [V*V, U*S] bigram counts of each response after each ending
    features: torch.Tensor  # [S, 5] per response: 1, reward, length, wrong, wrong * length
    ref_logp: torch.Tensor  # [U*S] log pi_ref(response | prompt)
    prompt_row: np.ndarray  # [P] which ending each prompt has
    size: int  # S responses per ending


_EXACT: dict[Task, _Exact] = {}


def _exact_tables(task: Task) -> _Exact:
    if task not in _EXACT:
        import torch

        resp = enumerate_responses(task.max_len)
        v, n = len(VOCAB), len(resp.tokens)
        endings, prompt_row = np.unique(task.prompt_tokens[:, 1], return_inverse=True)
        counted = np.arange(task.max_len) < resp.lengths[:, None]
        counts = np.zeros((len(endings), n, v * v))
        for u, q in enumerate(endings):
            ctx = np.concatenate([np.full((n, 1), q), resp.tokens[:, :-1]], axis=1)
            idx = ctx * v + resp.tokens
            np.add.at(counts[u], (np.nonzero(counted)[0], idx[counted]), 1.0)
        counts_t = torch.from_numpy(counts.reshape(-1, v * v).T.copy())
        tokens = torch.from_numpy(resp.tokens.copy())
        wrong = (~task.correct(tokens)).to(torch.float64)
        length = torch.from_numpy(resp.lengths.astype(np.float64))
        features = torch.stack(
            [torch.ones(n, dtype=torch.float64), task.reward(tokens), length, wrong,
             wrong * length], dim=-1)
        ref_logp = torch.from_numpy(task.ref_logits.reshape(-1).copy()) @ counts_t
        if len(_EXACT) >= 16:
            _EXACT.clear()
        _EXACT[task] = _Exact(counts_t, features, ref_logp, prompt_row, n)
    return _EXACT[task]


def exact_metrics(logits, task: Task) -> dict[str, np.ndarray]:
    r"""Expected reward, ``KL(pi || pi_ref)`` and mean length, summed over every response.

    A response's log-probability is its bigram counts times the table of log-probabilities,
    ``log pi(y | prompt) = sum_{(u, v)} n_{uv}(y) log pi(v | u)``, so one matrix product scores
    every response of every run. Then ``E[r] = sum_y pi(y) r(y)`` and
    ``KL = sum_y pi(y) (log pi(y) - log pi_ref(y))``, averaged over the prompts.

    Args:
        logits: ``[R, V, V]`` the runs' logit tables (a tensor or an array).
        task: The task.

    Returns:
        ``reward``, ``kl``, ``length`` (``[R]``, means over prompts), ``wrong_length`` (``[R]``,
        the mean length of the responses that miss the pattern; NaN if there are none),
        ``reward_by_prompt``, ``kl_by_prompt`` and ``total`` (``[R, P]``; ``total`` is each
        prompt's probability summed over all responses: 1).
    """
    import torch

    tables = _exact_tables(task)
    theta = (logits.detach().to(torch.float64) if isinstance(logits, torch.Tensor)
             else torch.from_numpy(np.array(logits, dtype=np.float64)))
    parts = []
    with torch.no_grad():
        for chunk in torch.split(theta, EXACT_CHUNK):  # blocks that stay in the cache
            logp_all = chunk - torch.logsumexp(chunk, dim=-1, keepdim=True)
            logp = logp_all.reshape(chunk.shape[0], -1) @ tables.counts  # [R, U*S]
            prob = torch.exp(logp)
            kl = (prob * (logp - tables.ref_logp)).reshape(chunk.shape[0], -1, tables.size)
            sums = prob.reshape(chunk.shape[0], -1, tables.size) @ tables.features  # [R, U, 5]
            parts.append(torch.cat([sums, kl.sum(-1, keepdim=True)], dim=-1))
    by_end = torch.cat(parts).numpy()[:, tables.prompt_row]  # [R, P, 6]
    total, reward, length, wrong, wrong_length, kl = np.moveaxis(by_end, -1, 0)
    out = {"reward": reward.mean(-1), "kl": kl.mean(-1), "length": length.mean(-1)}
    wrong_mass = wrong.sum(-1)
    out["wrong_length"] = np.divide(wrong_length.sum(-1), wrong_mass,
                                    out=np.full(wrong_mass.shape, np.nan), where=wrong_mass > 1e-12)
    out.update(reward_by_prompt=reward, kl_by_prompt=kl, total=total)
    return out
