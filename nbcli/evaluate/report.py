"""The `nbcli eval` report: from true labels and log-posteriors to metrics.

No I/O. `report` is the whole report as a JSON-ready dict (the stable
`nbcli eval --json` schema, see docs/guide/evaluation.md); `flat_metrics` names each
figure for `--fail-under`/`--fail-over` and for cross-validation, and
`check_limits` says which limit a report breaks (a ParameterError naming
fail_under/fail_over, which the command line says in flag terms).

Undefined figures are None (the table prints "-"), never 0: the AUC
without both classes, a class's precision, recall or F1 over no documents
(see `metrics`), the spam-filter rates of a class with no documents (ham
false-positive rate, spam recall, also at --target-fpr's cut-off); a
limit on one is "not reported". Documents of which none is labelled with
a class of the model are refused: an accuracy of 0 would blame the model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nbcli.defaults import DEFAULT_HAM_CUTOFF, DEFAULT_SPAM_CUTOFF
from nbcli.errors import NbcliError, ParameterError, listed
from nbcli.evaluate.decision import decided, positive_figures, probability


@dataclass
class EvalOptions:
    """How two-class models are judged as spam filters."""

    spam_class: str = "spam"
    spam_cutoff: float = DEFAULT_SPAM_CUTOFF
    ham_cutoff: float = DEFAULT_HAM_CUTOFF
    target_fpr: float | None = None
    calibration: bool = False  # add "calibration": Brier, ECE, reliability table (see `calibration`)
    target_unsure: float | None = None  # add the unsure band that leaves at most this share unsure


def report(
    true_labels: list[str],
    log_proba: np.ndarray,
    classes: list[str],
    options: EvalOptions | None = None,
    uncalibrated: np.ndarray | None = None,
    decision: dict | None = None,
) -> dict:
    """The eval report for documents with these true labels and
    log-posteriors (shape (n_docs, n_classes), columns in `classes` order).

    A model with two classes, one of them `options.spam_class`, also gets
    "spam_filter" (see `binary_metrics`), computed over the documents whose
    true class is one of the two. With options.calibration and the event
    model's raw log-posteriors `uncalibrated` (a calibrated model's), the
    calibration block also has "uncalibrated": the same figures and the
    log loss before the calibration map. Documents none of whose labels is
    one of `classes` are an NbcliError: there is nothing to judge (an
    accuracy of 0 would read as a model that got everything wrong).

    decision: a two-class model's decision threshold (meta "decision", see
    `fit.deciding`): the documents are decided by it instead of the argmax,
    and "decision" reports it with the positive class's precision, recall
    and F1 at it."""
    from nbcli.evaluate.metrics import classification_report

    options = options or EvalOptions()
    log_proba = np.asarray(log_proba, dtype=np.float64).reshape(len(true_labels), len(classes))
    index = {c: i for i, c in enumerate(classes)}
    rule = None if not decision else (classes.index(decision["positive"]), float(decision["threshold"]))
    best = decided(log_proba, rule) if len(true_labels) else np.zeros(0, dtype=np.int64)
    pred = [classes[i] for i in best.tolist()]
    rows = np.arange(len(true_labels))
    cols = np.array([index.get(t, 0) for t in true_labels], dtype=np.int64)
    known = np.array([t in index for t in true_labels], dtype=bool)
    if len(true_labels) and not known.any():
        raise ParameterError(
            "pairs",
            "no document's label is a class of the model: "
            "the documents are labelled {labels}, the classes are {classes}",
            hint="evaluate on documents of the model's classes (class folders named after them, or {pairs:CLASS=PATH})",
            labels=listed(sorted(set(true_labels)), 5),
            classes=listed(classes, 5),
        )
    log_p_true = np.where(known, log_proba[rows, cols] if len(rows) else np.zeros(0), np.nan)
    out = classification_report(list(true_labels), pred, list(classes), log_p_true)
    if decision:
        positive = classes.index(decision["positive"])
        out["decision"] = {
            "objective": decision["objective"],
            "positive": classes[positive],
            "threshold": probability(float(decision["threshold"])),
            "log_odds": float(decision["threshold"]),
            **positive_figures((cols == positive) & known, best == positive),
        }
    if options.calibration:
        from nbcli.evaluate.calibration import summary

        truth = np.where(known, cols, -1)
        out["calibration"] = summary(log_proba, truth)
        if uncalibrated is not None:
            raw = np.asarray(uncalibrated, dtype=np.float64).reshape(log_proba.shape)
            before = summary(raw, truth)
            before["log_loss"] = float(-raw[rows[known], cols[known]].mean()) if known.any() else None
            out["calibration"]["uncalibrated"] = before
    from nbcli.evaluate.binary import spam_index

    if spam_index(classes, options.spam_class) is not None:
        out["spam_filter"] = spam_filter_report(true_labels, log_proba, classes, options, known)
    return out


def spam_filter_report(true_labels, log_proba, classes, options: EvalOptions, known) -> dict:
    """The spam-filter figures; "verdicts" counts, per true class, the
    verdicts filter, serve and predict give these documents (the same
    `binary.verdict_codes` of the same probabilities), beside the
    argmax figures of the report."""
    from nbcli.evaluate import binary as bm

    s = bm.spam_index(classes, options.spam_class)
    if s is None:
        raise ValueError(f"a spam-filter report needs two classes, one of them {options.spam_class!r}")
    lp = log_proba[known]
    is_spam = np.array([t == options.spam_class for t in true_labels], dtype=bool)[known]
    log_odds = lp[:, s] - lp[:, 1 - s]
    codes, p_spam = bm.verdict_codes(lp, s, options.spam_cutoff, options.ham_cutoff)
    out = {
        "spam_class": options.spam_class,
        "ham_class": classes[1 - s],
        "auc": bm.roc_auc(log_odds, is_spam),
        "spam_cutoff": options.spam_cutoff,
        "ham_cutoff": options.ham_cutoff,
        **bm.at_cutoffs(p_spam, is_spam, options.spam_cutoff, options.ham_cutoff),
        "target_fpr": None,
        "verdicts": bm.verdict_counts(codes, is_spam, options.spam_class, classes[1 - s]),
    }
    if options.target_fpr is not None:
        out["target_fpr"] = bm.cutoff_for_fpr(log_odds, is_spam, options.target_fpr)
    # a rate of a class with no documents is undefined (None, "-" in the table), as the AUC is, not 0
    for rates in (out, out["target_fpr"] or {}):
        for key, documents in (("ham_fpr", ~is_spam), ("spam_recall", is_spam)):
            if key in rates and not documents.any():
                rates[key] = None
    if options.target_unsure is not None:
        from nbcli.evaluate.calibration import unsure_band

        out["target_unsure"] = unsure_band(log_odds, is_spam, options.target_unsure)
    return out


# -- named metrics, for limits and cross-validation ------------------------------

METRICS = {
    "accuracy": "share of documents classified right",
    "log_loss": "mean -log P(true class)",
    "macro_precision": "",
    "macro_recall": "",
    "macro_f1": "",
    "weighted_precision": "",
    "weighted_recall": "",
    "weighted_f1": "",
    "auc": "ROC AUC (two-class spam models)",
    "ham_fpr": "share of ham called spam at the cut-offs",
    "spam_recall": "share of spam called spam at the cut-offs",
    "unsure": "share of documents between the cut-offs",
    "decided_accuracy": "accuracy on the documents outside the cut-offs' unsure band",
    "target_spam_recall": "spam recall at the --target-fpr cut-off",
    "target_ham_fpr": "ham false-positive rate at the --target-fpr cut-off",
    "brier": "Brier score (with --calibration)",
    "ece": "expected calibration error, 15 bins (with --calibration)",
    "target_unsure_accuracy": "accuracy on the decided documents of the --target-unsure band",
}


def flat_metrics(rep: dict) -> dict[str, float]:
    """Every figure of a report by its METRICS name (those it has)."""
    out = {"accuracy": rep["accuracy"]}
    if rep.get("log_loss") is not None:
        out["log_loss"] = rep["log_loss"]
    for avg in ("macro", "weighted"):
        for key in ("precision", "recall", "f1"):
            out[f"{avg}_{key}"] = rep[f"{avg}_avg"][key]
    sf = rep.get("spam_filter")
    if sf:
        if sf["auc"] is not None:
            out["auc"] = sf["auc"]
        for key in ("ham_fpr", "spam_recall", "unsure", "decided_accuracy"):
            if sf.get(key) is not None:  # None: no documents of the class
                out[key] = sf[key]
        for key in ("spam_recall", "ham_fpr"):
            if sf.get("target_fpr") and sf["target_fpr"][key] is not None:
                out[f"target_{key}"] = sf["target_fpr"][key]
        if sf.get("target_unsure") and sf["target_unsure"]["decided_accuracy"] is not None:
            out["target_unsure_accuracy"] = sf["target_unsure"]["decided_accuracy"]
    cal = rep.get("calibration")
    if cal and cal.get("brier") is not None:
        out["brier"] = cal["brier"]
        if cal.get("ece") is not None:
            out["ece"] = cal["ece"]
    return out


def parse_limit(spec: str) -> tuple[str, float]:
    """'METRIC=VALUE' -> (metric, value)."""
    name, eq, value = spec.partition("=")
    name = name.strip()
    try:
        number = float(value)
    except ValueError:
        number = float("nan")
    if not eq or not np.isfinite(number):
        raise NbcliError(f"{spec!r} is not METRIC=VALUE", hint="e.g. accuracy=0.98")
    if name not in METRICS:
        raise NbcliError(f"{name!r} is not a metric", hint=f"use one of {', '.join(METRICS)}")
    return name, number


def check_limits(
    metrics: dict[str, float], fail_under: list[tuple[str, float]], fail_over: list[tuple[str, float]]
) -> ParameterError | None:
    """The first broken limit, as an error for the caller to raise (its
    text the one-line reason), or None. A metric under its fail_under value
    or over its fail_over value breaks it; a limit on a metric the report
    does not have is an error, raised here."""
    for limits, word, broken in (
        (fail_under, "under", lambda v, lim: v < lim),
        (fail_over, "over", lambda v, lim: v > lim),
    ):
        parameter = f"fail_{word}"
        for name, limit in limits:
            if name not in metrics:
                raise ParameterError(
                    parameter,
                    f"{{{parameter}}} {{metric}}: this evaluation does not report {{metric}}",
                    hint=(
                        "brier and ece need {calibration}, target_unsure_accuracy {target_unsure}"
                        if name in ("brier", "ece", "target_unsure_accuracy")
                        else "spam-filter metrics need a two-class model with a spam class (and a rate, documents of "
                        "its class); target_* need {target_fpr}"
                    ),
                    metric=name,
                )
            if broken(metrics[name], limit):
                return ParameterError(
                    parameter,
                    f"{{metric}} {{value:.6g}} is {word} {{limit:g}} ({{{parameter}}} {{metric}}={{limit:g}})",
                    metric=name,
                    value=metrics[name],
                    limit=limit,
                )
    return None


def figure(
    true_labels: list[str], log_proba: np.ndarray, classes: list[str], rep: dict, options: EvalOptions | None = None
) -> dict:
    """What `--plot` draws: with --calibration the reliability diagram,
    {"kind": "reliability", "bins": the reliability table, "ece", "title"};
    else for a spam model (see `report`) the ROC curve of the log-odds of
    spam, {"kind": "roc", "fpr", "tpr", "auc", "title"}; else the
    confusion matrix, {"kind": "confusion", "labels", "matrix", "title"}."""
    from nbcli.evaluate import binary as bm

    options = options or EvalOptions()
    cal = rep.get("calibration")
    if cal is not None:
        before = cal.get("uncalibrated")
        return {
            "kind": "reliability",
            "bins": cal["reliability"],
            "ece": cal["ece"],
            "title": f"reliability ({cal['documents']} documents)",
            "before": None if before is None else {"bins": before["reliability"], "ece": before["ece"]},
        }
    sf = rep.get("spam_filter")
    if sf is None:
        cm = rep["confusion_matrix"]
        return {
            "kind": "confusion",
            "labels": cm["labels"],
            "matrix": cm["matrix"],
            "title": f"confusion matrix ({rep['documents']} documents)",
        }
    s = classes.index(sf["spam_class"])
    known = np.array([t in classes for t in true_labels], dtype=bool)
    lp = np.asarray(log_proba)[known]
    is_spam = np.array([t == sf["spam_class"] for t in true_labels], dtype=bool)[known]
    fpr, tpr = bm.roc_curve(lp[:, s] - lp[:, 1 - s], is_spam)
    return {
        "kind": "roc",
        "fpr": fpr.tolist(),
        "tpr": tpr.tolist(),
        "auc": sf["auc"],
        "title": f"ROC: {sf['spam_class']} against {sf['ham_class']}",
    }
