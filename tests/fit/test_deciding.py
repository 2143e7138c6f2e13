"""`train --decide` in the library (fit/deciding.py, fit/training.py): the
stored threshold is a brute-force search's over the very held-out scores
the calibration map is fitted on, which class is positive, and the
refusals (several classes, an unknown --positive)."""

import numpy as np
import pytest

from nbcli.errors import NbcliError
from nbcli.fit.count_table import count_corpus
from nbcli.fit.deciding import check_decide, positive_class
from nbcli.fit.settings import TrainOptions
from nbcli.fit.training import heldout_of, sample_size, train
from nbcli.text.analyzer import Analyzer, AnalyzerOptions
from nbcli.text.sources import Document

from conftest import brute_force_threshold, make_docs, make_skewed_docs


def _docs(texts, labels):
    return [Document(str(i), lab, t) for i, (t, lab) in enumerate(zip(texts, labels))]


def _heldout(docs, decide="f1"):
    """The raw held-out scores and truths training computes for these docs."""
    options, analyzer_options = TrainOptions(), AnalyzerOptions()
    table = count_corpus(
        docs,
        Analyzer(analyzer_options),
        options.needs_doc_freq,
        None,
        options.first_pass_transform,
        sample_size("default", decide),
    )
    return heldout_of(table, table.finish(), analyzer_options, options), table


@pytest.mark.parametrize(("objective", "calibrate"), [("f1", "default"), ("balanced", "default"), ("f1", None)])
def test_the_stored_threshold_is_a_brute_force_search_over_the_held_out_scores(objective, calibrate):
    docs = _docs(*make_skewed_docs())
    clf = train(docs, AnalyzerOptions(), TrainOptions(), calibrate=calibrate, strict=False, decide=objective)
    decision = clf.meta["decision"]
    assert decision["objective"] == objective and decision["positive"] == "space"
    (scores, truth), _ = _heldout(docs, objective)
    assert decision["documents"] == len(truth) == 600  # a small corpus is held out whole: no weights
    assert (calibrate is None) == (clf.calibration is None)
    mapped = scores if clf.calibration is None else clf.calibration.apply(scores)
    positive = clf.classes.index("space")
    log_odds = mapped[:, positive] - mapped[:, 1 - positive]
    want, _ = brute_force_threshold(log_odds, truth == positive, objective)
    assert decision["threshold"] == pytest.approx(want, abs=1e-12)
    assert clf.decision_rule() == (positive, decision["threshold"])


def test_the_default_decision_leaves_training_as_it_was():
    docs = _docs(*make_skewed_docs())
    plain = train(docs, AnalyzerOptions(), TrainOptions(), calibrate="default", strict=False)
    assert "decision" not in plain.meta and plain.decision_rule() is None
    assert sample_size("default") == sample_size("default", "accuracy")


def test_a_sampled_corpus_weighs_each_class_by_its_documents_per_held_out_one(monkeypatch):
    """With fewer held-out documents than the corpus has, the threshold is
    the brute-force search's over the sample with each class weighed back
    to the corpus's counts."""
    import nbcli.fit.training as training

    monkeypatch.setattr(training, "DECIDE_SAMPLE_PER_CLASS", 150)
    docs = _docs(*make_skewed_docs())
    clf = train(docs, AnalyzerOptions(), TrainOptions(), calibrate="default", strict=False, decide="f1")
    (scores, truth), table = _heldout(docs)
    assert len(truth) < 600 and clf.meta["decision"]["documents"] == len(truth)
    mapped = clf.calibration.apply(scores)
    positive = clf.classes.index("space")
    held = np.bincount(truth, minlength=2)
    weights = (clf.model.class_count / held)[truth]
    want, _ = brute_force_threshold(mapped[:, positive] - mapped[:, 1 - positive], truth == positive, "f1", weights)
    assert clf.meta["decision"]["threshold"] == pytest.approx(want, abs=1e-12)


def test_which_class_is_positive():
    assert positive_class(["code", "space"], [560, 40]) == 1
    assert positive_class(["a", "b"], [10, 30]) == 0
    assert positive_class(["a", "b"], [20, 20]) == 1  # a tie: the second class
    assert positive_class(["ham", "spam"], [10, 900]) == 1  # spam, though it is the common class
    assert positive_class(["ham", "spam"], [10, 900], positive="ham") == 0


def test_refusals():
    texts, labels = make_docs(120, classes=["code", "food", "space"])
    with pytest.raises(NbcliError, match="needs a two-class model, and this one has 3 classes"):
        train(_docs(texts, labels), AnalyzerOptions(), TrainOptions(), calibrate="default", strict=False, decide="f1")
    with pytest.raises(NbcliError, match="is not a class of the model"):
        check_decide("f1", ["code", "space"], positive="food")
    with pytest.raises(NbcliError, match="goes with"):
        check_decide("accuracy", ["code", "space"], positive="code")
