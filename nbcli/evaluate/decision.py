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

Other rules measured, none adopted (issue 27, 2026-11-26). On make
bench-decide's splits, the held-out scores `train --decide f1` chose on
and the test part's calibrated log-odds were kept, and each rule was
applied to the same scores; figures are the positive class's test F1, mean
over the splits (seeds 0-4, as docs/benchmarks.md; then seeds 0-14 of the
20NG and R8 tasks with the one SOTU split), and the tasks whose mean is at
least TunedThresholdClassifierCV's. This search: 0.7282, 6 of 8 (R8 crude
-0.002, SOTU -0.004); 0.7395, 6 of 8 (crude -0.0045, SOTU -0.004).
- Threshold at the lowest score called positive instead of the midpoint:
  0.7288 / 0.7403, 6 of 8 both (crude, SOTU still below); the lowest of
  equal maxima instead of the highest: the same decisions (no ties).
- A smoothed F1 (each decision a logistic of (s - t) / h): h = 0.1 0.7278
  (5 of 8) / 0.7400; h = 0.25 0.7243 / 0.7389 (4 of 8); h = 0.5 0.7034.
  Labels smoothed along the scores: isotonic, the same decisions; an
  11-document moving average 0.7272 / 0.7387 (5 of 8).
- Bootstrap (100 resamples): the median of their thresholds 0.7273 (7 of
  8, crude -0.002) / 0.7393 (6 of 8); the argmax of their mean F1 curve
  0.7270 / 0.7387.
- The peer's own rule (the mean over groups of each group's F1 curve on a
  100-point grid of P) on these scores: 0.7284 (5 of 8) / 0.7385 (crude
  -0.005); the exact mean of the groups' curves 0.7282 / 0.7389; the median
  of the groups' own thresholds 0.7234 / 0.7369 (4 of 8).
- The plug-in rule for calibrated probabilities, P >= F1max / 2: 0.6847.
- 10 groups instead of 5 (all documents are scored either way): 0.7250 (3
  of 8) / 0.7387 (crude -0.008, SOTU -0.012). Three partitions into 5
  groups (the digest's and two reshuffled), seeds 0-9: pooled 0.7345,
  median threshold 0.7355, against 0.7364; either reshuffled partition
  alone 0.7341 / 0.7345, and one task's mean moves by up to 0.016 with the
  partition alone.
The gaps are noise of this size: per split, nbcli minus the peer has a
standard deviation of 0.007-0.026 by task (0.003-0.011 for a mean of 5);
both pick within a few test documents of each other on the same ranking
(on R8 crude the best threshold on the test part gives the same F1 for
both: the same model), and SOTU's -0.004 is about one true positive. The
exact search run on the peer's own held-out scores gives SOTU 0.217: its
coarse grid, not its scores, gets the peer 0.303 there.

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
