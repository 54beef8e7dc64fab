"""The C-path's compiled loops against the numpy formulas they replace, on random states
with the cases that decide them: ties between candidates, division by zero (s = 1),
samples exactly on the margin band, and conditions failing one at a time."""

import numpy as np
import pytest

from convexlearn.solvers.kernel_svm.svm_path_kernels import (EVENT_KINDS,
                                                             first_crossings, next_event,
                                                             path_consistent)


def _state(seed, n=40):
    rng = np.random.default_rng(seed)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    E = rng.random(n) < 0.3
    L = ~E & (rng.random(n) < 0.4)
    a = np.where(E, rng.random(n), np.where(L, 1.0, 0.0))
    lam = 0.7
    g = np.where(E, lam, np.where(L, lam * (1 - rng.random(n)), lam * (1 + rng.random(n))))
    s = rng.normal(1.0, 0.5, size=n)
    s[E] = 1.0
    return y, a, lam, E, L, g, s


def _numpy_consistent(y, a, lam, E, L, g, tol):
    margin = g / lam
    R = ~E & ~L
    return bool(abs(a @ y) <= tol * max(1.0, np.abs(a).sum())
                and np.all(np.abs(margin[E] - 1) <= tol)
                and np.all(margin[L] <= 1 + tol) and np.all(a[L] == 1.0)
                and np.all(margin[R] >= 1 - tol) and np.all(a[R] == 0.0)
                and np.all((a >= 0) & (a <= 1)))


def _numpy_crossings(g, s, lam, E, L):
    on = np.abs(g - lam) <= 1e-9 * lam
    r, l_ = np.flatnonzero(~E & ~L & on & (s > 1)), np.flatnonzero(L & on & (s < 1))
    return (int(r[0]) if r.size else -1), (int(l_[0]) if l_.size else -1)


def _numpy_event(a, idx, dE, g, s, E, L, lam, lam_end, ceiling):
    best, event = lam_end, None
    with np.errstate(divide="ignore", invalid="ignore"):
        for bound, kind in ((0.0, "E->R"), (1.0, "E->L")):
            cand = lam + (bound - a[idx]) / dE
            ok = np.isfinite(cand) & (cand > best) & (cand < ceiling)
            if ok.any():
                k = int(np.flatnonzero(ok)[np.argmax(cand[ok])])
                best, event = float(cand[k]), (kind, int(idx[k]))
        cand = (g - lam * s) / (1 - s)
        for mask, kind in ((L & ~E, "L->E"), (~L & ~E, "R->E")):
            ok = mask & np.isfinite(cand) & (cand > best) & (cand < ceiling)
            if ok.any():
                i = int(np.flatnonzero(ok)[np.argmax(cand[ok])])
                best, event = float(cand[i]), (kind, i)
    return best, event


@pytest.mark.parametrize("seed", range(6))
def test_path_consistent_equals_the_numpy_conditions_as_each_one_fails(seed):
    y, a, lam, E, L, g, s = _state(seed)
    # make the balance hold, then break one condition at a time
    e = np.flatnonzero(E)
    a[e[0]] -= (a @ y) * y[e[0]]
    a[e[0]] = np.clip(a[e[0]], 0, 1)
    variants = [(a, g)]
    for i, (da, dg) in enumerate([(0.0, 1e-3), (1e-3, 0.0), (0.0, -1e-3)]):
        for member in (E, L, ~E & ~L):
            k = np.flatnonzero(member)[0]
            a2, g2 = a.copy(), g.copy()
            a2[k] = a2[k] - da if a2[k] > 0.5 else a2[k] + da
            g2[k] += dg * lam
            variants.append((a2, g2))
    a3 = a.copy()
    a3[e[0]] = 1.5                                      # outside the box
    variants.append((a3, g))
    for tol in (1e-10, 1e-2, 1.0):
        for a_, g_ in variants:
            assert path_consistent(y, a_, lam, E, L, g_, tol) == \
                _numpy_consistent(y, a_, lam, E, L, g_, tol)
    assert any(not _numpy_consistent(y, a_, lam, E, L, g_, 1e-10) for a_, g_ in variants)


@pytest.mark.parametrize("seed", range(6))
def test_first_crossings_equal_the_numpy_masks(seed):
    y, a, lam, E, L, g, s = _state(seed)
    rng = np.random.default_rng(seed + 100)
    on = rng.random(g.size) < 0.5                      # put half the samples on the band
    g = np.where(on & ~E, lam * (1 + rng.uniform(-5e-10, 5e-10, g.size)), g)
    assert first_crossings(g, s, lam, E, L) == _numpy_crossings(g, s, lam, E, L)
    assert first_crossings(g + 1.0, s, lam, E, L) == (-1, -1)


@pytest.mark.parametrize("seed", range(8))
def test_next_event_equals_the_numpy_ratio_test_with_ties_and_zero_divisions(seed):
    y, a, lam, E, L, g, s = _state(seed)
    rng = np.random.default_rng(seed + 200)
    idx = np.flatnonzero(E)
    dE = rng.normal(size=idx.size)
    dE[0] = 0.0                                        # a multiplier that does not move
    s[np.flatnonzero(~E)[:2]] = 1.0                    # margins that move with lambda
    if seed % 2:                                       # a tie across and within groups
        k = np.flatnonzero(~E)
        g[k[3]] = g[k[4]] = g[k[5]]
        s[k[3]] = s[k[4]] = s[k[5]]
    lam_end = 0.01 if seed < 4 else 0.69
    got = next_event(a, idx, dE, g, s, E, L, lam, lam_end, lam * (1 - 1e-12))
    best, event = _numpy_event(a, idx, dE, g, s, E, L, lam, lam_end, lam * (1 - 1e-12))
    assert got[0] == best
    assert (None if got[1] < 0 else (EVENT_KINDS[got[1]], int(got[2]))) == event


@pytest.mark.parametrize("m", [0, 1, 31, 32, 33, 70])
def test_elbow_pass_equals_the_numpy_blocked_sums_in_every_mode(m):
    """The compiled pass (g summed afresh / corrected / left, s formed or not) against
    its numpy formula, to well within the rounding bound both share; what is not asked
    for is left untouched."""
    from convexlearn.solvers.kernel_svm.svm_path_pass import (G_CORRECT, G_FRESH, G_NONE,
                                                              elbow_pass,
                                                              elbow_pass_reference)
    rng = np.random.default_rng(m)
    n = 57
    cols = rng.normal(size=(m + 3, n))        # rows beyond m must not be read
    w, d = rng.normal(size=m + 3), rng.normal(size=m + 3)
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    base, g0 = rng.normal(size=n), rng.normal(size=n)
    scale = (np.abs(cols[:m]).T @ (np.abs(w[:m]) + np.abs(d[:m])) + np.abs(base)
             + np.abs(g0) + 2.0)
    for mode in (G_NONE, G_FRESH, G_CORRECT):
        for want_s in (False, True):
            g, s = g0.copy(), np.full(n, np.nan)
            g_ref, s_ref = g0.copy(), np.full(n, np.nan)
            elbow_pass(cols, m, w, base, 0.7, y, d, -0.3, g, s, mode, want_s)
            elbow_pass_reference(cols, m, w, base, 0.7, y, d, -0.3, g_ref, s_ref, mode,
                                 want_s)
            assert np.all(np.abs(g - g_ref) <= 1e-14 * scale)
            if want_s:
                assert np.all(np.abs(s - s_ref) <= 1e-14 * scale)
            else:
                assert np.all(np.isnan(s))
            if mode == G_NONE:
                assert np.array_equal(g, g0)
    expected = base + y * 0.7 + cols[:m].T @ w[:m]
    elbow_pass(cols, m, w, base, 0.7, y, d, -0.3, g, s, G_FRESH, False)
    assert np.allclose(g, expected, rtol=0, atol=1e-13 * scale.max())


@pytest.mark.parametrize("seed", range(3))
def test_snap_and_swap_equal_their_numpy_formulas(seed):
    from convexlearn.solvers.kernel_svm.svm_path_kernels import snap_elbow, swap_rows_cols
    rng = np.random.default_rng(seed)
    a = rng.random(30)
    idx = rng.choice(30, 12, replace=False)
    a[idx[:6]] = [0.0, 1e-13, -1e-13, 1 - 1e-13, 1 + 1e-13, 1.5]
    a[idx[6]] = -0.2
    expected = a.copy()
    aE = a[idx]
    expected[idx] = np.clip(np.where(np.abs(aE) <= 1e-12, 0.0,
                                     np.where(np.abs(aE - 1) <= 1e-12, 1.0, aE)), 0.0, 1.0)
    snap_elbow(a, idx, 1e-12)
    assert np.array_equal(a, expected)
    A = rng.normal(size=(9, 9))
    B = A.copy()
    p, q, size = 2, 6, 7
    B[[p, q], :size] = B[[q, p], :size]
    B[:size, [p, q]] = B[:size, [q, p]]
    swap_rows_cols(A, p, q, size)
    assert np.array_equal(A, B)


@pytest.mark.parametrize("seed", range(3))
def test_elbow_residual_and_direction_miss_equal_their_numpy_formulas(seed):
    from convexlearn.solvers.kernel_svm.svm_path_kernels import direction_miss, elbow_residual
    y, a, lam, E, L, g, s = _state(seed)
    idx = np.flatnonzero(E)
    r, worst, scale = elbow_residual(y, a, 0.3, lam, g[idx] + 1e-3, 2.0)
    expected = np.r_[-(y @ a), lam - (g[idx] + 1e-3)]
    np.testing.assert_allclose(r, expected, rtol=1e-14, atol=1e-15)
    assert worst == pytest.approx(np.abs(expected).max(), rel=1e-14)
    assert scale == pytest.approx(2.0 * np.abs(a).sum() + 0.3 + lam, rel=1e-14)
    rng = np.random.default_rng(seed)
    x = rng.normal(size=idx.size + 1)
    s = s + rng.normal(scale=1e-3, size=s.size)
    want = (max(np.abs(s[idx] - 1).max(), abs(y[idx] @ x[1:]))
            / (2.0 * np.abs(x[1:]).sum() + abs(x[0]) + 1))
    assert direction_miss(x, s, idx, y, 2.0) == pytest.approx(want, rel=1e-13)
    for bad in (np.nan, np.inf):
        x_bad, s_bad = x.copy(), s.copy()
        x_bad[0] = bad
        assert np.isnan(direction_miss(x_bad, s, idx, y, 2.0))
        s_bad[idx[0]] = bad
        assert np.isnan(direction_miss(x, s_bad, idx, y, 2.0))


@pytest.mark.parametrize("seed", range(4))
def test_leaving_at_bound_equals_the_numpy_masks(seed):
    from convexlearn.solvers.kernel_svm.svm_path_kernels import leaving_at_bound
    rng = np.random.default_rng(seed)
    a = rng.choice([0.0, 1.0, 0.5], size=30)
    idx = rng.choice(30, 15, replace=False)
    dE = rng.choice([-1.0, 0.0, 1.0], size=15)
    to_r, to_l = idx[(a[idx] <= 0) & (dE > 0)], idx[(a[idx] >= 1) & (dE < 0)]
    expected = (int(to_r[0]) if to_r.size else -1, int(to_l[0]) if to_l.size else -1)
    assert leaving_at_bound(a, idx, dE) == expected


@pytest.mark.parametrize("seed", range(6))
def test_breakpoint_scan_is_its_steps_in_order(seed):
    """breakpoint_scan = direction_miss, path_consistent, bounded_kkt, then (a passing
    direction) leaving_at_bound, first_crossings and (none found) next_event."""
    from convexlearn.certify.path_kkt_bound import bounded_kkt
    from convexlearn.solvers.kernel_svm.svm_path_kernels import (breakpoint_scan,
                                                                 direction_miss,
                                                                 leaving_at_bound)
    y, a, lam, E, L, g, s = _state(seed)
    idx = np.flatnonzero(E)
    rng = np.random.default_rng(seed)
    xE = rng.normal(size=idx.size)
    x = np.r_[0.3, xE - y[idx] * (y[idx] @ xE) / idx.size]     # y_E^T x_E = 0: it passes
    if seed % 3 == 1:
        s = s.copy()
        s[idx[0]] = 1.5                     # the direction fails its check
    if seed % 3 == 2:
        g = g.copy()
        g[np.flatnonzero(~E & ~L)[0]] = lam  # a sample of R on the margin
    passes = []
    for with_x in (True, False):
        got = breakpoint_scan(y, a, 0.1, lam, g, 1e-13, 1.0, 1e-9, x, with_x, s, idx, E, L,
                              1.0, 0.01, lam * (1 - 1e-12))
        found = with_x and direction_miss(x, s, idx, y, 1.0) <= 1e-9
        assert got[0] == found
        assert got[1] == path_consistent(y, a, lam, E, L, g, 1e-10)
        np.testing.assert_array_equal(got[2], bounded_kkt(y, a, 0.1, lam, g, 1e-13, 1.0, 1e-9))
        want = (-1, -1, -1, -1, 0.01, -1, -1)
        if found:
            leaving = leaving_at_bound(a, idx, x[1:])
            crossing = first_crossings(g, s, lam, E, L)
            event = (next_event(a, idx, x[1:], g, s, E, L, lam, 0.01, lam * (1 - 1e-12))
                     if max(leaving + crossing) < 0 else (0.01, -1, -1))
            want = leaving + crossing + tuple(event)
        assert tuple(got[3:]) == want
        passes.append(found)
    assert passes == [seed % 3 != 1, False]       # (the direction passes unless spoilt)
