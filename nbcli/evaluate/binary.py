"""Spam-filter metrics for a two-class model: ROC, AUC and cut-offs.

No I/O. A document's score is its log-odds of spam, log P(spam | x) -
log P(ham | x): unlike P(spam), which rounds to 1.0 for most spam, the
log-odds keep every document's rank, so they are what the ROC curve and a
cut-off search sort by.

- ROC AUC: the probability that a random spam scores above a random ham,
  ties counting one half (the Mann-Whitney statistic; equal to
  scikit-learn's roc_auc_score).
- At the cut-offs: spam when P(spam) >= the spam cut-off, ham when P(spam)
  <= the ham cut-off, unsure in between. `spam_index` (which models are
  spam models) and `verdict_codes` (their verdicts) are the one rule that
  predict, eval, filter and serve all decide by. The ham
  false-positive rate is the share of ham called spam, the spam recall the
  share of spam called spam, unsure the share of all documents left unsure.
- Cut-off for a target false-positive rate (as bogotune does): with n ham
  documents, at most k = floor(target * n) of them may be called spam. The
  cut-off is the (k+1)-th highest ham score t, and the rule is "spam when
  log-odds > t", so at most k ham (fewer with ties) score above it; no lower
  cut-off keeps the ham false-positive rate at or under the target.
"""

from __future__ import annotations

import math

import numpy as np


def _average_ranks(scores: np.ndarray) -> np.ndarray:
    """Ranks 1..n of the scores, ties sharing their average rank."""
    _, inverse, counts = np.unique(scores, return_inverse=True, return_counts=True)
    upper = np.cumsum(counts)
    return (upper - (counts - 1) / 2.0)[inverse]


def roc_auc(scores: np.ndarray, positive: np.ndarray) -> float | None:
    """Area under the ROC curve of scores for boolean labels `positive`;
    None when one of the two classes is absent."""
    scores = np.asarray(scores, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    n_pos = int(positive.sum())
    n_neg = len(positive) - n_pos
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = _average_ranks(scores)
    return float((ranks[positive].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def roc_curve(scores: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(false-positive rates, true-positive rates) as the threshold falls
    through the distinct scores, from (0, 0) to (1, 1)."""
    scores = np.asarray(scores, dtype=np.float64)
    positive = np.asarray(positive, dtype=bool)
    order = np.argsort(-scores, kind="stable")
    s, p = scores[order], positive[order]
    last_of_run = np.r_[np.flatnonzero(np.diff(s) != 0), len(s) - 1] if len(s) else np.array([], dtype=np.int64)
    tp = np.cumsum(p)[last_of_run]
    fp = np.cumsum(~p)[last_of_run]
    n_pos, n_neg = max(int(p.sum()), 1), max(int((~p).sum()), 1)
    return np.r_[0.0, fp / n_neg], np.r_[0.0, tp / n_pos]


def _share(part: np.ndarray, whole: np.ndarray) -> float:
    n = int(whole.sum())
    return float((part & whole).sum() / n) if n else 0.0


HAM, UNSURE, SPAM = 0, 1, 2
VERDICTS = ("ham", "unsure", "spam")  # the names of the codes `cutoff_verdicts` returns


def cutoff_verdicts(p_spam, spam_cutoff: float, ham_cutoff: float):
    """The verdict code (SPAM, HAM or UNSURE) of P(spam), as `nbcli filter`
    decides and `nbcli eval` counts: spam when p >= spam_cutoff, else ham
    when p <= ham_cutoff, else unsure. The spam test comes first, so equal
    cut-offs leave nothing unsure; a NaN p passes neither test and is
    unsure. p_spam: a float (an int comes back) or an array (an array of
    codes); plain arithmetic on the two tests serves both, so the filter
    pays no numpy call per message."""
    spam = (p_spam >= spam_cutoff) * 1
    ham = (p_spam <= ham_cutoff) * 1
    return SPAM * spam + UNSURE * (1 - spam) * (1 - ham)  # HAM is 0


def spam_index(classes, spam_class: str) -> int | None:
    """The column of `spam_class` if `classes` make a spam model (two
    classes, one of them `spam_class`), else None: the rule by which
    predict, eval, filter and serve decide whether a model's documents get
    a spam/unsure/ham verdict."""
    return classes.index(spam_class) if len(classes) == 2 and spam_class in classes else None


def verdict_codes(log_proba, spam: int, spam_cutoff: float, ham_cutoff: float):
    """(verdict codes, P(spam)) of a spam model's log-posteriors: one row
    (an int and a float come back) or a matrix, one row per document
    (arrays come back). The log-posteriors are the calibrated ones, as the
    classifier gives them, so the verdict is decided on the probability
    every command shows. `spam` is the `spam_index`."""
    p: float | np.ndarray
    if np.ndim(log_proba) == 1:
        p = math.exp(float(log_proba[spam]))  # one message (filter, serve): no numpy call on the result
    else:
        p = np.exp(np.asarray(log_proba, dtype=np.float64)[:, spam])
    return cutoff_verdicts(p, spam_cutoff, ham_cutoff), p


def verdict_counts(codes: np.ndarray, is_spam: np.ndarray, spam_class: str, ham_class: str) -> dict:
    """How many documents of each true class got each verdict:
    {ham_class: {"ham": n, "unsure": n, "spam": n}, spam_class: {...}}."""
    codes = np.asarray(codes)
    is_spam = np.asarray(is_spam, dtype=bool)
    return {
        name: {VERDICTS[k]: int((codes[rows] == k).sum()) for k in (HAM, UNSURE, SPAM)}
        for name, rows in ((ham_class, ~is_spam), (spam_class, is_spam))
    }


def at_cutoffs(p_spam: np.ndarray, is_spam: np.ndarray, spam_cutoff: float, ham_cutoff: float) -> dict:
    """Ham false-positive rate, spam recall and unsure fraction of the
    verdicts `cutoff_verdicts` gives, and the accuracy on the decided
    documents (those outside the unsure band; None when none is)."""
    is_spam = np.asarray(is_spam, dtype=bool)
    verdicts = cutoff_verdicts(np.asarray(p_spam, dtype=np.float64), spam_cutoff, ham_cutoff)
    spam = verdicts == SPAM
    unsure = verdicts == UNSURE
    decided = ~unsure
    right = decided & (spam == is_spam)
    return {
        "ham_fpr": _share(spam, ~is_spam),
        "spam_recall": _share(spam, is_spam),
        "unsure": float(unsure.mean()) if len(unsure) else 0.0,
        "decided_accuracy": float(right.sum() / decided.sum()) if decided.any() else None,
    }


def expit(x: float) -> float:
    """1 / (1 + exp(-x)) without overflow."""
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def cutoff_for_fpr(log_odds: np.ndarray, is_spam: np.ndarray, target: float) -> dict:
    """The lowest log-odds cut-off t ("spam when log-odds > t") whose ham
    false-positive rate on these documents is at most `target`, with the
    rate and the spam recall it gives. t is None when every ham may be
    called spam (then every document is)."""
    log_odds = np.asarray(log_odds, dtype=np.float64)
    is_spam = np.asarray(is_spam, dtype=bool)
    ham = np.sort(log_odds[~is_spam])[::-1]
    allowed = math.floor(target * len(ham) + 1e-9)
    if allowed >= len(ham):
        spam = np.ones(len(log_odds), dtype=bool)
        cutoff = None
    else:
        cutoff = float(ham[allowed])
        spam = log_odds > cutoff
    return {
        "target": target,
        "log_odds_cutoff": cutoff,
        "spam_cutoff": None if cutoff is None else expit(cutoff),
        "ham_fpr": _share(spam, ~is_spam),
        "spam_recall": _share(spam, is_spam),
    }
