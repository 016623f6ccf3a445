"""Input checks for trajectories: shapes, flags, and the episode boundaries."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rlviz.errors import InputError
from rlviz.returns.steps import ArrayLike, td_error

__all__: list[str] = []


# --------------------------------------------------------------------------- validation
def _where(index: tuple[int, ...]) -> str:
    *batch, t = (int(i) for i in index)
    if batch:
        return f"step {t} of trajectory {', '.join(str(b) for b in batch)}"
    return f"step {t}"


def _check_unit(name: str, x: float) -> float:
    try:
        x = float(x)
    except (TypeError, ValueError):
        raise InputError(f"{name} must be a number in [0, 1]; got {x!r}") from None
    if not 0.0 <= x <= 1.0:
        raise InputError(f"{name} must be in [0, 1]; got {x:g}")
    return x


def _numbers(name: str, x: ArrayLike, what: str) -> np.ndarray:
    arr = np.asarray(x, dtype=np.float64)
    if arr.ndim == 0:
        raise InputError(f"{name} must be an array over time [..., T]; got a single number")
    if arr.shape[-1] == 0:
        raise InputError(f"the trajectory is empty: {name} has no steps")
    if not np.isfinite(arr).all():
        bad = tuple(np.argwhere(~np.isfinite(arr))[0])
        raise InputError(f"{what} at {_where(bad)} is empty or not a finite number")
    return arr


def _same_shape(name: str, arr: np.ndarray, shape: tuple[int, ...], per: str) -> None:
    if arr.shape != shape:
        raise InputError(
            f"{name} has shape {arr.shape} but rewards has shape {shape}: give one {per} per step"
        )


def _flags(name: str, x: ArrayLike | None, shape: tuple[int, ...]) -> np.ndarray:
    if x is None:
        return np.zeros(shape, dtype=bool)
    arr = np.asarray(x)
    _same_shape(name, arr, shape, "flag")
    if arr.dtype == bool:
        return arr
    num = np.asarray(arr, dtype=np.float64)
    bad = ~((num == 0.0) | (num == 1.0))
    if bad.any():
        where = tuple(np.argwhere(bad)[0])
        raise InputError(f"{name} must be 0 or 1 (False or True); {_where(where)} is not")
    return num == 1.0


class _Steps(NamedTuple):
    """Validated inputs of a trajectory, with the bootstrap of every segment's last step.

    The trajectories are read as one stream, row after row. It splits into segments at every
    episode end and at the end of every trajectory; only a segment's last step bootstraps
    from something other than the next entry of ``values``.
    """

    rewards: np.ndarray  # [..., T] r_t
    values: np.ndarray | None  # [..., T] V(s_t), or None when not needed
    ends: np.ndarray  # [..., T] bool, an episode ends after step t (terminated or truncated)
    closes: np.ndarray  # [C] sorted stream index of each segment's last step
    boot: np.ndarray  # [C] V(s_{t+1}) there: 0, the cut state's value, or last_value

    def next_values(self) -> np.ndarray:
        """``[..., T]`` the value ``V(s_{t+1})`` that each step bootstraps from."""
        out = np.zeros(self.rewards.shape)
        if self.values is not None:
            out[..., :-1] = self.values[..., 1:]
        out.reshape(-1)[self.closes] = self.boot
        return out

    def td_errors(self, gamma: float) -> np.ndarray:
        """``[..., T]`` ``delta_t = r_t + gamma V(s_{t+1}) - V(s_t)``, a fresh array."""
        return td_error(self.rewards, self.values, self.next_values(), gamma=gamma)

    @property
    def cuts(self) -> np.ndarray | None:
        """``[E]`` the segment ends where a running sum restarts (all but the stream's last)."""
        return self.closes[:-1] if self.closes.size > 1 else None


def _steps(
    rewards: ArrayLike,
    values: ArrayLike | None,
    *,
    last_value: ArrayLike,
    dones: ArrayLike | None,
    truncated: ArrayLike | None,
    truncated_values: ArrayLike | None,
) -> _Steps:
    r = _numbers("rewards", rewards, "the reward r_t")
    shape = r.shape
    length = shape[-1]
    v = None
    if values is not None:
        v = np.asarray(values, dtype=np.float64)
        _same_shape("values", v, shape, "value V(s_t)")
        v = _numbers("values", v, "the value V(s_t)")
    d = _flags("dones", dones, shape)
    tr = _flags("truncated", truncated, shape) & ~d  # termination wins
    last = np.asarray(last_value, dtype=np.float64)
    if last.shape not in {(), shape[:-1]}:
        raise InputError(
            f"last_value must be one number per trajectory, shape {shape[:-1]}; got {last.shape}"
        )
    if not np.isfinite(last).all():
        raise InputError("last_value, the value V(s_T) after the last step, must be finite")

    ends = d | tr
    closing = ends.copy()
    closing[..., -1] = True
    closes = np.flatnonzero(closing)
    boot = np.zeros(closes.size)
    at_row_end = closes % length == length - 1
    boot[at_row_end] = np.broadcast_to(last, shape[:-1]).reshape(-1)[closes[at_row_end] // length]
    cut_here = tr.reshape(-1)[closes]
    if cut_here.any():
        if truncated_values is None:
            where = tuple(np.argwhere(tr)[0])
            raise InputError(
                f"{_where(where)} is truncated, so its return bootstraps from the value of the "
                "state where the episode was cut: pass truncated_values"
            )
        cut = np.asarray(truncated_values, dtype=np.float64)
        _same_shape("truncated_values", cut, shape, "cut-state value")
        boot[cut_here] = cut.reshape(-1)[closes[cut_here]]
        missing = ~np.isfinite(boot)
        if missing.any():
            where = np.unravel_index(closes[np.argmax(missing)], shape)
            raise InputError(
                f"{_where(where)} is truncated but the value of the state where the episode was "
                "cut, V(s_t+1), is empty: enter it"
            )
    boot[d.reshape(-1)[closes]] = 0.0  # a terminal state is worth nothing
    return _Steps(r, v, ends, closes, boot)
