"""Scoring one column of a table model (`tables.TableModel`): log P(x | c)
of its cells, and the cells whose log-density is beyond floats.

No I/O; numpy only. The formulas are `tables`' module docstring's; this
module computes them from a column's scoring table (`TableModel._derive`).

Far cells (issue: 1e200 in a Gaussian column gave "a 0.5 ... +nan" and
numpy warnings). A Gaussian or kernel density's log is -Q + R with
Q = (x - mu)^2 / (2 var) (KDE: the nearest point's kernel) and R of the
order of log var. For |x - mu| / sd beyond about 1e145, Q passes 2^960
(`FAR`) and soon overflows: inf in every class, inf - inf = nan. Such a
value is finite, and `train` accepts it at predict time (only its training
values must be modelable), so it is scored, not refused or read as
missing: the answer is the limit a user expects, the class whose Gaussian
is widest (then nearest) winning as x grows. The decision: a far cell is
computed as floating point with an unbounded exponent would compute it.
Its Q is kept apart as q 2^e (q about 1, e an integer, from frexp: no
overflow whatever x, mu and var are), the cell's column giving R only; a
row's far terms are summed per class as S 2^K (K their largest e;
`far_sum`). The posterior needs only each class's excess over the
smallest, S_c 2^K_c - min S 2^K (`excess`), which is finite unless the
class is beyond any float's odds (then -inf, probability 0, as a
category of probability 0 gives). So the class of smallest Q wins; classes
whose Q is the same to the last bit (equal variances and a value so far
that the means' difference is below its rounding, as in floats) are told
apart by R: the variances, the prior and the other columns. Explanations
take the difference of two classes' far terms the same way, so log-odds
and contributions are +-inf or finite numbers, never NaN. Cells that are
not far are computed as before, bit for bit (scikit-learn's GaussianNB
still matches); `joint_log_likelihood` and `column_log_likelihood` give
the true values, -inf where they are beyond floats.
"""

from __future__ import annotations

import numpy as np

FAR = 2.0**960  # a log-density below -FAR is a far cell (J such terms still sum to a float)
CHUNK = 1 << 22  # KDE: kernel evaluations per block (32 MB of float64)
LOG_SQRT_2PI = 0.5 * np.log(2 * np.pi)


def half_square(x, mu, s) -> tuple[np.ndarray, np.ndarray]:
    """(q, e) with 0.5 ((x - mu) / s)^2 = q 2^e elementwise (broadcast):
    q in [1/8, 2) or 0, e an integer, whatever the magnitudes."""
    d, ed = np.frexp(np.ldexp(x, -2) - np.ldexp(mu, -2))
    f, es = np.frexp(s)
    return 0.5 * (d / f) ** 2, 2 * (ed + 2 - es)


def logsumexp_kernel(x: np.ndarray, points: np.ndarray, log_weights: np.ndarray, h: float) -> np.ndarray:
    """log sum_i w_i exp(-((x - p_i) / h)^2 / 2) for each x, in blocks
    (-inf or NaN where every kernel underflows: a far value)."""
    out = np.empty(len(x))
    rows = max(1, CHUNK // max(len(points), 1))
    with np.errstate(over="ignore", invalid="ignore"):
        for start in range(0, len(x), rows):
            z = (x[start : start + rows, None] - points[None, :]) / h
            a = log_weights - 0.5 * z * z
            top = a.max(axis=1)
            out[start : start + rows] = top + np.log(np.exp(a - top[:, None]).sum(axis=1))
    return out


def _kde_far(x: np.ndarray, points: np.ndarray, log_weights: np.ndarray, h: float):
    """(R, q, e) of far values x: log sum_i w_i exp(-Q_i) = R - q 2^e, q 2^e
    the least Q_i (the nearest point's), in blocks."""
    R, q0, e0 = np.empty(len(x)), np.empty(len(x)), np.empty(len(x), dtype=np.int32)
    rows = max(1, CHUNK // max(len(points), 1))
    for start in range(0, len(x), rows):
        part = slice(start, start + rows)
        q, e = half_square(x[part, None], points[None, :], h)
        with np.errstate(divide="ignore", over="ignore"):
            least = (e + np.log2(q)).argmin(axis=1)[:, None]
            q0[part], e0[part] = np.take_along_axis(q, least, 1)[:, 0], np.take_along_axis(e, least, 1)[:, 0]
            a = log_weights - np.ldexp(np.ldexp(q, e - e0[part, None]) - q0[part, None], e0[part, None])
        top = a.max(axis=1)  # the nearest point's: finite
        R[part] = top + np.log(np.exp(a - top[:, None]).sum(axis=1))
    return R, q0, e0


def numeric_scores(kind: str, table, x: np.ndarray, n_classes: int, far: list, column: int) -> np.ndarray:
    """(n, C) log P(x | c) of a gaussian or kde column's cells x (its
    scoring table, `TableModel._derive`), 0 where missing. Far cells (see
    the module docstring) hold R, their far terms appended to `far` as
    (column, rows, q, e), q and e (rows, C): log P = R - q 2^e."""
    missing = np.isnan(x)
    if kind == "gaussian":
        mean, var = table
        with np.errstate(over="ignore", invalid="ignore"):
            z = x[:, None] - mean
            z *= z
            z *= -0.5 / var
        z -= 0.5 * np.log(var) + LOG_SQRT_2PI
        rows = np.flatnonzero(~missing & ~(z > -FAR).all(axis=1))
        z[missing] = 0.0
        if rows.size:
            z[rows] = -(0.5 * np.log(var) + LOG_SQRT_2PI)
            far.append((column, rows, *half_square(x[rows, None], mean, np.sqrt(var))))
        return z
    out = np.zeros((len(x), n_classes))
    if missing.all():
        return out
    keep = ~missing
    points, inverse = np.unique(x[keep], return_inverse=True)
    inverse = inverse.reshape(-1)
    dens = np.empty((len(points), n_classes))
    for c, (support, log_weights, n, h) in enumerate(table):
        dens[:, c] = logsumexp_kernel(points, support, log_weights, h) - np.log(n * h) - LOG_SQRT_2PI
    beyond = np.logical_not((dens > -FAR).all(axis=1))
    if beyond.any():
        m = int(beyond.sum())
        q, e = np.empty((m, n_classes)), np.empty((m, n_classes), dtype=np.int32)
        for c, (support, log_weights, n, h) in enumerate(table):
            R, q[:, c], e[:, c] = _kde_far(points[beyond], support, log_weights, h)
            dens[beyond, c] = R - np.log(n * h) - LOG_SQRT_2PI
        at = (np.cumsum(beyond) - 1)[inverse[beyond[inverse]]]  # each far row's far value
        far.append((column, np.flatnonzero(keep)[beyond[inverse]], q[at], e[at]))
    out[keep] = dens[inverse]
    return out


def far_sum(far: list, n_classes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rows, S, K) of far terms [(column, rows, q, e)]: the rows that have
    any and, per class, the sum of their terms q 2^e as S 2^K (K the
    largest e; a term 2^1074 times below it is lost, as in a float sum)."""
    rows = np.unique(np.concatenate([r for _, r, _, _ in far]))
    K = np.full((len(rows), n_classes), -(1 << 20), dtype=np.int32)
    for _, r, _, e in far:
        at = np.searchsorted(rows, r)
        K[at] = np.maximum(K[at], e)
    S = np.zeros(K.shape)
    for _, r, q, e in far:
        at = np.searchsorted(rows, r)
        S[at] += np.ldexp(q, e - K[at])
    return rows, S, K


def excess(S: np.ndarray, K: np.ndarray) -> np.ndarray:
    """S 2^K less its row's least, without overflow (inf where beyond floats)."""
    with np.errstate(divide="ignore", over="ignore"):
        least = (K + np.log2(S)).argmin(axis=1)[:, None]
        k = np.take_along_axis(K, least, 1)
        return np.ldexp(np.ldexp(S, K - k) - np.take_along_axis(S, least, 1), k)


def difference(q: np.ndarray, e: np.ndarray, c: np.ndarray, v: np.ndarray) -> np.ndarray:
    """q_c 2^e_c - q_v 2^e_v per row (classes c, v (m,)), +-inf where beyond floats."""
    pick = np.arange(len(q))
    qc, qv, ec, ev = q[pick, c], q[pick, v], e[pick, c], e[pick, v]
    k = np.maximum(ec, ev)
    with np.errstate(over="ignore"):
        return np.ldexp(np.ldexp(qc, ec - k) - np.ldexp(qv, ev - k), k)
