"""The TREC spam track measures of an online run (TREC 2005-2007,
Cormack & Lynam), computed from the scored stream. No I/O.

In the online protocol each message, in order, is classified and then
learned with its true label. Per message the stream holds the gold label
`is_spam`, the filter's `score` (higher = more spammy; nbcli gives the
log-odds of spam, which may be +-inf) and its binary verdict `called_spam`.

- hm%: ham misclassification, ham called spam / ham * 100.
- sm%: spam misclassification, spam called ham / spam * 100.
- lam%: logistic average misclassification,
  logit^-1((logit(hm) + logit(sm)) / 2) * 100 with logit(p) = ln(p / (1 - p)):
  the mean of the two rates in log-odds space, so halving either rate
  gains the same. The logit is infinite at a rate of 0 or 1, so, as the
  track organisers did for the CEAS 2007 challenge, which ran the TREC
  toolkit ("the exact formula used", G. V. Cormack's announcement quoted in
  https://www.mail-archive.com/dev@spamassassin.apache.org/msg21645.html),
  lam% is computed from smoothed rates, always, not only at zero:
      hm' = (ham errors + 0.5) / (ham + 0.5),  sm' = (spam errors + 0.5) / (spam + 0.5).
  A smoothed rate is never 0; it is 1 when every message of its class is
  wrong, and then lam% is 100. hm% and sm% themselves are reported raw.
  (The TREC toolkit's own source was not found to confirm it; the TREC
  legal track's l07_eval, which "adds the LAM measure from the TREC Spam
  Filtering Track", smooths too, with (errors + e) / (n + 2e).)
- 1-ROCA%: (1 - area under the ROC curve of the scores) * 100, ties
  counting one half (`binary.roc_auc`, the Mann-Whitney statistic);
  the share of (spam, ham) pairs the scores put in the wrong order.
- The learning curve: cumulative errors as messages are seen, and the
  error rate over a trailing window, to show how fast the filter learns.
"""

from __future__ import annotations

import math

import numpy as np

from nbcli.evaluate.binary import expit, roc_auc

SMOOTHING = 0.5  # added to the error count and the class count before lam% (see above)


def _logit(p: float) -> float:
    """ln(p / (1 - p)), -inf at 0 and +inf at 1."""
    if p == 0.0:
        return -math.inf
    if p == 1.0:
        return math.inf
    return math.log(p) - math.log1p(-p)


def lam(hm: float, sm: float) -> float:
    """Logistic average of two misclassification rates, fractions in
    [0, 1]: logit^-1((logit(hm) + logit(sm)) / 2), a fraction. Taken
    as given, unsmoothed: 0 when one rate is 0 and the other under 1, 1
    when one is 1 and the other over 0; a ValueError when one is 0 and the
    other 1 (the mean of -inf and +inf). `measures` smooths first."""
    for name, p in (("hm", hm), ("sm", sm)):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"lam: {name} must be a fraction in [0, 1], not {p!r}")
    mean = (_logit(hm) + _logit(sm)) / 2.0
    if math.isnan(mean):
        raise ValueError("lam: undefined when one rate is 0 and the other 1")
    return expit(mean)


def _stream(is_spam, score, called_spam) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    is_spam = np.asarray(is_spam, dtype=bool).reshape(-1)
    called_spam = np.asarray(called_spam, dtype=bool).reshape(-1)
    score = np.asarray(score, dtype=np.float64).reshape(-1)
    if not len(is_spam) == len(score) == len(called_spam):
        raise ValueError(
            f"is_spam, score and called_spam differ in length ({len(is_spam)}, {len(score)}, {len(called_spam)})"
        )
    if np.isnan(score).any():
        raise ValueError("score holds NaN; scores must be ordered (+-inf is fine)")
    return is_spam, score, called_spam


def measures(is_spam, score, called_spam) -> dict:
    """The TREC measures of a scored stream of n messages (three arrays of
    shape (n,): bool, float, bool). Keys: "messages", "spam", "ham",
    "errors" (ints); "accuracy_pct", "hm_pct", "sm_pct", "lam_pct",
    "one_minus_roca_pct" (floats, percent). None where undefined: accuracy
    with no messages, hm% with no ham, sm% with no spam, lam% when either
    of those is None, 1-ROCA% when either class is absent."""
    is_spam, score, called_spam = _stream(is_spam, score, called_spam)
    n = len(is_spam)
    n_spam = int(is_spam.sum())
    n_ham = n - n_spam
    wrong = called_spam != is_spam
    ham_errors = int((wrong & ~is_spam).sum())
    spam_errors = int((wrong & is_spam).sum())
    errors = ham_errors + spam_errors
    hm = ham_errors / n_ham if n_ham else None
    sm = spam_errors / n_spam if n_spam else None
    lam_pct = None
    if hm is not None and sm is not None:
        smoothed_hm = (ham_errors + SMOOTHING) / (n_ham + SMOOTHING)
        smoothed_sm = (spam_errors + SMOOTHING) / (n_spam + SMOOTHING)
        lam_pct = lam(smoothed_hm, smoothed_sm) * 100.0
    auc = roc_auc(score, is_spam)
    return {
        "messages": n,
        "spam": n_spam,
        "ham": n_ham,
        "errors": errors,
        "accuracy_pct": (n - errors) / n * 100.0 if n else None,
        "hm_pct": None if hm is None else hm * 100.0,
        "sm_pct": None if sm is None else sm * 100.0,
        "lam_pct": lam_pct,
        "one_minus_roca_pct": None if auc is None else (1.0 - auc) * 100.0,
    }


def learning_curve(is_spam, called_spam, points: int = 200) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(messages seen, cumulative errors, windowed error rate %), three
    arrays of one length k = min(points, n), sampled after message
    ceil(i * n / k) for i = 1..k: evenly spaced, strictly increasing, the
    last being n. The window is w = max(1, n // 20) messages: the rate
    at m messages seen is the errors among messages m-w+1..m over w * 100,
    or, while m < w, among the m messages seen over m * 100. Empty arrays
    for an empty stream."""
    if points < 1:
        raise ValueError(f"learning_curve: points must be at least 1, not {points}")
    is_spam = np.asarray(is_spam, dtype=bool).reshape(-1)
    called_spam = np.asarray(called_spam, dtype=bool).reshape(-1)
    if len(is_spam) != len(called_spam):
        raise ValueError(f"is_spam and called_spam differ in length ({len(is_spam)}, {len(called_spam)})")
    n = len(is_spam)
    k = min(points, n)
    seen = -((-np.arange(1, k + 1, dtype=np.int64) * n) // k) if k else np.zeros(0, dtype=np.int64)  # ceil(i n / k)
    cumulative = np.r_[0, np.cumsum(called_spam != is_spam)]  # cumulative[m]: errors in the first m messages
    errors = cumulative[seen]
    window = max(1, n // 20)
    start = np.maximum(seen - window, 0)
    rate = (errors - cumulative[start]) / (seen - start) * 100.0 if k else np.zeros(0)
    return seen, errors, rate.astype(np.float64)
