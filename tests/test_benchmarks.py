"""The benchmark runner: a reference that does part of the work is scaled up to all of it."""

import benchmarks
from benchmarks import Case, run_case


def case_fn():
    return None


def reference_fn():
    return None


def test_reference_scale_multiplies_the_reference_time(monkeypatch):
    seconds = {case_fn: 0.5, reference_fn: 2.0}
    monkeypatch.setattr(benchmarks, "measure", lambda fn, repeat: seconds[fn])
    row = run_case(Case("c", "g", case_fn, reference=reference_fn, min_ratio=100,
                        reference_scale=50.0))
    assert row.median == 0.5
    assert row.reference_median == 100.0
    assert row.ratio == 200.0 and row.ratio_ok
    plain = run_case(Case("c", "g", case_fn, reference=reference_fn, min_ratio=100))
    assert plain.ratio == 4.0 and not plain.ratio_ok
