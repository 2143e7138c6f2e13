"""Why a document got its class: per-term contributions in log-odds.

No I/O. For any event model that keeps the scoring contract of `event_models`

    jll = transform(X) @ weights + bias + log_prior (+ u * unknown_weight)

the log-odds of the chosen class c against the runner-up r split exactly
into one part per term and two constant parts:

    jll_c - jll_r = sum_j v_j (weights_jc - weights_jr)      (terms)
                  + (bias + log_prior)_c - (bias + log_prior)_r   (prior)
                  + u (unknown_weight_c - unknown_weight_r)  (unknown terms, 'smooth' only)

where v = transform(x) and u is the number of the document's tokens outside
the vocabulary; jll_c - jll_r = log P(c | x) - log P(r | x).

These are the event model's own (raw) log-odds. A calibrated model shows
calibrated probabilities, whose log-odds differ (a message can be "unsure;
p=0.48" with raw log-odds +3.65), so every explanation says its unit
(`unit`): "raw log-odds, before calibration" for a calibrated model, plain
"log-odds" (those of the probability shown) for one without calibration.
"""

from __future__ import annotations

import numpy as np

RAW_UNIT = "raw log-odds, before calibration"
UNIT = "log-odds"


def unit(calibrated: bool) -> str:
    """The unit of a model's explanations: RAW_UNIT when its probabilities
    are calibrated (they are not the log-odds of the probability shown),
    else UNIT."""
    return RAW_UNIT if calibrated else UNIT


def explain(model, X, top: int) -> list[dict]:
    """For each row of X (counts, CSR-like; may carry `unknown`): {"class"
    and "versus" (column numbers of the chosen class and the runner-up),
    "log_odds", "prior", "unknown" (count, contribution), "terms": the `top`
    (column, count, contribution) with the largest contributions toward the
    chosen class, largest first}."""
    unknown = getattr(X, "unknown", None)
    if hasattr(X, "canonical"):
        X = X.canonical()
    values = model.transform(X)
    jll = model.joint_log_likelihood(_with_unknown(X, unknown))
    ranked = np.argsort(-jll, axis=1, kind="stable")
    fixed = model.bias + model.log_prior
    smooth = unknown is not None and model.unknown == "smooth"
    out = []
    for i in range(jll.shape[0]):
        c, r = int(ranked[i, 0]), int(ranked[i, 1])
        lo, hi = X.indptr[i], X.indptr[i + 1]
        cols = np.asarray(X.indices[lo:hi])
        counts = np.asarray(X.data[lo:hi])
        contrib = np.asarray(values.data[lo:hi], dtype=np.float64) * (model.weights[cols, c] - model.weights[cols, r])
        pick = np.lexsort((cols, -contrib))[:top]
        u = int(unknown[i]) if unknown is not None else 0
        out.append(
            {
                "class": c,
                "versus": r,
                "log_odds": float(jll[i, c] - jll[i, r]),
                "prior": float(fixed[c] - fixed[r]),
                "unknown": (u, float(u * (model.unknown_weight[c] - model.unknown_weight[r])) + 0.0 if smooth else 0.0),
                "terms": [(int(cols[k]), _number(counts[k]), float(contrib[k])) for k in pick.tolist()],
            }
        )
    return out


def _with_unknown(X, unknown):
    X.unknown = unknown
    return X


def _number(x):
    return int(x) if float(x).is_integer() else float(x)
