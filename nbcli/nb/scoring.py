"""How a classifier of documents scores a batch: `TextScoring`, what
`classifier.Classifier` (its model over its whole vocabulary) and
`overlay.JournalView` (a model read through its journal, scored over a
batch's own terms) share. Each says what scores a batch (`scoring`: the
documents' counts, the event model and the vocabulary of their columns);
this turns that into calibrated log-posteriors and explanations.

A module of its own, low in the package, so that the view need not import
the classifier (tests/test_imports.py bounds the longest import chain).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nbcli.nb.classifier_base import BaseClassifier


class TextScoring(BaseClassifier):
    """A classifier of documents: `scoring` gives a batch's counts, the event
    model and the vocabulary that score it; `score`, `check_ready` and the
    explanations follow from it."""

    vocabulary: Any  # a `vectorize.Vocabulary`; a view's: the number of its terms

    def scoring(self, docs: list, kinds: list[str] | None = None):
        """(counts X of the documents, the event model and the vocabulary
        of X's columns)."""
        raise NotImplementedError

    def check_ready(self, name: str = "the model") -> None:
        """Refuse (NbcliError) a model that cannot classify yet: one learning
        from nothing that has no documents of some class (its fitted prior
        for that class is zero)."""
        from nbcli.errors import NbcliError

        empty = [c for c, n in zip(self.classes, self.model.class_count) if n == 0]
        if empty:
            raise NbcliError(
                f"{name} has no documents of class {', '.join(empty)} yet, so it cannot classify",
                hint=f"learn some: nbcli learn {name} --class {empty[0]} FILE...",
            )

    def score(self, docs: list, kinds: list[str] | None = None, explain: int = 0):
        """`log_proba`, or with explain > 0 (log_proba, `explain`), from one
        analysis of the documents. Calibrated if the model is; the
        explanations are of the event model's own (raw) log-odds."""
        X, model, vocabulary = self.scoring(docs, kinds)
        log_proba = model.predict_log_proba(X)
        if self.calibration is not None:
            log_proba = self.calibration.apply(log_proba)
        return (log_proba, self._explanations(X, explain, model, vocabulary)) if explain else log_proba

    def _explanations(self, X, top: int, model, vocabulary) -> list[dict]:
        """Per document, the `top` terms that pushed it most toward its class
        against the runner-up (see `explain.explain`), as JSON-ready dicts:
        {"versus", "log_odds", "prior", "unknown": {"count", "contribution"},
        "terms": [{"term", "count", "contribution"}], "unit": `explain.unit`}."""
        from nbcli.nb.explain import explain, unit

        out = []
        for e in explain(model, X, top):
            names = vocabulary.terms(np.array([t[0] for t in e["terms"]], dtype=np.int64))
            out.append(
                {
                    "versus": self.classes[e["versus"]],
                    "log_odds": e["log_odds"],
                    "prior": e["prior"],
                    "unknown": {"count": e["unknown"][0], "contribution": e["unknown"][1]},
                    "terms": [{"term": n, "count": t[1], "contribution": t[2]} for n, t in zip(names, e["terms"])],
                    "unit": unit(self.calibration is not None),
                }
            )
        return out
