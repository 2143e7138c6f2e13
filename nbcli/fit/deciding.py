"""`train --decide`: the decision threshold of a two-class model, chosen on
the same held-out scores its calibration map is fitted on.

What a model stores. meta["decision"] = {"objective": "f1" or "balanced",
"positive": the positive class's name, "threshold": t on the positive
class's log-odds (calibrated when the model is; see `evaluate.decision`),
"documents": the held-out documents it was chosen on, "source":
"cross-validation" or the held-out documents' paths, "model_documents":
the model's documents then}. A model without it (every model trained with
the default `--decide accuracy`, and every model written before --decide)
decides by the argmax, exactly as before. The threshold lives in the meta,
so `learn` and `forget` keep it as they keep the rest of the meta, and it is
stale by the calibration's rule (`calibrators.calibration_note`: the
model's documents changed by 10% or more since); `nbcli calibrate` refits
it with the map, for the objective stored here.

Decisions:
- Which class is positive: the class named `spam` when there is one (a
  mail model: spam is what the filter looks for); else the class with fewer
  training documents (an "is this about X?" model: X is the rare class); on
  a tie, the second class of the model (in sorted order). `--positive
  CLASS` names it instead.
- More than two classes: refused with one line (`check_decide`): a
  threshold needs one class against the rest, which such a model does not
  have; train one class against the rest (two class folders) instead.
- Models trained from a corpus only: `--unlabeled` (EM would rerun per
  fold) and `--from-model` (no corpus to cross-validate) refuse it with one
  line. A table model (`--features`) chooses its threshold on the 5-fold
  scores its map is fitted on (`table_training.calibrate_rows`).
- Not calibrated (`--calibrate none`, or a default map skipped): the
  threshold is chosen on the cross-validated raw posteriors (their
  log-odds) instead, the same held-out documents a map would be fitted on.
- The held-out sample: calibration alone keeps at most 2,500 documents per
  class; --decide keeps up to 20,000 (`training.DECIDE_SAMPLE_PER_CLASS`),
  since a threshold for a rare class is only as good as the common class's
  scores around it (on the skewed 20 Newsgroups tasks of `make
  bench-decide`, 2,500 negatives of 7,500 left the threshold too high and
  --decide f1 below scikit-learn's TunedThresholdClassifierCV on 5 of 8
  tasks; the whole corpus, 3 of 8). The map is then fitted on that sample
  too. Past the cap each class's documents weigh (its documents) / (its
  held-out documents), which keeps the positive share the corpus's (F1
  depends on it). `nbcli calibrate`'s held-out documents weigh 1.
"""

from __future__ import annotations

import numpy as np

from nbcli.errors import ParameterError
from nbcli.evaluate.decision import OBJECTIVES, choose_threshold
from nbcli.nb.calibrators import documents_per_class


def check_decide(objective: str, classes: list[str], positive: str | None = None) -> None:
    """Refuse an objective nbcli cannot decide by for these classes."""
    if objective not in OBJECTIVES:
        raise ParameterError(
            "decide", "{decide} {value!r} is not one of {choices}", value=objective, choices=", ".join(OBJECTIVES)
        )
    if objective == "accuracy":
        if positive is not None:
            raise ParameterError("positive", "{positive} goes with {decide:f1} or {decide:balanced}")
        return
    if len(classes) != 2:
        raise ParameterError(
            "decide",
            "{decide} {value} needs a two-class model, and this one has {n} classes",
            hint="train one class against the rest (two classes), or use {decide:accuracy}",
            value=objective,
            n=len(classes),
        )
    if positive is not None and positive not in classes:
        raise ParameterError(
            "positive",
            "{positive} {value!r} is not a class of the model ({classes})",
            value=positive,
            classes=", ".join(classes),
        )


def refuse_too_few(problem: str | None, strict: bool, few: str | None, what: str) -> None:
    """Refuse held-out `what` (documents, rows) too few to cross-validate:
    for a calibration method asked for (`problem` with strict), or for a
    decision threshold (`few`, the problem at two per class)."""
    if problem is not None and strict:
        raise ParameterError(
            "calibrate",
            "cannot calibrate by cross-validation: {problem}",
            hint="give more " + what + ", or {calibrate:none}",
            problem=problem,
        )
    if few is not None:
        raise ParameterError(
            "decide",
            "cannot choose a decision threshold by cross-validation: {problem}",
            hint="give more " + what + ", or {decide:accuracy}",
            problem=few,
        )


def positive_class(classes: list[str], class_count, positive: str | None = None) -> int:
    """The positive class's index (see the module docstring)."""
    if positive is not None:
        return classes.index(positive)
    if "spam" in classes:
        return classes.index("spam")
    counts = np.asarray(class_count, dtype=np.float64)
    return 0 if counts[0] < counts[1] else 1


def decision_meta(
    objective: str,
    classes: list[str],
    positive: int,
    log_proba: np.ndarray,
    truth: np.ndarray,
    source: str,
    model_documents: int,
    class_count=None,
    class_documents=None,
) -> dict:
    """meta["decision"] for held-out log-probabilities (n, 2) (calibrated
    when the model is) and their true class indices; class_count: the
    corpus's documents per class, to weigh a sample (None: weights 1)."""
    truth = np.asarray(truth, dtype=np.int64)
    log_proba = np.asarray(log_proba, dtype=np.float64)
    weights = None
    if class_count is not None:
        held = np.bincount(truth, minlength=2).astype(np.float64)
        per_class = np.divide(np.asarray(class_count, dtype=np.float64), held, out=np.ones(2), where=held > 0)
        weights = per_class[truth]
    scores = log_proba[:, positive] - log_proba[:, 1 - positive]
    threshold, _ = choose_threshold(scores, truth == positive, objective, weights)
    return {
        "objective": objective,
        "positive": classes[positive],
        "threshold": threshold,
        "documents": int(len(truth)),
        "source": source,
        "model_documents": int(model_documents),
        **({} if class_documents is None else {"class_documents": documents_per_class(class_documents)}),
    }
