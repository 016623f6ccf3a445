"""rlviz.optim: the same parameters as torch.optim, bit for bit."""

import pytest
import torch

from rlviz import optim


def _problem(seed: int, dtype: torch.dtype):
    gen = torch.Generator().manual_seed(seed)
    shapes = [(3, 5), (5,), (2, 5, 4)]
    params = [torch.randn(s, generator=gen, dtype=dtype) for s in shapes]
    target = [torch.randn(s, generator=gen, dtype=dtype) for s in shapes]

    def loss(ps):
        # Non-quadratic, so the gradients change from step to step in every coordinate.
        return sum((torch.logsumexp(p, dim=-1) ** 2).sum() + ((p - t) ** 4).sum()
                   for p, t in zip(ps, target, strict=True))

    return params, loss


def _train(params, loss, make, steps, reference: bool):
    ps = [p.clone().requires_grad_(True) for p in params]
    opt = make(ps)
    for _ in range(steps):
        if reference:
            opt.zero_grad(set_to_none=True)
            loss(ps).backward()
            opt.step()
        else:
            opt.step(torch.autograd.grad(loss(ps), ps))
    return [p.detach() for p in ps]


CASES = {
    "sgd": (lambda ps: torch.optim.SGD(ps, lr=1e-3), lambda ps: optim.SGD(ps, lr=1e-3)),
    "sgd_momentum": (lambda ps: torch.optim.SGD(ps, lr=1e-3, momentum=0.9),
                     lambda ps: optim.SGD(ps, lr=1e-3, momentum=0.9)),
    "adam": (lambda ps: torch.optim.Adam(ps, lr=1e-2, foreach=False),
             lambda ps: optim.Adam(ps, lr=1e-2)),
    "adam_betas": (lambda ps: torch.optim.Adam(ps, lr=3e-3, betas=(0.5, 0.9), eps=1e-6),
                   lambda ps: optim.Adam(ps, lr=3e-3, betas=(0.5, 0.9), eps=1e-6)),
}


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("name", CASES)
def test_steps_equal_torch_optim_bit_for_bit(name, dtype):
    params, loss = _problem(7, dtype)
    reference, ours = CASES[name]
    expected = _train(params, loss, reference, 60, reference=True)
    got = _train(params, loss, ours, 60, reference=False)
    for e, g in zip(expected, got, strict=True):
        assert torch.equal(e, g)


def test_parameters_are_updated_in_place_and_gradients_are_not_stored():
    p = torch.zeros(3, requires_grad=True)
    opt = optim.Adam([p], lr=0.1)
    opt.step(torch.autograd.grad((p - 1).pow(2).sum(), [p]))
    assert p.grad is None and (p.detach() > 0).all()


@pytest.mark.parametrize("make", [lambda: optim.SGD([torch.zeros(1)], lr=0.0),
                                  lambda: optim.SGD([torch.zeros(1)], lr=0.1, momentum=1.0),
                                  lambda: optim.Adam([torch.zeros(1)], lr=-1.0)])
def test_bad_settings_are_refused(make):
    with pytest.raises(ValueError):
        make()
