"""--select: keeping the K terms that say the most about the class, scored
from the document frequencies (information gain or chi-squared)."""

from __future__ import annotations

import numpy as np

from nbcli.errors import ParameterError


def select_scores(df: np.ndarray, class_count: np.ndarray, by: str = "ig") -> np.ndarray:
    """Each term's score for --select, from document frequencies.

    df: (C, V) documents of each class containing the term; class_count (C,).
    'ig': information gain (nats), H(C) - H(C | term present or absent);
    'chi2': Pearson's chi-squared statistic of the 2 x C table (present /
    absent by class), 0 for a term in every document or in none.
    """
    from scipy.special import xlogy

    df = np.asarray(df, dtype=np.float64)
    n_c = np.asarray(class_count, dtype=np.float64)[:, None]
    n = n_c.sum()
    present = df
    absent = n_c - df
    n1 = present.sum(axis=0)
    n0 = n - n1
    if by == "ig":
        h_c = -xlogy(n_c[:, 0] / n, n_c[:, 0] / n).sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            h1 = -np.nan_to_num(xlogy(present / n1, present / n1)).sum(axis=0)
            h0 = -np.nan_to_num(xlogy(absent / n0, absent / n0)).sum(axis=0)
        return h_c - (n1 / n) * h1 - (n0 / n) * h0
    if by == "chi2":
        with np.errstate(divide="ignore", invalid="ignore"):
            e1 = n1 * n_c / n
            e0 = n0 * n_c / n
            stat = np.nan_to_num((present - e1) ** 2 / e1) + np.nan_to_num((absent - e0) ** 2 / e0)
        return np.where((n1 > 0) & (n0 > 0), stat.sum(axis=0), 0.0)
    raise ParameterError("select_by", "{select_by} {value!r} is not one of ig, chi2", value=by)


def select_mask(keep: np.ndarray, df: np.ndarray, class_count: np.ndarray, k: int, by: str) -> np.ndarray:
    """Of the terms in `keep`, the k with the highest score (ties: by column);
    df: the document frequencies (C, V) (counts without them cannot select:
    the builder refuses them)."""
    candidates = np.flatnonzero(keep)
    if len(candidates) <= k:
        return keep
    scores = select_scores(df[:, candidates], class_count, by)
    best = np.argsort(-scores, kind="stable")[:k]
    out = np.zeros_like(keep)
    out[candidates[best]] = True
    return out
