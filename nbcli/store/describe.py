"""What `nbcli info` shows of a model (`describe`), as a JSON-ready dict;
`cli.output.render_info` turns it into text. Here, not on Classifier: it
names the file format's version and the model's identity.
"""

from __future__ import annotations

import numpy as np

from nbcli.store.codec import FORMAT_VERSION
from nbcli.store.payload import format_version, is_table, model_id


def _describe_calibration(classifier) -> dict:
    """info's "calibration": {"method", "map" (its parameters in words),
    "documents" (held-out, fitted on), "source", "model_documents" (the
    model's then), "stale", "keeps_ranking", "effect" (on the decisions, in
    words)}; without one, {"method": None, "reason"}."""
    from nbcli.nb.calibrators import calibration_stale

    fitted = classifier.meta.get("calibration") or {}
    cal = classifier.calibration
    if cal is None:
        reason = fitted.get("skipped") or fitted.get("dropped")
        return {"method": None, "reason": reason}
    return {
        "method": cal.method,
        "map": cal.describe(),
        "documents": cal.documents,
        "source": fitted.get("source"),
        "model_documents": fitted.get("model_documents"),
        "stale": calibration_stale(classifier),
        "keeps_ranking": cal.keeps_ranking,
        "effect": _calibration_effect(cal),
    }


def describe_decision(classifier) -> dict:
    """info's "decision" (only for a model trained with `--decide f1|balanced`,
    so every other model's info is as before): the meta's decision
    (`fit.deciding`), its threshold also as a probability, and "stale"."""
    from nbcli.nb.calibrators import decision_note

    decision = classifier.meta["decision"]
    t = float(decision["threshold"])
    probability = 1.0 / (1.0 + np.exp(-t)) if t > -700 else 0.0
    return {**decision, "probability": float(probability), "stale": decision_note(classifier, "") is not None}


def _em_info(em) -> dict | None:
    """info's "em": how the EM run went (its objective: first and last)."""
    if not isinstance(em, dict):
        return None
    objective = em.get("objective") or []
    return {
        **{k: v for k, v in em.items() if k != "objective"},
        "objective_first": objective[0] if objective else None,
        "objective_last": objective[-1] if objective else None,
    }


def _calibration_effect(cal) -> str:
    """What a map does to the model's decisions, in words, for info."""
    if cal.not_increasing() is not None:  # fitted before nbcli refused such maps
        what = "reverses the model's ranking" if cal.method == "platt" else "gives every document the same probability"
        return f"{what}: refit it (nbcli calibrate MODEL HELDOUT)"
    if cal.keeps_ranking:
        return "keeps the ranking"
    if cal.method == "isotonic":
        return "may tie documents the model ranked apart"
    if cal.method == "temperature":
        return "keeps each document's predicted class"
    return "may change the predicted class of some documents"


def _rows(model, c: int):
    """Class c's rows: a whole number, or for soft clusters (expected
    counts) their expected number to 0.01."""
    count = model.class_count[c]
    return round(float(count), 2) if getattr(model, "expected", False) else int(count)


def _describe_table(classifier) -> dict:
    """info of a table model: its columns (name, kind) and, per class, each
    column's summary (`TableModel.summary`)."""
    model = classifier.model
    prior = np.exp(model.log_prior)
    return {
        "format_version": FORMAT_VERSION,
        "kind": "table",
        "nbcli_version": classifier.meta.get("nbcli_version"),
        "created": classifier.meta.get("created"),
        "documents": classifier.meta.get("n_documents"),
        "model_id": model_id(classifier),
        "calibration": _describe_calibration(classifier),
        "columns": [{"name": n, "kind": k} for n, k in zip(model.names, model.kinds)],
        "classes": [
            {"class": name, "documents": _rows(model, c), "prior": float(prior[c])}
            for c, name in enumerate(classifier.classes)
        ],
        "settings": model.settings_dict(),
        "table": classifier.meta.get("table", {}),
        "clusters": classifier.meta.get("clusters"),
        "summary": model.summary(),
        **({"decision": describe_decision(classifier)} if classifier.meta.get("decision") else {}),
    }


def describe(classifier, top: int = 10) -> dict:
    """What `nbcli info` shows of a Classifier, as a JSON-ready dict (here,
    not on Classifier: it names the file format's version)."""
    from nbcli.nb.record import ENTRY_BYTES

    if is_table(classifier):
        return _describe_table(classifier)
    model = classifier.model
    counts = np.asarray(model.feature_count, dtype=np.float64)
    prior = np.exp(model.log_prior)
    top_terms = {}
    if top > 0 and len(classifier.vocabulary):
        odds = model.term_log_odds()
        k = min(top, odds.shape[1])
        for c, name in enumerate(model.classes):  # a mixture model: its components
            best = np.argpartition(-odds[c], k - 1)[:k]
            best = best[np.lexsort((best, -odds[c][best]))]
            best = best[odds[c][best] > 0]
            terms = classifier.vocabulary.terms(best)
            top_terms[name] = [{"term": t, "log_odds": float(odds[c][j])} for t, j in zip(terms, best.tolist())]
    return {
        "format_version": format_version(model, classifier.calibration is not None),
        "kind": model.kind,
        "transforms": [
            k.replace("_", "-") for k in ("tf_log", "idf", "length_norm", "weight_norm") if model.spec().get(k)
        ],
        "nbcli_version": classifier.meta.get("nbcli_version"),
        "created": classifier.meta.get("created"),
        "documents": classifier.meta.get("n_documents"),
        "vocabulary_size": len(classifier.vocabulary),
        "model_id": model_id(classifier),
        "record": None
        if classifier.record is None
        else {
            "entries": len(classifier.record),
            "per_class": dict(
                zip(classifier.classes, classifier.record.documents_per_class(len(classifier.classes)).tolist())
            ),
            "bytes": len(classifier.record) * ENTRY_BYTES,
        },
        "calibration": _describe_calibration(classifier),
        "em": _em_info(classifier.meta.get("em")),
        "components": classifier.meta.get("components"),
        "clusters": classifier.meta.get("clusters"),
        "updated": classifier.meta.get("updated"),
        "pruned": classifier.meta.get("pruned"),
        "classes": [
            {
                "class": name,
                "documents": int(round(float(model.class_count[c]))),  # EM's are expected counts: the nearest
                "tokens": int(round(float(counts[c].sum()))),
                "prior": float(prior[c]),
            }
            for c, name in enumerate(model.classes)
        ],
        "smoothing": {k: v for k, v in model.spec().items() if k not in ("kind", "unknown")},
        "analyzer": classifier.analyzer_options.to_dict(),
        "options": classifier.meta.get("options", {}),
        "top_terms": top_terms,
        **({"decision": describe_decision(classifier)} if classifier.meta.get("decision") else {}),
    }
