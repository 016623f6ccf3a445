r"""GRPO, PPO and their relatives on a toy language model small enough to enumerate.

The model is a bigram "language model": the probability of the next token depends only on the
previous one, ``pi(x_t | x_{t-1}) = softmax(theta[x_{t-1}])``, a ``[V, V]`` table of logits over the
vocabulary ``a b c d .``. The end-of-text token ``.`` also opens every text (as GPT-2's does), so
row ``.`` of the table is the distribution of a text's first token. A prompt is two tokens; the
response follows it and ends at ``.`` or at ``max_len`` tokens. With four content tokens and at
most five response tokens there are 1,365 possible responses per prompt, so every expectation
under the model (the expected reward, the mean length, ``KL(pi || pi_ref)`` over whole responses)
is an exact sum over all of them, never a sample mean. Sampling is only for training and for the
study of the KL estimators.

The reward is verifiable: 1 if the response contains the pattern (``a b`` by default) and ends
with ``.`` (a response cut at the length limit gives no answer), minus an optional penalty per
token. The four prompts end in ``c`` or ``d``, from which the reference model reaches the
pattern with different odds, so some groups are easy and some hard.

Five trainers share everything but the algorithm: the same prompts every step, the same uniform
random numbers for sampling (so at step 0 they see identical groups), the same Adam optimiser,
clip range and KL settings. They differ in the advantage and in how a loss sums over tokens:

============  ==============================================  =============================
trainer       advantage of response i (group of G)             token aggregation
============  ==============================================  =============================
reinforce     ``r_i``                                          sum over the response
rloo          ``r_i - mean_{j != i} r_j``                      sum over the response
grpo          ``(r_i - mean r) / (std r + eps)``               mean over the response
dr_grpo       ``r_i - mean r``                                 sum / (most tokens possible)
ppo           GAE(γ=1, λ) per token, learned value head        mean over the batch's tokens
============  ==============================================  =============================

Sources: Shao et al. (2024), "DeepSeekMath", arXiv:2402.03300 (GRPO, eq. 3 and 4); Liu et al.
(2025), "Understanding R1-Zero-Like Training: A Critical Perspective", arXiv:2503.20783 (Dr.
GRPO); Kool, van Hoof & Welling (2019), "Buy 4 REINFORCE samples, get a baseline for free!" and
Ahmadian et al. (2024), arXiv:2402.14740 (RLOO); Ouyang et al. (2022), "Training language models
to follow instructions with human feedback" (PPO with a per-token KL penalty in the reward);
J. Schulman (2020), "Approximating KL divergence" (k1, k2, k3).

Every tensor is float64 on the CPU; torch is imported inside the functions that need it, so
``import rlviz.llm`` stays light. Nothing changes torch's global state.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rlviz.errors import InputError

if TYPE_CHECKING:
    import torch

__all__ = [
    "AGGREGATIONS",
    "ESTIMATORS",
    "EOS",
    "GROUP_TRAINERS",
    "PROMPTS",
    "REF_PROBS",
    "TRAINERS",
    "VOCAB",
    "Comparison",
    "GroupView",
    "KLStudy",
    "Responses",
    "Settings",
    "Task",
    "WorkedGroup",
    "compare",
    "dr_grpo_advantages",
    "enumerate_responses",
    "exact_metrics",
    "grpo_advantages",
    "grpo_loss",
    "kl_estimates",
    "kl_study",
    "max_steps",
    "parse_rewards",
    "policy_loss",
    "reinforce_advantages",
    "replay_group",
    "rloo_advantages",
    "sample_responses",
    "token_weights",
    "train_step",
    "worked_group",
]

VOCAB = ("a", "b", "c", "d", ".")
"""The toy vocabulary; the end token ``.`` ends a text and also opens it."""
EOS = 4
TRAINERS = ("reinforce", "rloo", "grpo", "dr_grpo", "ppo")
GROUP_TRAINERS = ("reinforce", "rloo", "grpo", "dr_grpo")
"""The trainers whose advantage is one number per response, computed from its group."""
AGGREGATIONS = {
    "reinforce": "sequence_sum",
    "rloo": "sequence_sum",
    "grpo": "sequence_mean",
    "dr_grpo": "constant",
    "ppo": "token_mean",
}
"""How each trainer's loss sums its tokens (see ``token_weights``)."""
ESTIMATORS = ("k1", "k2", "k3")
KL_PLACES = ("loss", "reward")
EXACT_CHUNK = 64
EXACT_POINTS = 50
"""About how many steps of a comparison are scored exactly (evenly spaced)."""
GRPO_EPS = 1e-4
"""Added to the group's standard deviation (as in Hugging Face TRL's GRPOTrainer)."""

# π_ref(next | previous): rows are the previous token (a, b, c, d, then . = start of text),
# columns the next token (a, b, c, d, .). From c the pattern's first token is likely, from d not.
REF_PROBS = np.array([
    [0.10, 0.35, 0.15, 0.15, 0.25],  # after a
    [0.15, 0.15, 0.15, 0.15, 0.40],  # after b
    [0.40, 0.10, 0.15, 0.15, 0.20],  # after c
    [0.10, 0.20, 0.25, 0.25, 0.20],  # after d
    [0.25, 0.25, 0.20, 0.20, 0.10],  # at the start of a text
])
REF_PROBS.setflags(write=False)
PROMPTS = ("ac", "bc", "ad", "bd")


def _tokens(text: str) -> tuple[int, ...]:
    return tuple(VOCAB.index(ch) for ch in text)


def text_of(tokens: Sequence[int]) -> str:
    """Tokens as text, up to and including the first end token."""
    out = []
    for tok in tokens:
        out.append(VOCAB[int(tok)])
        if int(tok) == EOS:
            break
    return "".join(out)


# --------------------------------------------------------------------------- advantages
def _group_rewards(rewards) -> torch.Tensor:
    import torch

    r = rewards if isinstance(rewards, torch.Tensor) else torch.as_tensor(
        np.asarray(rewards, dtype=np.float64))
    if r.ndim == 0 or r.shape[-1] < 2:
        raise InputError("a group needs at least two responses to compare")
    if not bool(torch.isfinite(r).all()):
        raise InputError("every reward in the group must be a finite number")
    return r.to(torch.float64)


def reinforce_advantages(rewards) -> torch.Tensor:
    r"""REINFORCE without a baseline: each response's advantage is its own reward.

    ``A_i = r_i``. Unbiased, but every response of a group with positive rewards is pushed up,
    right or wrong; only their relative sizes steer. Williams (1992).

    Args:
        rewards: ``[..., G]`` the rewards of each group's ``G`` responses.

    Returns:
        ``[..., G]`` advantages.
    """
    return _group_rewards(rewards).clone()


def rloo_advantages(rewards) -> torch.Tensor:
    r"""REINFORCE leave-one-out: the baseline of response ``i`` is the mean of the others.

    ``A_i = r_i - 1/(G-1) sum_{j != i} r_j = G/(G-1) (r_i - mean r)``. The baseline does not
    depend on ``r_i``, so the estimator stays unbiased; the advantages of a group sum to zero.
    Kool, van Hoof & Welling (2019); Ahmadian et al. (2024), eq. 4.

    Args:
        rewards: ``[..., G]`` rewards, ``G >= 2``.

    Returns:
        ``[..., G]`` advantages.
    """
    r = _group_rewards(rewards)
    g = r.shape[-1]
    return (g * r - r.sum(dim=-1, keepdim=True)) / (g - 1)


def grpo_advantages(rewards, *, eps: float = GRPO_EPS) -> torch.Tensor:
    r"""GRPO's group-relative advantage: the reward standardised within its group.

    ``A_i = (r_i - mean r) / (std r + eps)`` with the sample standard deviation (``G - 1`` in
    the denominator, as ``torch.std``). A group whose rewards are all equal gets zero advantage
    (``0 / eps``), never NaN. Shao et al. (2024), "DeepSeekMath", section 4.1.2.

    Args:
        rewards: ``[..., G]`` rewards, ``G >= 2``.
        eps: Added to the standard deviation, positive.

    Returns:
        ``[..., G]`` advantages with mean 0 in every group.
    """
    r = _group_rewards(rewards)
    centred = r - r.mean(dim=-1, keepdim=True)
    return centred / (r.std(dim=-1, keepdim=True) + eps)


def dr_grpo_advantages(rewards) -> torch.Tensor:
    r"""Dr. GRPO's advantage: the reward minus its group's mean, not divided by the std.

    ``A_i = r_i - mean r``. Dividing by the std weights each prompt by ``1/std``, so prompts
    that are almost always solved or almost never solved get the largest updates; Dr. GRPO drops
    it. It equals RLOO's advantage times ``(G-1)/G``. Liu et al. (2025), section 3.2.

    Args:
        rewards: ``[..., G]`` rewards, ``G >= 2``.

    Returns:
        ``[..., G]`` advantages.
    """
    r = _group_rewards(rewards)
    return r - r.mean(dim=-1, keepdim=True)


ADVANTAGES: dict[str, Callable] = {
    "reinforce": reinforce_advantages,
    "rloo": rloo_advantages,
    "grpo": grpo_advantages,
    "dr_grpo": dr_grpo_advantages,
}


# --------------------------------------------------------------------------- KL and the loss
def kl_estimates(logp, logp_ref):
    r"""Per-token estimators of ``KL(pi || pi_ref)`` from tokens sampled by ``pi``.

    With ``rho = pi_ref(x) / pi(x)``: ``k1 = -log rho`` (unbiased, can be negative),
    ``k2 = (log rho)^2 / 2`` (biased, never negative) and ``k3 = (rho - 1) - log rho`` (unbiased,
    never negative: ``rho - 1 >= log rho``). Summed over a response's tokens, ``k1`` and ``k3``
    stay unbiased for the KL between whole responses (the chain rule). The same estimators as
    ``rlviz.ppo.approx_kl``, with the sampler in the role of ``pi_old``. J. Schulman (2020),
    "Approximating KL divergence"; GRPO uses ``k3`` (Shao et al. 2024, eq. 4).

    Args:
        logp: ``[...]`` log-probabilities of the sampled tokens under ``pi`` (the sampler).
        logp_ref: ``[...]`` the same under the reference model.

    Returns:
        ``rlviz.ppo.KLEstimates`` ``(k1, k2, k3)`` of ``[...]`` tensors; gradients flow through
        ``logp``.
    """
    from rlviz import ppo

    return ppo.approx_kl(logp_ref, logp)


def token_weights(mask, aggregation: str, *, max_tokens: int | None = None) -> torch.Tensor:
    r"""The weight of each token in a loss ``-sum_{i,t} w_{i,t} psi_{i,t}``, by aggregation.

    With ``N`` responses in the batch, ``m_{i,t}`` the mask (1 where the loss counts the token)
    and ``n_i = sum_t m_{i,t}``:

    * ``sequence_sum``: ``w = m / N`` (the response's log-probability, REINFORCE and RLOO);
    * ``sequence_mean``: ``w = m / (N n_i)`` (GRPO: each response's tokens averaged first, so a
      long response's tokens count less);
    * ``constant``: ``w = m / (N T)`` with ``T = max_tokens`` (Dr. GRPO: no length
      normalisation, one constant for all);
    * ``token_mean``: ``w = m / sum m`` (PPO implementations: every counted token alike).

    Args:
        mask: ``[..., N, T]`` True where the loss counts the token (response tokens, and the
            prompt's when it is not masked).
        aggregation: One of the four above.
        max_tokens: ``T`` for ``constant`` (default: the mask's last axis).

    Returns:
        ``[..., N, T]`` float64 weights; zero where the mask is.
    """
    import torch

    m = mask.to(torch.float64)
    n = m.shape[-2]
    if aggregation == "sequence_sum":
        return m / n
    if aggregation == "sequence_mean":
        return m / (n * m.sum(dim=-1, keepdim=True).clamp(min=1.0))
    if aggregation == "constant":
        return m / (n * (m.shape[-1] if max_tokens is None else max_tokens))
    if aggregation == "token_mean":
        return m / m.sum(dim=(-2, -1), keepdim=True).clamp(min=1.0)
    raise ValueError(f"unknown aggregation {aggregation!r}")


def policy_loss(logp, logp_old, advantages, weights, *, epsilon: float) -> torch.Tensor:
    r"""The clipped policy loss, each token weighted by its aggregation weight.

    ``loss = -sum_{i,t} w_{i,t} min(rho A, clip(rho, 1-eps, 1+eps) A)`` with
    ``rho_{i,t} = pi(x_t)/pi_old(x_t)``; the surrogate is ``rlviz.ppo.clipped_surrogate``
    (Schulman et al. 2017, eq. 7). On the first update ``rho = 1`` and its gradient is the
    policy gradient ``-sum w A grad log pi``. With ``token_mean`` weights, zero log-ratios and
    unit advantages the loss is exactly -1.

    Args:
        logp: ``[..., T]`` log-probabilities of the tokens under the current policy.
        logp_old: ``[..., T]`` the same under the policy that sampled them (a constant).
        advantages: ``[..., T]`` each token's advantage.
        weights: ``[..., T]`` aggregation weights (``token_weights``).
        epsilon: Clip range, in (0, 1).

    Returns:
        A scalar tensor: the sum over every leading axis (runs are independent, so each run's
        gradient is its own loss's).
    """
    import torch

    from rlviz import ppo

    ratio = torch.exp(logp - logp_old.detach())
    return -(weights * ppo.clipped_surrogate(ratio, advantages, epsilon=epsilon)).sum()


def grpo_loss(logp, logp_old, logp_ref, rewards, mask, *, epsilon: float = 0.2,
              beta: float = 0.04) -> torch.Tensor:
    r"""GRPO's loss for one group, from this module's pieces (Shao et al. 2024, eq. 3).

    ``-1/G sum_i 1/|o_i| sum_t [min(rho A_i, clip(rho) A_i) - beta k3_t]``: ``grpo_advantages``,
    ``token_weights(..., "sequence_mean")``, ``policy_loss`` and ``kl_estimates``, as
    ``train_step`` combines them for its GRPO runs with the KL in the loss.

    Args:
        logp: ``[G, T]`` token log-probabilities under the current policy.
        logp_old: ``[G, T]`` the same under the policy that sampled the group.
        logp_ref: ``[G, T]`` the same under the reference model.
        rewards: ``[G]`` the group's rewards.
        mask: ``[G, T]`` True on the tokens the loss counts.
        epsilon: Clip range.
        beta: KL coefficient.

    Returns:
        A scalar tensor.
    """
    import torch

    lp, lo, lr = (torch.as_tensor(np.asarray(x, dtype=np.float64)) for x in
                  (logp, logp_old, logp_ref))
    m = torch.as_tensor(np.asarray(mask, dtype=bool))
    w = token_weights(m, "sequence_mean")
    adv = grpo_advantages(rewards)[:, None].expand(lp.shape)
    kl = (w * kl_estimates(lp, lr).k3).sum()
    return policy_loss(lp, lo, adv, w, epsilon=epsilon) + beta * kl


# --------------------------------------------------------------------------- the toy model
@dataclass(frozen=True)
class Responses:
    """Every possible response, as padded token rows.

    Attributes:
        tokens: ``[S, L]`` token ids; after the end token the row is padded with end tokens.
        lengths: ``[S]`` tokens in each response, its end token included.
        ended: ``[S]`` True where the response has its end token (False: cut at ``L`` tokens).
    """

    tokens: np.ndarray  # [S, L] int
    lengths: np.ndarray  # [S] int
    ended: np.ndarray  # [S] bool

    @property
    def texts(self) -> list[str]:
        """Each response as text."""
        return [text_of(row) for row in self.tokens]


def enumerate_responses(max_len: int) -> Responses:
    """All responses of at most ``max_len`` tokens, by length, then alphabetically.

    ``k`` content tokens then the end token for every ``k < max_len``, and the ``4^max_len``
    responses
    cut at the limit.

    Args:
        max_len: The length limit ``L``, in [1, 8].

    Returns:
        ``Responses`` with ``S = (4^L - 1)/3 + 4^L`` rows.
    """
    if not 1 <= int(max_len) <= 8:
        raise InputError(f"the length limit must be between 1 and 8 tokens; got {max_len}")
    content = range(EOS)
    rows, lengths, ended = [], [], []
    for k in range(max_len + 1):
        for body in itertools.product(content, repeat=k):
            if k < max_len:
                rows.append([*body, EOS] + [EOS] * (max_len - k - 1))
                lengths.append(k + 1)
                ended.append(True)
            else:
                rows.append(list(body))
                lengths.append(k)
                ended.append(False)
    out = (np.array(rows, dtype=np.int64), np.array(lengths), np.array(ended))
    for a in out:
        a.setflags(write=False)
    return Responses(*out)


@dataclass(frozen=True)
class Task:
    """The toy task: the reference model, the prompts and the verifiable reward.

    Attributes:
        pattern: The text a response must contain to score 1 (e.g. ``"ab"``).
        length_penalty: Subtracted per response token, as a fraction of the limit.
        offset: Added to every reward: ``reward = 1[pattern and end] - length_penalty * n /
            max_len + offset``. A group baseline removes it; REINFORCE without one does not.
        max_len: Most tokens in a response (its end token included).
        prompts: Two-token prompts, e.g. ``"ac"``.

    The reference model is ``REF_PROBS`` (``ref_probs``).
    """

    pattern: str = "ab"
    length_penalty: float = 0.0
    offset: float = 0.0
    max_len: int = 5
    prompts: tuple[str, ...] = PROMPTS

    def __post_init__(self) -> None:
        if not self.pattern or any(ch not in VOCAB[:EOS] for ch in self.pattern):
            raise InputError("the pattern must be a few of the tokens a, b, c, d")
        if len(self.pattern) >= self.max_len:
            raise InputError(
                f"the pattern {self.pattern!r} does not fit in a response of {self.max_len} "
                "tokens with its end token"
            )
        if not (math.isfinite(self.length_penalty) and 0.0 <= self.length_penalty <= 1.0):
            raise InputError(f"the length penalty must be in [0, 1]; got {self.length_penalty}")
        if not (math.isfinite(self.offset) and abs(self.offset) <= 10.0):
            raise InputError(f"the reward offset must be in [−10, 10]; got {self.offset}")
        if not self.prompts or any(len(p) != 2 or EOS in _tokens(p) for p in self.prompts):
            raise InputError("each prompt is two of the tokens a, b, c, d")

    @property
    def prompt_tokens(self) -> np.ndarray:
        """``[P, 2]`` the prompts' token ids."""
        return np.array([_tokens(p) for p in self.prompts], dtype=np.int64)

    @property
    def ref_probs(self) -> np.ndarray:
        """``[V, V]`` the reference model ``pi_ref(next | previous)``."""
        return REF_PROBS

    @property
    def ref_logits(self) -> np.ndarray:
        """``[V, V]`` logits of the reference model (log-probabilities)."""
        return np.log(self.ref_probs)

    def correct(self, tokens) -> torch.Tensor:
        """``[...]`` True where a response ``[..., L]`` has the pattern and its end token."""
        import torch

        t = torch.as_tensor(tokens)
        pat, length = _tokens(self.pattern), t.shape[-1]
        starts = length - len(pat) + 1  # where the pattern can begin
        at = t[..., :starts] == pat[0]
        for j, tok in enumerate(pat[1:], start=1):  # and continue, token by token
            at &= t[..., j : j + starts] == tok
        return at.any(dim=-1) & (t[..., -1] == EOS)

    def reward(self, tokens) -> torch.Tensor:
        """``[...]`` the reward of responses ``[..., L]`` (padded with end tokens)."""
        import torch

        correct = self.correct(tokens).to(torch.float64)
        length = response_lengths(tokens)
        return correct - self.length_penalty * length / self.max_len + self.offset


def response_lengths(tokens) -> torch.Tensor:
    """``[...]`` tokens in each response ``[..., L]`` (padded with end tokens after its end).

    ``k`` content tokens and then the end token make ``k + 1``; a response cut at the limit,
    ``L`` content tokens, makes ``L``.
    """
    import torch

    t = torch.as_tensor(tokens)
    return ((t != EOS).sum(dim=-1) + 1).clamp(max=t.shape[-1])


def sample_responses(logits, first_context, uniforms) -> torch.Tensor:
    r"""Sample responses token by token, by inverting each next-token CDF at a given uniform.

    ``x_t = min{x : sum_{y <= x} pi(y | x_{t-1}) > u_t}``: the same uniforms give the same
    response under the same policy, so trainers fed the same uniforms differ only where their
    policies do. After the end token the row is padded with end tokens.

    Args:
        logits: ``[R, V, V]`` each run's table of next-token logits (row: previous token).
        first_context: ``[P]`` each prompt's last token, the context of the first response token.
        uniforms: ``[R, P, G, L]`` uniforms in [0, 1).

    Returns:
        ``[R, P, G, L]`` token ids.
    """
    import torch

    v = logits.shape[-1]
    cdf = torch.softmax(logits.detach(), dim=-1).cumsum(dim=-1)[..., :-1]  # [R, V, V-1]
    runs, prompts, group, length = uniforms.shape
    rows = cdf.reshape(runs * v, v - 1)
    base = (torch.arange(runs) * v).view(runs, 1, 1)  # row of run r's table in ``rows``
    ctx = torch.as_tensor(first_context).view(1, prompts, 1).expand(runs, prompts, group)
    alive = torch.ones(runs, prompts, group, dtype=torch.bool)
    out = torch.full((runs, prompts, group, length), EOS, dtype=torch.int64)
    for t in range(length):
        below = rows[base + ctx]  # [R, P, G, V-1] the CDF of the next token given ctx
        tok = (uniforms[..., t, None] >= below).sum(dim=-1)
        out[..., t] = torch.where(alive, tok, EOS)
        alive = alive & (tok != EOS)
        ctx = torch.where(alive, tok, ctx)
    return out


def _sequences(prompts: np.ndarray, tokens):
    """Context, token and kind of every position of prompt + response ``[..., 2 + L]``.

    Returns ``(ctx, tok, is_prompt, is_response)``: position 0 is the prompt's first token
    (context: the end token, i.e. the start of text), position 1 its second, then the response's
    tokens up to and including its end token; later positions are padding (neither kind).
    """
    import torch

    tok_r = torch.as_tensor(tokens)
    lead = tok_r.shape[:-1]
    p = torch.as_tensor(prompts)  # [P, 2]
    shape = (*lead[:-2], p.shape[0], lead[-1], 2) if len(lead) >= 2 else None
    prompt = p.view(p.shape[0], 1, 2).expand(*shape) if shape else p
    tok = torch.cat([prompt, tok_r], dim=-1)
    start = torch.full((*tok.shape[:-1], 1), EOS, dtype=torch.int64)
    ctx = torch.cat([start, tok[..., :-1]], dim=-1)
    pos = torch.arange(tok.shape[-1])
    is_prompt = (pos < 2).expand(tok.shape)
    n = response_lengths(tok_r)
    is_response = (pos >= 2) & (pos < 2 + n[..., None])
    return ctx, tok, is_prompt, is_response


def _token_logp(logits, ctx, tok) -> torch.Tensor:
    """``log pi(tok | ctx)`` for every position, from per-run tables ``[R, V, V]``."""
    import torch

    logp_all = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    index = (ctx * len(VOCAB) + tok).reshape(logits.shape[0], -1)
    return torch.gather(logp_all.reshape(logits.shape[0], -1), 1, index).reshape(ctx.shape)


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


# --------------------------------------------------------------------------- training
@dataclass(frozen=True)
class Settings:
    """What every trainer shares.

    Attributes:
        group_size: Responses per prompt per step, ``G``.
        lr: Adam's step size (policy logits and value head alike).
        epsilon: PPO clip range on every token's probability ratio.
        updates: Optimiser steps on each sampled batch (``mu``); from the second on, the ratios
            move away from 1 and the clip starts to act.
        beta: KL coefficient; 0 switches the KL off.
        kl_place: ``"loss"`` (``+ beta KL`` in the loss, as GRPO) or ``"reward"``
            (``- beta KL`` per token in the reward, as InstructGPT's PPO).
        estimator: ``"k1"`` or ``"k3"``, the per-token KL estimator used.
        mask_prompt: The loss counts only response tokens (False: the prompt's too).
        lam: GAE's λ for PPO's token advantages (γ = 1).
    """

    group_size: int = 8
    lr: float = 0.02
    epsilon: float = 0.2
    updates: int = 1
    beta: float = 0.04
    kl_place: str = "loss"
    estimator: str = "k3"
    mask_prompt: bool = True
    lam: float = 0.95


MAX_STEPS = 400
"""The most training steps a comparison offers."""
STEP_BUDGET = 2.0
"""Seconds of training a comparison may take on the reference machine (2 cores, one torch
thread): the heaviest settings get fewer steps rather than a longer wait."""


def step_seconds(n_trainers: int, seeds: int, group_size: int, updates: int) -> float:
    """Estimated seconds of one ``train_step`` (with its bookkeeping) on the reference machine.

    A fixed cost per step and per trainer, a cost per sampled response, and per extra update a
    fixed and a per-response cost; fitted to ``compare`` timings with one torch thread on a busy
    machine, where large batches cost more than their share (``benchmarks/bench_grpo.py`` times
    the heaviest settings at their limit against the default).
    """
    responses = n_trainers * seeds * group_size * len(PROMPTS)
    extra = (updates - 1) * (1.6 + 0.0015 * responses)
    return 1e-3 * (2.4 + 0.95 * n_trainers + 0.0035 * responses + extra)


def max_steps(n_trainers: int, seeds: int, group_size: int, updates: int) -> int:
    """The most steps (a multiple of 10, at most ``MAX_STEPS``) that fit in ``STEP_BUDGET``."""
    fit = STEP_BUDGET / step_seconds(n_trainers, seeds, group_size, updates)
    return int(min(MAX_STEPS, max(20, 10 * (fit // 10))))


def _validate(settings: Settings, trainers: Sequence[str], steps: int, seeds: int) -> None:
    if not trainers:
        raise InputError("choose at least one trainer")
    unknown = [t for t in trainers if t not in TRAINERS]
    if unknown:
        raise InputError(f"unknown trainer {unknown[0]!r}; choose from {', '.join(TRAINERS)}")
    if len(set(trainers)) != len(trainers):
        raise InputError("each trainer can be chosen once")
    if not 2 <= settings.group_size <= 64:
        raise InputError(f"a group needs 2 to 64 responses; got {settings.group_size}")
    if not 1 <= steps <= 2000:
        raise InputError(f"train for 1 to 2000 steps; got {steps}")
    if not 1 <= seeds <= 32:
        raise InputError(f"use 1 to 32 seeds; got {seeds}")
    if not 1 <= settings.updates <= 8:
        raise InputError(f"take 1 to 8 updates per batch; got {settings.updates}")
    checks = [
        (0 < settings.lr <= 1, f"the learning rate must be in (0, 1]; got {settings.lr}"),
        (0 < settings.epsilon < 1, f"the clip range must be in (0, 1); got {settings.epsilon}"),
        (0 <= settings.beta <= 10, f"the KL coefficient must be in [0, 10]; got {settings.beta}"),
        (0 <= settings.lam <= 1, f"GAE's λ must be in [0, 1]; got {settings.lam}"),
        (settings.kl_place in KL_PLACES, f"the KL goes in {' or '.join(KL_PLACES)}"),
        (settings.estimator in ("k1", "k3"), "the KL estimator in training is k1 or k3"),
    ]
    for ok, message in checks:
        if not ok:
            raise InputError(message)


@dataclass
class _State:
    """The live tensors of a comparison: runs ``R = trainers x seeds``, trainer-major."""

    logits: torch.Tensor  # [R, V, V] policy logits (leaf)
    values: torch.Tensor  # [S, T, V] PPO's value head V(position, previous token) (leaf)
    optimizer: torch.optim.Optimizer
    ref_logits: torch.Tensor  # [R, V, V]
    trainers: tuple[str, ...]
    seeds: int


@dataclass(frozen=True)
class StepStats:
    """Per-run diagnostics of one training step (each ``[R]``)."""

    sampled_reward: np.ndarray
    flat_groups: np.ndarray  # share of groups whose rewards are all equal
    clip_fraction: np.ndarray  # share of counted tokens outside the clip range, last update
    kl_sample: np.ndarray  # the estimator's mean per response, under the sampler


def _values_at(table, ctx) -> torch.Tensor:
    """The value head ``V(position t, previous token)`` at every position.

    Args:
        table: ``[R, T, V]`` one value per position and previous token.
        ctx: ``[R, P, G, T]`` the previous token at each position.
    """
    import torch

    r, t, v = table.shape
    index = (torch.arange(t) * v + ctx).reshape(r, -1)
    return torch.gather(table.reshape(r, -1), 1, index).reshape(ctx.shape)


def _gae_advantages(token_rewards, values, is_response, *, lam: float):
    """PPO's per-token advantages and value targets by ``rlviz.returns.gae`` (γ = 1).

    Prompt and response form one episode that terminates after the response's last token;
    the padding after it is a run of zero rewards and zero values, so its advantages are 0.
    """
    import torch

    from rlviz import returns

    t = is_response.shape[-1]
    last = 1 + is_response.sum(dim=-1, keepdim=True)  # position of the response's last token
    pos = torch.arange(t)
    v = torch.where(pos <= last, values, 0.0)
    adv = returns.gae(token_rewards.reshape(-1, t).numpy(), v.reshape(-1, t).numpy(),
                      gamma=1.0, lam=lam, dones=(pos == last).reshape(-1, t).numpy())
    adv_t = torch.from_numpy(adv).reshape(token_rewards.shape)
    return adv_t, adv_t + v


def train_step(state: _State, uniforms, task: Task, settings: Settings) -> StepStats:
    r"""One step of every trainer and seed at once: sample, score, advantages, update.

    1. Each run samples ``G`` responses to every prompt from its policy, with the shared
       uniforms (``sample_responses``).
    2. Score them: the task's reward, and per token the KL estimate against ``pi_ref`` under
       the sampling policy ``pi_old``. With ``kl_place="reward"`` the penalty ``beta k`` comes
       off the reward: summed over the response for the group trainers, per token for PPO.
    3. Advantages, each trainer its own: a group trainer gives every token of response ``i``
       its ``A_i``; PPO runs GAE over the tokens with its value head.
    4. ``updates`` Adam steps on ``policy_loss`` (clipped, tokens weighted by the trainer's
       aggregation) ``+ beta`` KL when it is in the loss, ``+`` PPO's value loss. Runs share no
       parameters and Adam acts elementwise, so each run follows its own loss exactly.

    Args:
        state: The live tensors (updated in place).
        uniforms: ``[R, P, G, L]`` the step's uniforms (the same for every trainer of a seed).
        task: The task.
        settings: The shared settings.

    Returns:
        ``StepStats`` of the step.
    """
    import torch

    beta, est, s = settings.beta, settings.estimator, state.seeds
    prompts = task.prompt_tokens
    tokens = sample_responses(state.logits, torch.from_numpy(prompts[:, 1]), uniforms)
    ctx, tok, is_prompt, is_response = _sequences(prompts, tokens)
    counted = is_response if settings.mask_prompt else is_response | is_prompt
    slots = task.max_len if settings.mask_prompt else tok.shape[-1]  # Dr. GRPO's constant
    with torch.no_grad():
        logp_old = _token_logp(state.logits, ctx, tok)
        logp_ref = _token_logp(state.ref_logits, ctx, tok)
        kl_old = getattr(kl_estimates(logp_old, logp_ref), est) * counted
    rewards = task.reward(tokens)  # [R, P, G]
    in_reward = settings.kl_place == "reward" and beta > 0
    seq_rewards = rewards - beta * kl_old.sum(dim=-1) if in_reward else rewards

    advantages = torch.zeros(tok.shape, dtype=torch.float64)
    weights = torch.zeros(tok.shape, dtype=torch.float64)
    ppo_rows, ppo_returns = None, None
    for k, name in enumerate(state.trainers):
        rows = slice(k * s, (k + 1) * s)
        batch = counted[rows].flatten(1, 2)  # [S, P*G, T]: every response of a run's batch
        w = token_weights(batch, AGGREGATIONS[name], max_tokens=slots)
        weights[rows] = w.view(weights[rows].shape)
        if name == "ppo":
            last = torch.arange(tok.shape[-1]) == 1 + is_response[rows].sum(-1, keepdim=True)
            token_rewards = last * rewards[rows][..., None]
            if in_reward:
                token_rewards = token_rewards - beta * kl_old[rows]
            with torch.no_grad():
                values = _values_at(state.values, ctx[rows])
            ppo_rows = rows
            advantages[rows], ppo_returns = _gae_advantages(
                token_rewards, values, is_response[rows], lam=settings.lam)
        else:
            advantages[rows] = ADVANTAGES[name](seq_rewards[rows])[..., None]

    for _ in range(settings.updates):
        logp = _token_logp(state.logits, ctx, tok)
        with torch.no_grad():  # PPO's clip fraction: tokens outside the clip range
            clipped = ((logp - logp_old).exp() - 1).abs().gt(settings.epsilon) & counted
        loss = policy_loss(logp, logp_old, advantages, weights, epsilon=settings.epsilon)
        if beta > 0 and settings.kl_place == "loss":
            loss = loss + beta * (weights * getattr(kl_estimates(logp, logp_ref), est)).sum()
        if ppo_rows is not None:
            v = _values_at(state.values, ctx[ppo_rows])
            loss = loss + 0.5 * (weights[ppo_rows] * (v - ppo_returns) ** 2).sum()
        state.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        state.optimizer.step()

    flat = (rewards == rewards[..., :1]).all(dim=-1)  # [R, P]
    per_run = counted.flatten(1).sum(-1).clamp(min=1)
    return StepStats(
        sampled_reward=rewards.mean(dim=(1, 2)).numpy(),
        flat_groups=flat.to(torch.float64).mean(-1).numpy(),
        clip_fraction=(clipped.flatten(1).sum(-1) / per_run).numpy(),
        kl_sample=kl_old.sum(-1).mean(dim=(1, 2)).numpy(),
    )


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


# --------------------------------------------------------------------------- one group, by hand
@dataclass(frozen=True)
class WorkedGroup:
    """Every trainer's advantages for one group of rewards: the whiteboard question.

    Attributes:
        rewards: ``[G]`` the group's rewards.
        mean, std: The group's mean and sample standard deviation (``G - 1``).
        advantages: Each group trainer's ``[G]`` advantages, by name.
        all_equal: Whether every reward is the same (then every advantage is exactly 0).
    """

    rewards: np.ndarray
    mean: float
    std: float
    advantages: dict[str, np.ndarray]
    all_equal: bool


def parse_rewards(text: str, *, max_size: int = 64) -> tuple[float, ...]:
    """A group's rewards from text such as ``"1, 0, 0, 1"`` or ``"[1 0 0 1]"``.

    Raises:
        InputError: when a value is not a number, or there are fewer than 2 or more than
            ``max_size`` of them.
    """
    parts = [p for p in str(text).replace("[", " ").replace("]", " ").replace(",", " ").split()]
    values = []
    for i, part in enumerate(parts, start=1):
        try:
            x = float(part)
        except ValueError:
            raise InputError(f"reward {i} of the group is not a number") from None
        if not math.isfinite(x) or abs(x) > 1e6:
            raise InputError(f"reward {i} of the group must be a number between −10⁶ and 10⁶")
        values.append(x)
    if len(values) < 2:
        raise InputError("give at least two rewards, separated by commas (e.g. 1, 0, 0, 1)")
    if len(values) > max_size:
        raise InputError(f"give at most {max_size} rewards; got {len(values)}")
    return tuple(values)


def worked_group(rewards: Sequence[float]) -> WorkedGroup:
    """The four group trainers' advantages for one group of rewards.

    Args:
        rewards: ``G >= 2`` finite rewards.

    Returns:
        A ``WorkedGroup``.
    """
    r = _group_rewards(rewards)
    if r.ndim != 1:
        raise InputError("give one group of rewards")
    adv = {name: ADVANTAGES[name](r).numpy() for name in GROUP_TRAINERS}
    return WorkedGroup(
        rewards=r.numpy().copy(), mean=float(r.mean()), std=float(r.std()),
        advantages=adv, all_equal=bool((r == r[0]).all()),
    )


@dataclass(frozen=True)
class GroupView:
    """One group of a training step, replayed, with what each trainer's loss does with it.

    Attributes:
        trainer: Whose policy sampled the group; ``step``, ``prompt``, ``seed_index``: which.
        texts: ``[G]`` the responses.
        tokens: ``[G, T]`` prompt and response tokens (``T = 2 + max_len``).
        is_prompt, is_response: ``[G, T]`` which positions are which (the rest is padding).
        rewards: ``[G]`` the task's rewards.
        seq_rewards: ``[G]`` the rewards the group trainers used (minus ``beta`` KL when the KL
            is in the reward).
        advantages: Each trainer's ``[G, T]`` token advantages (a group trainer's are constant
            along a response; PPO's come from GAE with its value head at that step).
        weights: Each trainer's ``[G, T]`` aggregation weights, over this group alone.
        counted: ``[G, T]`` the mask: True where the losses count the token.
        logp, logp_ref: ``[G, T]`` each token's log-probability under the sampling policy and
            under the reference model.
    """

    trainer: str
    step: int
    prompt: str
    seed_index: int
    texts: tuple[str, ...]
    tokens: np.ndarray
    is_prompt: np.ndarray
    is_response: np.ndarray
    rewards: np.ndarray
    seq_rewards: np.ndarray
    advantages: dict[str, np.ndarray]
    weights: dict[str, np.ndarray]
    counted: np.ndarray
    logp: np.ndarray
    logp_ref: np.ndarray

    def push(self, trainer: str) -> np.ndarray:
        """``[G, T]`` ``w A``: how hard the first update pushes each token's log-probability."""
        return self.weights[trainer] * self.advantages[trainer]


def replay_group(result: Comparison, trainer: str, step: int, prompt: int,
                 seed_index: int = 0) -> GroupView:
    """Re-sample one group of one step exactly as training did, and weigh it every trainer's way.

    Args:
        result: A ``Comparison``.
        trainer: Whose policy (and uniforms) sampled the group.
        step: The training step, in ``[0, steps - 1]``.
        prompt: Index of the prompt.
        seed_index: Which seed's run.

    Returns:
        A ``GroupView`` (PPO's advantages are included when PPO was trained).
    """
    import torch

    task, settings = result.task, result.settings
    k = result.index(trainer)
    if not 0 <= step < result.steps:
        raise InputError(f"the step must be in [0, {result.steps - 1}]; got {step}")
    if not 0 <= prompt < len(task.prompts):
        raise InputError(f"there are {len(task.prompts)} prompts; got prompt {prompt}")
    if not 0 <= seed_index < result.seeds:
        raise InputError(f"there are {result.seeds} seeds; got seed index {seed_index}")
    g = settings.group_size
    u = _seed_uniforms(result.seed, result.seeds, seed_index, step + 1,
                       (len(task.prompts), g, task.max_len))[step, prompt]
    logits = torch.from_numpy(result.logits[k, seed_index, step].copy())[None]
    prompts = task.prompt_tokens[prompt : prompt + 1]
    tokens = sample_responses(logits, torch.from_numpy(prompts[:, 1]),
                              torch.from_numpy(u)[None, None])  # [1, 1, G, L]
    ctx, tok, is_prompt, is_response = _sequences(prompts, tokens)
    counted = is_response if settings.mask_prompt else is_response | is_prompt
    slots = task.max_len if settings.mask_prompt else tok.shape[-1]
    ref = torch.from_numpy(task.ref_logits.copy())[None]
    logp_old = _token_logp(logits, ctx, tok)
    logp_ref = _token_logp(ref, ctx, tok)
    kl_old = getattr(kl_estimates(logp_old, logp_ref), settings.estimator) * counted
    rewards = task.reward(tokens)
    beta = settings.beta
    in_reward = settings.kl_place == "reward" and beta > 0
    seq_rewards = rewards - beta * kl_old.sum(-1) if in_reward else rewards
    advantages, weights = {}, {}
    for name in (*GROUP_TRAINERS, "ppo"):
        if name == "ppo" and "ppo" not in result.trainers:
            continue
        weights[name] = token_weights(counted[0], AGGREGATIONS[name],
                                      max_tokens=slots)[0].numpy()
        if name == "ppo":
            last = torch.arange(tok.shape[-1]) == 1 + is_response.sum(-1, keepdim=True)
            token_rewards = last * rewards[..., None] - (beta * kl_old if in_reward else 0.0)
            table = torch.from_numpy(result.values[seed_index, step].copy())[None]
            adv, _ = _gae_advantages(token_rewards, _values_at(table, ctx), is_response,
                                     lam=settings.lam)
            advantages[name] = (adv * counted)[0, 0].numpy()
        else:
            a = ADVANTAGES[name](seq_rewards)[..., None] * counted
            advantages[name] = a[0, 0].numpy()
    flat = tok[0, 0].numpy()
    return GroupView(
        trainer=trainer, step=int(step), prompt=task.prompts[prompt], seed_index=int(seed_index),
        texts=tuple(text_of(row) for row in tokens[0, 0].numpy()), tokens=flat,
        is_prompt=is_prompt[0, 0].numpy(), is_response=is_response[0, 0].numpy(),
        rewards=rewards[0, 0].numpy(), seq_rewards=seq_rewards[0, 0].numpy(),
        advantages=advantages, weights=weights, counted=counted[0, 0].numpy(),
        logp=logp_old[0, 0].numpy(), logp_ref=logp_ref[0, 0].numpy(),
    )


# --------------------------------------------------------------------------- KL estimators
@dataclass(frozen=True)
class KLStudy:
    """The three KL estimators against the exact KL, along one run's training.

    Each estimate is one sampled response's per-token estimator summed over its tokens; the
    exact value is ``KL(pi || pi_ref)`` over whole responses, both averaged over the prompts.

    Attributes:
        trainer: Whose run (seed index 0); ``steps``: ``[C]`` the checkpoints.
        exact: ``[C]`` the exact KL at each checkpoint.
        mean, se, std, low: ``[3, C]`` per estimator (k1, k2, k3): the mean over the samples, its
            standard error, the spread of a single sample, and its smallest value.
        n_samples: Responses sampled per checkpoint.
    """

    trainer: str
    steps: np.ndarray
    exact: np.ndarray
    mean: np.ndarray
    se: np.ndarray
    std: np.ndarray
    low: np.ndarray
    n_samples: int

    @property
    def bias(self) -> np.ndarray:
        """``[3, C]`` mean estimate minus the exact KL."""
        return self.mean - self.exact


def kl_study(result: Comparison, trainer: str, *, n_samples: int = 512, checkpoints: int = 21,
             seed: int = 0) -> KLStudy:
    r"""Sample responses from the policies one run passed through and estimate their KL.

    At each checkpoint the run's policy samples ``n_samples`` responses (an equal share per
    prompt); for each, ``k1``, ``k2`` and ``k3`` are summed over its tokens
    (``kl_estimates``) and compared with the exact ``KL(pi || pi_ref)`` (``exact_metrics``).
    ``k1`` and ``k3`` are unbiased; ``k2`` is not (it estimates a different divergence, and is
    close only while ``pi`` stays near ``pi_ref``).

    Args:
        result: A ``Comparison``.
        trainer: Whose run (seed index 0).
        n_samples: Responses per checkpoint, a multiple of the number of prompts, at most 8192.
        checkpoints: How many evenly spaced steps, at least 2.
        seed: Seed of the sampling.

    Returns:
        A ``KLStudy``.
    """
    import torch

    task = result.task
    k = result.index(trainer)
    p = len(task.prompts)
    if not (p <= n_samples <= 8192 and n_samples % p == 0):
        raise InputError(f"sample a multiple of {p} responses, at most 8192; got {n_samples}")
    steps = np.unique(np.linspace(0, result.steps, max(2, int(checkpoints))).round().astype(int))
    logits = torch.from_numpy(result.logits[k, 0, steps].copy())  # [C, V, V]
    c, per = len(steps), n_samples // p
    u = torch.from_numpy(np.random.default_rng(int(seed)).random((c, p, per, task.max_len)))
    prompts = task.prompt_tokens
    tokens = sample_responses(logits, torch.from_numpy(prompts[:, 1]), u)
    ctx, tok, _, is_response = _sequences(prompts, tokens)
    ref = torch.from_numpy(task.ref_logits.copy()).expand(c, -1, -1)
    est = kl_estimates(_token_logp(logits, ctx, tok), _token_logp(ref, ctx, tok))
    per_response = torch.stack([(e * is_response).sum(-1) for e in est]).reshape(3, c, -1)
    x = per_response.numpy()
    std = x.std(axis=-1, ddof=1)
    return KLStudy(
        trainer=trainer, steps=steps, exact=exact_metrics(logits, task)["kl"],
        mean=x.mean(-1), se=std / math.sqrt(x.shape[-1]), std=std, low=x.min(-1),
        n_samples=int(n_samples),
    )
