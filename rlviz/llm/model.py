"""The toy language model: its vocabulary, the reference policy, the task and its responses."""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from rlviz.errors import InputError

if TYPE_CHECKING:
    import torch

__all__ = [
    "EOS",
    "PROMPTS",
    "REF_PROBS",
    "VOCAB",
    "Responses",
    "Task",
    "enumerate_responses",
    "sample_responses",
]


VOCAB = ("a", "b", "c", "d", ".")
"""The toy vocabulary; the end token ``.`` ends a text and also opens it."""
EOS = 4


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

        reward = self.correct(tokens).to(torch.float64)
        if self.length_penalty:
            reward = reward - self.length_penalty * response_lengths(tokens) / self.max_len
        return reward + self.offset if self.offset else reward


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
    by_position = uniforms.movedim(-1, 0).reshape(length, -1, 1).contiguous()  # [L, R*P*G, 1]
    out = []
    for t in range(length):
        below = rows.index_select(0, (base + ctx).flatten())  # the CDF of the next token
        tok = torch.searchsorted(below, by_position[t], right=True).view(alive.shape)  # #{CDF <= u}
        tok = torch.where(alive, tok, EOS)
        alive = alive & (tok != EOS)
        ctx = torch.where(alive, tok, ctx)
        out.append(tok)
    return torch.stack(out, dim=-1)


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
