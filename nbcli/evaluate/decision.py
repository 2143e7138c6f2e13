"""Decision thresholds for two-class models (`train --decide`): choosing one
on held-out scores, and deciding with it. No I/O.

A two-class model decides by a threshold on the log-odds of its positive
class, s = log P(positive | d) - log P(other | d) (calibrated when the model
is): the positive class when s >= t, the other class otherwise. The argmax
is t = 0 (ties, s = 0, go to the positive class here; the argmax gives
them to the first class). `decided` applies a rule (positive column, t),
or the argmax without one.

Choosing t (`choose_threshold`), for an objective:
- "f1": the F1 of the positive class, 2 TP / (2 TP + FP + FN);
- "balanced": balanced accuracy, (TP / P + TN / N) / 2;
on held-out documents' scores, each with a weight (`train` samples at
most 2500 documents per class for its held-out scores, so a class's
documents weigh (its documents) / (its sampled documents): the counts are
then the corpus's; F1 depends on the share of positives, balanced accuracy
does not). Every rule "s >= u" with u one of the distinct held-out scores
is tried (an exact search, like scikit-learn's TunedThresholdClassifierCV
but over every score rather than a grid of 100); the best one wins, the
highest u among equals (the fewest positive decisions). The stored t is
then the midpoint between that u and the next lower held-out score (the
boundary between the last document called positive and the first one
not), or u itself when every document is called positive: the same
decisions on the held-out documents, and a margin on either side for new
ones.

A spam model's verdicts (spam, unsure, ham) are cut-offs on P(spam): with
a threshold whose positive class is spam, and no cut-offs given on the
command line, the spam cut-off becomes the threshold's probability and the
ham cut-off at most that (`decided_cutoffs`); filter, serve, predict's
verdict column and eval's spam-filter figures all take them from there.
"""

from __future__ import annotations

import math

import numpy as np

from nbcli.errors import NbcliError

OBJECTIVES = ("accuracy", "f1", "balanced")


def log_odds(log_proba: np.ndarray, positive: int) -> np.ndarray:
    """The positive class's log-odds of each row of a two-class model's
    log-probabilities (n, 2)."""
    log_proba = np.asarray(log_proba, dtype=np.float64)
    return log_proba[:, positive] - log_proba[:, 1 - positive]


def decided(log_proba: np.ndarray, rule: tuple[int, float] | None = None) -> np.ndarray:
    """The class index each row of log-probabilities (n, C) is decided as:
    the argmax, or with rule = (positive column, t) of a two-class model
    the positive class where its log-odds are >= t."""
    log_proba = np.asarray(log_proba, dtype=np.float64)
    if rule is None or not len(log_proba):
        return log_proba.argmax(axis=1) if len(log_proba) else np.zeros(0, dtype=np.int64)
    positive, t = rule
    return np.where(log_odds(log_proba, positive) >= t, positive, 1 - positive).astype(np.int64)


def _objective(tp, fp, pos, neg, objective: str) -> np.ndarray:
    """The objective at every candidate (arrays of weighted counts)."""
    fn = pos - tp
    if objective == "f1":
        den = 2 * tp + fp + fn
        return np.divide(2 * tp, den, out=np.zeros_like(tp), where=den > 0)
    if objective == "balanced":
        recall = tp / pos if pos > 0 else np.zeros_like(tp)
        specificity = (neg - fp) / neg if neg > 0 else np.zeros_like(tp)
        return (recall + specificity) / 2
    raise NbcliError(f"unknown decision objective {objective!r}", hint="use f1 or balanced")


def choose_threshold(
    scores: np.ndarray, positive: np.ndarray, objective: str, weights: np.ndarray | None = None
) -> tuple[float, float]:
    """(t, the objective's value on the held-out documents at t): the
    threshold on the log-odds `scores` (n,) that maximises `objective`
    given which documents are positive (bool (n,)), see the module
    docstring. Both classes must occur."""
    scores = np.asarray(scores, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    w = np.ones(len(scores)) if weights is None else np.asarray(weights, dtype=np.float64)
    if not len(scores) or positive.all() or not positive.any():
        raise NbcliError(
            "choosing a decision threshold needs held-out documents of both classes",
            hint="give more documents of the rarer class",
        )
    if not np.isfinite(scores).all():
        raise NbcliError("a held-out log-odds is not finite", hint="give finite scores")
    order = np.argsort(-scores, kind="stable")
    s, pos_w, neg_w = scores[order], np.where(positive, w, 0.0)[order], np.where(positive, 0.0, w)[order]
    last = np.r_[np.flatnonzero(np.diff(s) != 0), len(s) - 1]  # the last row of each run of equal scores
    tp, fp = np.cumsum(pos_w)[last], np.cumsum(neg_w)[last]
    values = _objective(tp, fp, float(pos_w.sum()), float(neg_w.sum()), objective)
    best = int(np.argmax(values))  # the first maximum: the highest threshold among equals
    u = s[last[best]]
    t = u if best == len(last) - 1 else (u + s[last[best] + 1]) / 2
    return float(t), float(values[best])


def positive_figures(truth_positive: np.ndarray, decided_positive: np.ndarray) -> dict:
    """{"precision", "recall", "f1"} of the positive class (None where
    undefined, as in `metrics`)."""
    truth_positive = np.asarray(truth_positive, dtype=bool)
    decided_positive = np.asarray(decided_positive, dtype=bool)
    tp = int((truth_positive & decided_positive).sum())
    called, real = int(decided_positive.sum()), int(truth_positive.sum())
    precision = tp / called if called else None
    recall = tp / real if real else None
    f1 = None
    if precision is not None and recall is not None:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def probability(t: float) -> float:
    """The probability a log-odds threshold t stands for, sigmoid(t)."""
    return 1.0 / (1.0 + math.exp(-t)) if t > -700 else 0.0


def decided_cutoffs(
    rule: tuple[int, float] | None, spam: int | None, spam_cutoff: float, ham_cutoff: float
) -> tuple[float, float]:
    """A spam model's (spam cut-off, ham cut-off) under its decision
    threshold (`rule`, its positive class the spam column `spam`): spam from
    P(spam) >= sigmoid(t) on, the ham cut-off lowered to that if above it
    (the unsure band below the threshold is kept). Without a rule, or when
    its positive class is not spam, the cut-offs given."""
    if rule is None or spam is None or rule[0] != spam:
        return spam_cutoff, ham_cutoff
    p = probability(rule[1])
    return p, min(ham_cutoff, p)
