"""Training (fit/training.py): documents to a Classifier, the fold models
of cross-validation, `train --from-model` (refit) and the checks before any
document is read."""

from __future__ import annotations

import numpy as np
import pytest

from nbcli.errors import NbcliError
from nbcli.evaluate.report import EvalOptions, report
from nbcli.fit import crossval
from nbcli.fit.settings import TrainOptions
from nbcli.fit.training import (
    calibration_choice,
    check_trainable,
    fold_classifier,
    refit,
    score_fold,
    train,
)
from nbcli.fit.training_options import training_options
from nbcli.text.analyzer import Analyzer, AnalyzerOptions
from nbcli.text.sources import Document

from conftest import make_docs

PAIRS = [
    ("apple bread cider", "ham"),
    ("apple apple dough", "ham"),
    ("fjord grape honey", "spam"),
    ("grape igloo grape", "spam"),
]
PROBE = ["apple grape", "honey zebra", "dough dough bread"]


def docs_of(pairs):
    return [Document(f"d{i}", label, text, "text") for i, (text, label) in enumerate(pairs)]


def trained(pairs=PAIRS, **fields):
    analyzer_options, options = training_options(**fields)
    return train(docs_of(pairs), analyzer_options, options)


def test_training_counts_each_class_and_term_and_records_the_options():
    model = trained(alpha=0.5)
    assert model.classes == ["ham", "spam"]
    assert model.model.class_count.tolist() == [2, 2]
    terms = model.vocabulary.terms(np.arange(len(model.vocabulary)))
    grape = terms.index("grape")
    assert model.model.feature_count[:, grape].tolist() == [0, 3]
    assert model.meta["n_documents"] == 4 and model.meta["options"]["alpha"] == 0.5
    assert len(model.record) == 4  # the documents it learned, for learn/forget
    assert model.log_proba(["grape grape", "apple dough"]).argmax(axis=1).tolist() == [1, 0]


def test_training_refuses_a_corpus_it_cannot_build_a_model_of():
    with pytest.raises(NbcliError, match="only one class"):
        trained([("apple", "ham"), ("bread", "ham")])
    with pytest.raises(NbcliError, match="no documents"):
        trained([])
    with pytest.raises(NbcliError, match="no terms"):
        trained([("a", "ham"), ("b", "spam")])  # tokens are two or more word characters


@pytest.mark.parametrize("fields", [{"alpha": 0.1}, {"prior": "ham=0.2,spam=0.8"}, {"estimate": "map", "alpha": 2.0}])
def test_refit_with_other_options_is_training_the_corpus_with_them(fields):
    old = trained(alpha=1.0)
    _, options = training_options(base_kind=old.model.kind, **fields)
    new = refit(old, options, "old.nb")
    want = train(docs_of(PAIRS), *training_options(**fields))
    assert new.meta["from_model"] == "old.nb"
    np.testing.assert_allclose(new.log_proba(PROBE), want.log_proba(PROBE), rtol=0, atol=1e-12)


def test_refit_cannot_select_terms_without_document_frequencies():
    old = trained()  # multinomial: no document frequencies kept
    _, options = training_options(base_kind=old.model.kind, select=2)
    with pytest.raises(NbcliError, match="needs document frequencies, and these counts have none"):
        refit(old, options)


def test_options_that_read_the_corpus_twice_refuse_a_stream_read_once():
    _, options = training_options(kind="complement", tf_log=True, idf=True)
    with pytest.raises(NbcliError, match="read the corpus twice"):
        check_trainable(iter(docs_of(PAIRS)), options)
    check_trainable(docs_of(PAIRS), options)  # a list can be read twice


def test_calibration_choice():
    _, plain = training_options()
    _, twice = training_options(kind="complement", length_norm=True, min_df=2)
    assert calibration_choice("none", plain) == (None, True, None)
    assert calibration_choice(None, plain) == ("default", False, None)  # the default, where it can be fitted
    method, strict, note = calibration_choice(None, twice)
    assert (method, strict) == (None, False) and "read the corpus twice" in note
    assert calibration_choice("isotonic", plain) == ("isotonic", True, None)
    with pytest.raises(NbcliError, match="not one of"):
        calibration_choice("magic", plain)
    with pytest.raises(NbcliError, match="cannot cross-validate"):
        calibration_choice("isotonic", twice)


def test_training_with_calibration_fits_a_map_on_held_out_scores():
    texts, labels = make_docs(200, seed=2)
    docs = [Document(f"d{i}", lab, t) for i, (t, lab) in enumerate(zip(texts, labels))]
    analyzer_options, options = training_options()
    model = train(docs, analyzer_options, options, calibrate="default")
    assert model.calibration is not None
    per_class = [int(n) for n in model.model.class_count]  # (the staleness rule's: moves count)
    assert model.meta["calibration"] == {
        "source": "cross-validation",
        "model_documents": 200,
        "class_documents": per_class,
    }
    assert sum(per_class) == 200
    with pytest.raises(NbcliError, match="cannot calibrate by cross-validation"):
        train(docs_of(PAIRS[:3]), analyzer_options, options, calibrate="platt")  # one spam document


@pytest.mark.parametrize(
    "options",
    [
        TrainOptions(alpha=0.5),
        TrainOptions(alpha=0.01, unknown="smooth", min_df=2, prior="uniform"),
        TrainOptions(max_features=300),
        TrainOptions(kind="bernoulli", alpha=0.5, select=200),
        TrainOptions(kind="complement", tf_log=True, idf=True, length_norm=True, weight_norm=True),
    ],
    ids=["multinomial", "smooth-min-df", "max-features", "bernoulli-select", "complement-transforms"],
)
def test_a_fold_model_is_the_model_trained_on_the_other_folds(options):
    texts, labels = make_docs(240, seed=9)
    docs = [Document(f"d{i}", lab, t.encode()) for i, (t, lab) in enumerate(zip(texts, labels))]
    analyzer_options = AnalyzerOptions()
    corpus = crossval.analyse_corpus(docs, Analyzer(analyzer_options))
    fold = crossval.stratified_folds(corpus.y, 4, seed=1)
    counts = crossval.FoldCounts(corpus, fold, 4, options.needs_doc_freq)
    for f in (0, 3):
        got = fold_classifier(counts, f, analyzer_options, options)
        want = train([d for d, k in zip(docs, fold) if k != f], analyzer_options, options)
        assert got.classes == want.classes
        assert (got.vocabulary.hashes == want.vocabulary.hashes).all()
        assert (got.model.feature_count == want.model.feature_count).all()
        assert (got.model.class_count == want.model.class_count).all()
        test = [d for d, k in zip(docs, fold) if k == f]
        report = score_fold(counts, f, analyzer_options, options, EvalOptions())
        direct = evaluated(want, test)
        assert report.pop("log_loss") == pytest.approx(direct.pop("log_loss"), rel=1e-12)  # sums in another order
        assert report == direct


def test_calibration_errors_name_the_parameter_and_the_cli_says_the_flag():
    from nbcli.cli.options import in_flag_terms
    from nbcli.errors import ParameterError

    _, plain = training_options()
    with pytest.raises(ParameterError) as caught:
        calibration_choice("magic", plain)
    assert caught.value.parameter == "calibrate"
    assert str(caught.value) == "calibrate 'magic' is not one of temperature, platt, isotonic, none"
    assert str(in_flag_terms(caught.value)) == "--calibrate 'magic' is not one of temperature, platt, isotonic, none"
    with pytest.raises(ParameterError) as caught:
        train(docs_of(PAIRS[:3]), *training_options(), calibrate="platt")
    assert str(in_flag_terms(caught.value)).endswith("; give more documents, or --calibrate none")
    with pytest.raises(ParameterError) as caught:
        trained([("a", "ham"), ("b", "spam")])
    assert str(in_flag_terms(caught.value)).endswith("check the documents, --token-pattern and --stop-words")


def evaluated(classifier, docs) -> dict:
    """The metrics `nbcli eval` reports of `classifier` on labelled documents."""
    labels, log_proba = classifier.score_labelled(iter(docs))
    return report(labels, log_proba, classifier.classes, decision=classifier.meta.get("decision"))
