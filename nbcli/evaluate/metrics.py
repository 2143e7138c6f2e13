"""Evaluation metrics from true labels, predictions and log-probabilities.

Definitions follow the usual (and scikit-learn's) conventions:
- precision_c = TP_c / (TP_c + FP_c), recall_c = TP_c / (TP_c + FN_c),
  F1_c = 2 P R / (P + R). A class's ratio with a zero denominator is
  undefined: None in the report ("-" in the table, as an AUC without both
  classes is): the recall and F1 of a class with no documents, the
  precision and F1 of a class nothing was predicted as. (F1 is 0 when P
  and R are both 0.)
- macro average: the plain mean over classes; weighted average: the mean
  weighted by support (the number of true documents of the class). An
  undefined ratio counts as 0 in them, as with scikit-learn's
  zero_division=0, so that the averages stay numbers and match it.
- The classes reported are the model's classes that occur among the true or
  predicted labels, then true labels the model does not know.
- log loss: the mean of -log P(true class | document), with the
  probability clipped to [eps, 1 - eps] (eps = float64 machine epsilon) so
  one confidently wrong document costs at most ~36 nats instead of infinity.
  Documents whose true class the model does not know are left out of it.
"""

from __future__ import annotations

import numpy as np

EPS = float(np.finfo(np.float64).eps)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    out = np.zeros(len(num), dtype=np.float64)
    ok = den > 0
    out[ok] = num[ok] / den[ok]
    return out


def confusion_matrix(y_true: np.ndarray, y_pred: np.ndarray, n_labels: int) -> np.ndarray:
    """Counts of (true, predicted) label indices, shape (n_labels, n_labels)."""
    flat = np.bincount(y_true * n_labels + y_pred, minlength=n_labels * n_labels)
    return flat.reshape(n_labels, n_labels)


def log_loss(log_p_true: np.ndarray) -> float:
    """Mean of -log p over the true classes' log-probabilities, clipped."""
    clipped = np.clip(log_p_true, np.log(EPS), np.log1p(-EPS))
    return float(-clipped.mean()) if len(clipped) else float("nan")


def classification_report(
    true_labels: list[str], pred_labels: list[str], model_classes: list[str], log_p_true: np.ndarray | None = None
) -> dict:
    """Accuracy, per-class and averaged precision/recall/F1, confusion matrix
    and log loss, as a JSON-ready dict (the `nbcli eval --json` schema)."""
    present = set(true_labels) | set(pred_labels)
    extra = sorted(set(true_labels) - set(model_classes))
    labels = [c for c in model_classes if c in present] + extra
    index = {lab: i for i, lab in enumerate(labels)}
    y_true = np.array([index[t] for t in true_labels], dtype=np.int64)
    y_pred = np.array([index[p] for p in pred_labels], dtype=np.int64)
    n = len(y_true)
    cm = confusion_matrix(y_true, y_pred, len(labels))
    tp = np.diag(cm).astype(np.float64)
    support = cm.sum(axis=1).astype(np.float64)
    predicted = cm.sum(axis=0).astype(np.float64)
    precision = _ratio(tp, predicted)
    recall = _ratio(tp, support)
    f1 = _ratio(2 * precision * recall, precision + recall)
    weights = support / support.sum() if n else support

    def avg(values, w=None):
        return float(np.average(values, weights=w)) if len(values) and (w is None or w.sum() > 0) else 0.0

    report = {
        "documents": n,
        "accuracy": float(tp.sum() / n) if n else 0.0,
        "log_loss": None,
        "classes": [
            {
                "class": lab,
                "precision": float(precision[i]) if predicted[i] else None,
                "recall": float(recall[i]) if support[i] else None,
                "f1": float(f1[i]) if predicted[i] and support[i] else None,
                "support": int(support[i]),
            }
            for i, lab in enumerate(labels)
        ],
        "macro_avg": {"precision": avg(precision), "recall": avg(recall), "f1": avg(f1), "support": n},
        "weighted_avg": {
            "precision": avg(precision, weights),
            "recall": avg(recall, weights),
            "f1": avg(f1, weights),
            "support": n,
        },
        "confusion_matrix": {"labels": labels, "matrix": cm.tolist()},
        "unknown_classes": extra,
    }
    if log_p_true is not None:
        known = np.array([t in set(model_classes) for t in true_labels], dtype=bool)
        if known.any():
            report["log_loss"] = log_loss(np.asarray(log_p_true)[known])
    return report
