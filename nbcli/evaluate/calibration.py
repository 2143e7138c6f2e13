"""Calibration metrics: how far predicted probabilities are from observed rates.

No I/O. For `nbcli eval --calibration`.

- Reliability bins: the top-label confidence of a document is the predicted
  class's probability. With B equal-width bins, bin b holds the confidences
  in [b/B, (b+1)/B), the last bin also 1.0. Per non-empty bin: its mean
  confidence, its accuracy (the share of its predictions that are right) and
  the gap accuracy - confidence (negative: over-confident).
- Expected calibration error (top-label ECE, Guo et al. 2017, "On
  Calibration of Modern Neural Networks"): sum over bins of
  (count_b / n) * |accuracy_b - confidence_b|.
- Brier score (multi-class, Brier 1950): mean over documents i of
  sum over classes c of (p_ic - [c == y_i])^2, between 0 and 2. For two
  classes it is twice the binary Brier score mean_i (p_i - y_i)^2 of either
  class's probability (scikit-learn's brier_score_loss).
- Unsure band of a spam model: the open band (-t, t) of log-odds of spam in
  which documents are left unsure, so that at most a target fraction is.
"""

from __future__ import annotations

import math

import numpy as np

from nbcli.errors import NbcliError
from nbcli.evaluate.binary import expit


def _vector(values, name: str, dtype) -> np.ndarray:
    array = np.asarray(values, dtype=dtype)
    if array.ndim != 1:
        raise NbcliError(f"{name} has shape {array.shape}", hint="give one value per document")
    return array


def _same_length(a: np.ndarray, b: np.ndarray, names: str) -> None:
    if len(a) != len(b):
        raise NbcliError(f"{names} differ in length ({len(a)} and {len(b)})", hint="give one of each per document")


def reliability(prob: np.ndarray, correct: np.ndarray, bins: int = 15) -> list[dict]:
    """Reliability diagram of top-label confidences `prob` (shape (n,), in
    [0, 1]) and whether each prediction was right (`correct`, bool (n,)):
    one dict {"low", "high", "count", "confidence", "accuracy", "gap"} per
    non-empty bin, in order. Bin b of `bins` holds low = b/bins <= p <
    high = (b+1)/bins (the last bin also p = 1); confidence and accuracy are
    the bin's means of prob and correct, gap = accuracy - confidence."""
    if bins < 1:
        raise NbcliError(f"{bins} calibration bins", hint="use at least 1")
    prob = _vector(prob, "prob", np.float64)
    correct = _vector(correct, "correct", bool)
    _same_length(prob, correct, "prob and correct")
    if np.any(~((prob >= 0.0) & (prob <= 1.0))):  # NaN fails both tests too
        raise NbcliError("a confidence is outside [0, 1]", hint="give probabilities, not log-probabilities")
    # the edges are the rounded b/bins the dicts report, so low <= p < high holds exactly for the floats shown
    edges = np.arange(bins + 1) / bins
    which = np.clip(np.searchsorted(edges, prob, side="right") - 1, 0, bins - 1)
    counts = np.bincount(which, minlength=bins)
    conf_sums = np.bincount(which, weights=prob, minlength=bins)
    right_sums = np.bincount(which, weights=correct.astype(np.float64), minlength=bins)
    rows = []
    for b in np.flatnonzero(counts):
        confidence = float(conf_sums[b] / counts[b])
        accuracy = float(right_sums[b] / counts[b])
        rows.append(
            {
                "low": float(edges[b]),
                "high": float(edges[b + 1]),
                "count": int(counts[b]),
                "confidence": confidence,
                "accuracy": accuracy,
                "gap": accuracy - confidence,
            }
        )
    return rows


def expected_calibration_error(prob: np.ndarray, correct: np.ndarray, bins: int = 15) -> float | None:
    """Top-label ECE: sum over the `reliability` bins of (count / n) * |gap|,
    between 0 and 1; None when there are no documents."""
    rows = reliability(prob, correct, bins)
    n = sum(row["count"] for row in rows)
    if n == 0:
        return None
    return float(sum(row["count"] * abs(row["gap"]) for row in rows) / n)


def brier(proba: np.ndarray, truth: np.ndarray) -> float | None:
    """Multi-class Brier score of class probabilities `proba` (shape (n, C))
    against true class indices `truth` (ints in 0..C-1, shape (n,)):
    mean_i sum_c (p_ic - [c == y_i])^2, between 0 and 2. With two classes it
    is twice `binary_brier` of P(class 1). None when n = 0."""
    proba = np.asarray(proba, dtype=np.float64)
    if proba.ndim != 2:
        raise NbcliError(f"class probabilities have shape {proba.shape}", hint="give an (n documents, C classes) array")
    truth = _vector(truth, "truth", np.int64)
    _same_length(proba, truth, "probability rows and true classes")
    if len(truth) == 0:
        return None
    if truth.min() < 0 or truth.max() >= proba.shape[1]:
        raise NbcliError("a true class index is out of range", hint="skip documents of unknown class first")
    onehot = np.zeros_like(proba)
    onehot[np.arange(len(truth)), truth] = 1.0
    return float(((proba - onehot) ** 2).sum(axis=1).mean())


def binary_brier(p_pos: np.ndarray, is_pos: np.ndarray) -> float | None:
    """Binary Brier score mean_i (p_i - y_i)^2 of P(positive) `p_pos` against
    bool labels `is_pos` (scikit-learn's brier_score_loss), between 0 and 1;
    None when there are no documents."""
    p_pos = _vector(p_pos, "p_pos", np.float64)
    is_pos = _vector(is_pos, "is_pos", bool)
    _same_length(p_pos, is_pos, "p_pos and is_pos")
    if len(p_pos) == 0:
        return None
    return float(np.mean((p_pos - is_pos) ** 2))


def summary(log_proba: np.ndarray, truth: np.ndarray, bins: int = 15) -> dict:
    """Calibration of a model's log-probabilities `log_proba` (shape (n, C))
    against true class indices `truth` (shape (n,); -1, a class the model does
    not know, skips the document): {"documents": the number scored,
    "brier": multi-class `brier`, "ece": top-label
    `expected_calibration_error`, "bins": bins, "reliability": the
    `reliability` rows}. The predicted class is the argmax (the first of
    ties), its probability the confidence. brier and ece are None for no
    documents."""
    log_proba = np.asarray(log_proba, dtype=np.float64)
    if log_proba.ndim != 2:
        raise NbcliError(f"log-probabilities have shape {log_proba.shape}", hint="give an (n, C classes) array")
    truth = _vector(truth, "truth", np.int64)
    _same_length(log_proba, truth, "log-probability rows and true classes")
    known = truth != -1
    log_proba, truth = log_proba[known], truth[known]
    proba = np.exp(log_proba)
    if len(truth):
        predicted = proba.argmax(axis=1)
        confidence = np.clip(proba[np.arange(len(truth)), predicted], 0.0, 1.0)  # exp may round a hair past 1
        correct = predicted == truth
    else:
        confidence, correct = np.zeros(0), np.zeros(0, dtype=bool)
    return {
        "documents": int(len(truth)),
        "brier": brier(proba, truth),
        "ece": expected_calibration_error(confidence, correct, bins),
        "bins": bins,
        "reliability": reliability(confidence, correct, bins),
    }


def unsure_band(log_odds: np.ndarray, is_spam: np.ndarray, target: float) -> dict:
    """The unsure band (-t, t) of log-odds of spam `log_odds` (shape (n,);
    +-inf allowed) that leaves at most a fraction `target` of the documents
    unsure, with bool labels `is_spam`. k = floor(target * n) documents may be
    unsure; t is the (k+1)-th smallest |log-odds| (inf when k = n). Unsure:
    |log-odds| < t, so exactly the k least certain documents are unsure
    (fewer when |log-odds| ties at t: ties are decided). Decided: log-odds
    >= t is spam, <= -t ham (log-odds 0, with t = 0, is ham). Returns {"target", "threshold_log_odds": t,
    "spam_cutoff": sigmoid(t), "ham_cutoff": sigmoid(-t), "unsure": the
    fraction unsure, "decided_accuracy": the share of decided documents
    called right (None when none is decided), "decided": their count}."""
    if not 0.0 <= target <= 1.0:
        raise NbcliError(f"unsure target {target} is outside [0, 1]", hint="give a fraction, e.g. 0.05")
    log_odds = _vector(log_odds, "log_odds", np.float64)
    is_spam = _vector(is_spam, "is_spam", bool)
    _same_length(log_odds, is_spam, "log_odds and is_spam")
    if np.isnan(log_odds).any():
        raise NbcliError("a log-odds score is NaN", hint="check the model's scores")
    n = len(log_odds)
    size = np.abs(log_odds)
    k = math.floor(target * n + 1e-9)  # 1e-9: 0.3 * 10 is 2.9999999999999996
    t = float(np.sort(size)[k]) if k < n else math.inf if n else 0.0
    unsure = size < t
    spam = (log_odds >= t) & (log_odds > 0)  # the log_odds > 0 test only matters for t = 0
    decided = ~unsure
    n_decided = int(decided.sum())
    right = (spam == is_spam) & decided
    return {
        "target": target,
        "threshold_log_odds": t,
        "spam_cutoff": expit(t),
        "ham_cutoff": expit(-t),
        "unsure": float(unsure.mean()) if n else 0.0,
        "decided_accuracy": float(right.sum() / n_decided) if n_decided else None,
        "decided": n_decided,
    }
