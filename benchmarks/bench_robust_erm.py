"""Quantile regression: the certified exact route against scikit-learn's
QuantileRegressor(solver="highs"), the same problem.

QuantileRegressor(quantile=tau, alpha=a) minimizes (1/n) sum pinball_tau(y - X w - b) +
a ||w||_1, intercept unpenalized: convexlearn's ERM(loss="quantile", quantile=tau,
penalty="l1", lam=a) (docs/conventions.md), whose exact route is the dual LP ("dual-lp":
d + 1 rows, HiGHS' dual simplex) certified at 1e-9 relative (stationarity distance over
the cancelling terms, duality gap over max(|P|, |D|)). scikit-learn hands HiGHS the primal
LP (n equality rows, 2 n + 2 d + 2 columns).

Reported: the ratio of our time (solve() with its certificate, a new ERM each run) to
QuantileRegressor.fit's, both measured in this run, best of 3 ("warm"); the first
solve() in a fresh process (imports excluded, printed beside them); the relative
difference of the objectives F recomputed from the data; and, on random cases (n, d,
tau, alpha drawn), the median and 90th percentile of the ratio.

Run ``python benchmarks/bench_robust_erm.py`` (prints) or with ``--record`` (writes
benchmarks/results/robust_erm.md).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import warnings

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from _common import best_time, markdown_table, write_result  # noqa: E402


def _data(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d))
    y = X @ rng.standard_normal(d) + rng.standard_t(2, n)
    return X, y


def _case(n, d, tau, alpha, seed, repeat=3):
    import convexlearn as cl
    from sklearn.linear_model import QuantileRegressor
    X, y = _data(n, d, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_sk, qr = best_time(lambda: QuantileRegressor(quantile=tau, alpha=alpha,
                                                       solver="highs").fit(X, y), repeat)
    penalty = "l1" if alpha > 0 else "none"
    t_us, sol = best_time(lambda: cl.ERM(X, y, loss="quantile", quantile=tau,
                                         penalty=penalty, lam=alpha).solve(), repeat)
    erm = cl.ERM(X, y, loss="quantile", quantile=tau, penalty=penalty, lam=alpha)
    F_sk, F_us = erm.objective(qr.coef_, qr.intercept_), sol.objective
    return {"n": n, "d": d, "tau": tau, "alpha": alpha, "sklearn_s": t_sk, "ours_s": t_us,
            "ratio": t_us / t_sk, "rel_diff": (F_us - F_sk) / abs(F_sk),
            "status": sol.status, "route": sol.provenance["route"],
            "gap": sol.report.relative_gap, "distance": sol.report.relative_distance}


def _first_call(n, d, tau, alpha, seed):
    """The first solve() of a fresh process (its imports timed apart)."""
    code = (f"import time, json, sys; t=time.perf_counter(); import convexlearn as cl; "
            f"imp=time.perf_counter()-t; sys.path.insert(0, {os.path.dirname(__file__)!r}); "
            f"from bench_robust_erm import _data; X, y = _data({n}, {d}, {seed}); "
            f"t=time.perf_counter(); s=cl.ERM(X, y, loss='quantile', quantile={tau}, "
            f"penalty='l1', lam={alpha}).solve(); "
            f"print(json.dumps({{'import': imp, 'first': time.perf_counter()-t, "
            f"'status': s.status}}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    rows, lines = [], []
    head = _case(5000, 50, 0.3, 0.01, 0)
    first = _first_call(5000, 50, 0.3, 0.01, 0)
    rows.append(head)
    lines.append(f"Speed line (n=5000, d=50, tau=0.3, alpha=lam=0.01, l1): ours "
                 f"{head['ours_s']:.3f} s vs QuantileRegressor {head['sklearn_s']:.3f} s, "
                 f"ratio {head['ratio']:.3f} (target <= 1), warm best of 3; first solve() "
                 f"in a fresh process {first['first']:.3f} s (ratio "
                 f"{first['first'] / head['sklearn_s']:.3f}; imports {first['import']:.2f} s "
                 f"apart), status {first['status']}; objective relative difference "
                 f"{head['rel_diff']:.1e} (target |.| <= 1e-9), route {head['route']}, "
                 f"certificate: relative gap {head['gap']:.1e}, relative distance "
                 f"{head['distance']:.1e}.")
    rng = np.random.default_rng(12345)
    for k in range(8):
        n, d = int(rng.integers(300, 3000)), int(rng.integers(3, 60))
        tau = float(np.round(rng.uniform(0.05, 0.95), 3))
        alpha = float(np.round(10 ** rng.uniform(-4, -1), 6)) if k % 4 else 0.0
        rows.append(_case(n, d, tau, alpha, 100 + k, repeat=2))
    ratios = np.array([r["ratio"] for r in rows[1:]])
    lines.append(f"Random cases ({len(ratios)}: n in [300, 3000), d in [3, 60), tau in "
                 f"(0.05, 0.95), alpha log-uniform in [1e-4, 1e-1] or 0; best of 2): ratio "
                 f"median {np.median(ratios):.3f}, 90th percentile "
                 f"{np.percentile(ratios, 90):.3f}, worst {ratios.max():.3f}; largest "
                 f"|objective difference| {max(abs(r['rel_diff']) for r in rows):.1e}; "
                 f"every answer certified: {all(r['status'] == 'optimal' for r in rows)}.")
    table = markdown_table(
        ["n", "d", "tau", "alpha", "QuantileRegressor (s)", "ours (s)", "ratio",
         "(F_ours - F_sk) / F_sk", "status", "route", "rel. gap"],
        [[r["n"], r["d"], r["tau"], r["alpha"], r["sklearn_s"], r["ours_s"], r["ratio"],
          f"{r['rel_diff']:.1e}", r["status"], r["route"], f"{r['gap']:.1e}"] for r in rows])
    body = "\n\n".join(lines + [table])
    print(write_result("robust_erm", "Quantile regression vs QuantileRegressor (HiGHS)",
                       body))


if __name__ == "__main__":
    main()
