"""Run every registered benchmark and print one table (python -m benchmarks [-k TEXT])."""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import platform
import sys
import time

import benchmarks
from benchmarks import REGISTRY, Row, run_case


def _fmt_time(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.0f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.1f} ms"
    return f"{seconds:.2f} s"


def _mark(ok: bool | None) -> str:
    return {None: "", True: "ok", False: "OVER"}[ok]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("-k", dest="pattern", default="", help="only cases whose name contains this")
    ap.add_argument("--quick", action="store_true", help="one repetition per case")
    ap.add_argument("--cpu", action="store_true",
                    help="time this process's CPU seconds instead of the wall clock (a busy "
                         "machine inflates them less; budgets are wall-clock on a quiet one)")
    args = ap.parse_args(argv)
    if args.cpu:
        benchmarks.CLOCK = time.process_time

    for mod in pkgutil.iter_modules(benchmarks.__path__):
        if mod.name.startswith("bench_"):
            importlib.import_module(f"benchmarks.{mod.name}")
    cases = [c for c in REGISTRY if args.pattern.lower() in (c.group + " " + c.name).lower()]
    print(
        f"rlviz benchmarks · Python {platform.python_version()} · {os.cpu_count()} CPUs · "
        f"{len(cases)} cases{' (quick)' if args.quick else ''}"
        f"{' · CPU time' if args.cpu else ''}\n"
    )
    header = (
        f"{'group':<12} {'case':<58} {'median':>10} {'budget':>9} {'':>4} "
        f"{'loop ref':>10} {'ratio':>8} {'need':>6} {'':>4}"
    )
    print(header)
    print("-" * len(header))
    failed = 0
    for c in cases:
        row: Row = run_case(c, quick=args.quick)
        ratio = f"{row.ratio:.0f}x" if row.ratio is not None else ""
        need = f"{c.min_ratio:.0f}x" if c.min_ratio is not None else ""
        over = row.within_budget is False or row.ratio_ok is False
        failed += over
        print(
            f"{c.group:<12} {c.name[:58]:<58} {_fmt_time(row.median):>10} "
            f"{_fmt_time(c.budget):>9} {_mark(row.within_budget):>4} "
            f"{_fmt_time(row.reference_median):>10} {ratio:>8} {need:>6} {_mark(row.ratio_ok):>4}",
            flush=True,
        )
    notes = [c for c in cases if c.note]
    if notes:
        print("\nNotes:")
        for c in notes:
            print(f"  {c.name}: {c.note}")
    print(f"\n{len(cases) - failed} of {len(cases)} cases within their budgets and ratios.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
