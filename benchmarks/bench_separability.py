"""Separability of n=20000, d=50: ``Halfspace.check()`` against scipy's HiGHS on the same LPs.

Both outcomes (separable; not separable after flipping 1% of the labels). For each, the
verdict path of ``check(margin=False, slack=False)`` (consistency LP through cvxpy +
HiGHS, then, if infeasible, the certificate LP, then the independent float check and,
where cheap, the exact one) is timed against ``scipy.optimize.linprog(method="highs")``
on the same LP matrices: the consistency LP alone (the decision) and consistency +
certificate LP (the same work, since linprog returns no Farkas certificate). Both
backends of ``check()`` are timed ("highspy": the consistency LP straight to HiGHS,
whose dual ray is the certificate when infeasible - the default at this size; "cvxpy":
the declarative problems, consistency LP then certificate LP), split into overhead
outside HiGHS (cvxpy compilation or matrix building), HiGHS and verification; the
optional extras (hard-margin SVM for the margin, minimum-total-slack LP) are timed
separately.

Run:  python benchmarks/bench_separability.py [--repeat 3]
With --record, writes benchmarks/results/separability.md (atomically).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
from scipy.optimize import linprog

import convexlearn as cl
import cvxpy as cp
from convexlearn.formulations.base import solver_version

from _common import record_text

N, D = 20_000, 50


def make_data(separable: bool, seed: int = 0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D))
    w = rng.standard_normal(D)
    f = X @ w + 0.3
    X += (np.sign(f) * 0.05)[:, None] * w / np.linalg.norm(w)   # a small gap
    y = np.where(f >= 0, 1.0, -1.0)
    if not separable:
        flip = rng.choice(N, size=N // 100, replace=False)
        y[flip] = -y[flip]
    return X, y


def linprog_consistency(X, y):
    A = -(y[:, None] * np.hstack([X, np.ones((X.shape[0], 1))]))
    return linprog(np.zeros(X.shape[1] + 1), A_ub=A, b_ub=-np.ones(X.shape[0]),
                   bounds=(None, None), method="highs")


def linprog_certificate(X, y):
    A = np.vstack([(X * y[:, None]).T, (y > 0), (y < 0)]).astype(float)
    b = np.r_[np.zeros(X.shape[1]), 1.0, 1.0]
    return linprog(np.zeros(X.shape[0]), A_eq=A, b_eq=b, bounds=(0, None), method="highs")


def timed(fns: dict, repeat: int) -> dict:
    """Median seconds and last output of each function; runs are interleaved so that
    load from other processes on the shared machine hits every candidate alike."""
    times = {k: [] for k in fns}
    out = {}
    for _ in range(repeat):
        for key, fn in fns.items():
            t = time.perf_counter()
            out[key] = fn()
            times[key].append(time.perf_counter() - t)
    return {k: (statistics.median(v), out[k]) for k, v in times.items()}


def run(repeat: int):
    rows, notes = [], []
    for separable in (True, False):
        X, y = make_data(separable)
        hs = cl.Halfspace(X, y)
        fns = {"consistency": lambda: linprog_consistency(X, y)}
        if not separable:
            fns["certificate"] = lambda: linprog_certificate(X, y)
        for backend in ("highspy", "cvxpy"):
            fns[backend] = (lambda b=backend: hs.check(margin=False, slack=False, backend=b))
        measured = timed(fns, repeat)
        t_lp, ref = measured["consistency"]
        assert ref.status == (0 if separable else 2), ref.message
        t_same = t_lp
        if not separable:
            t_cert, cert = measured["certificate"]
            assert cert.status == 0
            t_same = t_lp + t_cert
        for backend in ("highspy", "cvxpy"):
            t_ours, res = measured[backend]
            assert res.separable == separable and res.verified, res.summary()
            tm = res.provenance["timings"]
            lp_keys = [k for k in ("consistency_lp", "certificate_lp") if k in tm]
            solver = sum(tm.get(k + "_solver", 0.0) for k in lp_keys)
            rows.append({
                "case": "separable" if separable else "not separable", "backend": backend,
                "ours": t_ours, "linprog_decision": t_lp, "linprog_same": t_same,
                "ratio_same": t_ours / t_same, "ratio_decision": t_ours / t_lp,
                "overhead": sum(tm[k] for k in lp_keys) - solver, "highs": solver,
                "verify": tm["verification"],
                "source": res.provenance.get("certificate_source", "-"),
                "checks": ", ".join(f"{c.arithmetic} {'ok' if c.passed else 'FAILED'}"
                                    for c in res.checks),
            })
        t0 = time.perf_counter()
        if separable:
            full = hs.check(margin=True, slack=False)
            extra = (f"hard-margin SVM (margin {full.margin:.4g}, status "
                     f"{full.provenance['margin_svm_status']}): "
                     f"{full.provenance['timings']['margin_svm']:.2f} s")
        else:
            full = hs.check(margin=False, slack=True)
            extra = (f"min-total-slack LP (value {full.min_total_slack:.4g}, "
                     f"{full.slack_samples.size} samples need slack): "
                     f"{full.provenance['timings']['min_slack_lp']:.2f} s")
        notes.append(f"- {'separable' if separable else 'not separable'}: full `check()` "
                     f"{time.perf_counter() - t0:.2f} s, of which {extra}")
    return rows, notes


def write(rows, notes, repeat):
    header = ("| case | backend | check() s | linprog same LPs s | ratio | linprog decision LP s "
              "| ratio | overhead s | HiGHS s | verify s | certificate from | checks |")
    lines = [f"# Separability, n={N}, d={D} (median of {repeat})", "",
             "`Halfspace(X, y).check(margin=False, slack=False)` vs "
             "`scipy.optimize.linprog(method=\"highs\")` on the same LP matrices. "
             "\"same LPs\": consistency LP, plus the certificate LP when infeasible (linprog "
             "returns no Farkas certificate). Target: ratio <= 1.5. backend \"highspy\" (the "
             "default at this size) passes the consistency LP as matrices to HiGHS and reads "
             "the certificate from its dual ray (one LP either way); \"cvxpy\" solves the "
             "declarative problems (consistency LP, then certificate LP). overhead = LP time outside HiGHS (cvxpy "
             "compilation, or building the matrices); verify = the independent float check "
             "(+ the exact one over Q for lambda, whose support has <= d + 2 samples).", "",
             header, "|---" * (header.count("|") - 1) + "|"]
    for r in rows:
        lines.append(f"| {r['case']} | {r['backend']} | {r['ours']:.2f} | {r['linprog_same']:.2f} | "
                     f"{r['ratio_same']:.2f}x | {r['linprog_decision']:.2f} | "
                     f"{r['ratio_decision']:.2f}x | {r['overhead']:.2f} | {r['highs']:.2f} | "
                     f"{r['verify']:.3f} | {r['source']} | {r['checks']} |")
    lines += ["", "Optional extras (not in the timed path):", *notes, "",
              f"Machine: {os.cpu_count()} cores (shared); numpy {np.__version__}, "
              f"cvxpy {cp.__version__}, HiGHS {solver_version('HIGHS')}.", ""]
    text = "\n".join(lines)
    print(record_text(Path(__file__).parent / "results" / "separability.md", text))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--record", action="store_true",
                        help="write benchmarks/results/separability.md (else print only)")
    args = parser.parse_args()
    write(*run(args.repeat), args.repeat)
