"""The Naive Bayes math against hand-computed cases and scikit-learn."""

import numpy as np
import pytest
from sklearn.naive_bayes import MultinomialNB as SkMultinomialNB

from nbcli.errors import NbcliError
from nbcli.fit.settings import TrainOptions
from nbcli.fit.training import train
from nbcli.nb.event_models import MultinomialNB
from nbcli.text.analyzer import Analyzer, AnalyzerOptions
from nbcli.text.sources import Document

from conftest import make_docs
from vectorizer import Vectorizer

# The lecture notes' example: two classes with word distributions over
# dog, cat, tulip, rose.
ANIMALS = ["dog cat dog", "cat dog"]  # dog 3, cat 2
FLOWERS = ["tulip rose", "rose rose tulip"]  # tulip 2, rose 3


def _train(texts, labels, **options):
    docs = [Document(str(i), lab, t) for i, (t, lab) in enumerate(zip(texts, labels))]
    return train(docs, AnalyzerOptions(), TrainOptions(**options))


def test_laplace_tables_are_the_counts_plus_one_fractions():
    clf = _train(ANIMALS + FLOWERS, ["animal"] * 2 + ["flower"] * 2)
    col = {t: clf.vocabulary.index_of(t) for t in ["dog", "cat", "tulip", "rose"]}
    theta = np.exp(clf.model.log_theta)
    expected = {
        "animal": {"dog": 4 / 9, "cat": 3 / 9, "tulip": 1 / 9, "rose": 1 / 9},
        "flower": {"dog": 1 / 9, "cat": 1 / 9, "tulip": 3 / 9, "rose": 4 / 9},
    }
    for c, name in enumerate(clf.classes):
        for term, p in expected[name].items():
            assert theta[c, col[term]] == pytest.approx(p, rel=1e-12)
    assert np.exp(clf.model.log_prior) == pytest.approx([0.5, 0.5])
    # P(animal | "dog dog tulip") = (4/9)^2 (1/9) / ((4/9)^2 (1/9) + (1/9)^2 (3/9)) = 16/19
    p = np.exp(clf.log_proba(["dog dog tulip", "dog rose"]))
    assert p[0, 0] == pytest.approx(16 / 19, rel=1e-12)
    assert p[1] == pytest.approx([0.5, 0.5], rel=1e-12)


def test_alpha_is_the_pseudo_count():
    clf = _train(ANIMALS + FLOWERS, ["animal"] * 2 + ["flower"] * 2, alpha=0.5)
    theta = np.exp(clf.model.log_theta)
    dog = clf.vocabulary.index_of("dog")
    assert theta[0, dog] == pytest.approx(3.5 / (5 + 0.5 * 4))
    assert theta[1, dog] == pytest.approx(0.5 / (5 + 0.5 * 4))


@pytest.mark.parametrize("alpha", [1.0, 0.1, 1e-3, 1e-8, 5.0])
def test_probabilities_agree_with_scikit_learn(alpha):
    texts, labels = make_docs(1500, seed=7)
    test_texts, _ = make_docs(300, seed=8)
    vec = Vectorizer()
    X = vec.fit_transform(texts)
    ours = MultinomialNB(sorted(set(labels)), *_counts(X, labels), alpha=alpha)
    sk = SkMultinomialNB(alpha=alpha).fit(X, labels)
    T = vec.transform(test_texts)
    assert np.abs(np.exp(ours.predict_log_proba(T)) - sk.predict_proba(T)).max() < 1e-9
    assert np.abs(ours.log_theta - sk.feature_log_prob_).max() < 1e-9


def _counts(X, labels):
    classes = sorted(set(labels))
    y = np.array([classes.index(lab) for lab in labels])
    Y = np.eye(len(classes))[y]
    return Y.sum(axis=0), np.asarray(Y.T @ X)


def test_log_space_survives_long_documents():
    clf = _train(ANIMALS + FLOWERS, ["animal"] * 2 + ["flower"] * 2)
    huge = " ".join(["dog"] * 20000 + ["rose"] * 19999)
    lp = clf.log_proba([huge])
    assert np.isfinite(lp).all()
    p = np.exp(lp[0])
    assert p.sum() == pytest.approx(1.0) and p[0] > 0.5  # one more dog than rose


def test_bad_alpha_is_refused():
    for alpha in [0.0, -1.0, float("nan"), float("inf")]:
        with pytest.raises(NbcliError, match="^alpha must be a positive number"):  # the parameter, not the flag
            _train(ANIMALS + FLOWERS, ["a", "a", "f", "f"], alpha=alpha)


def test_training_and_cross_validation_take_complements_sums_from_one_place():
    """Complement's --tf-log / --length-norm tables come from per-class sums
    of the transformed documents: `nbcli train` adds them up in a second
    reading, `eval --cv` per fold from the kept counts. Both get them from
    EventModel.class_sums, which matches the sums done by hand."""
    from nbcli.fit import crossval
    from nbcli.fit.training import fold_classifier

    texts, labels = make_docs(240, seed=9)
    docs = [Document(f"d{i}", lab, t.encode()) for i, (t, lab) in enumerate(zip(texts, labels))]
    analyzer_options = AnalyzerOptions()
    options = TrainOptions(kind="complement", tf_log=True, idf=True, length_norm=True)

    def by_hand(clf, part):
        X = clf.model.transform(clf.counts([d.data for d in part]))
        dense = np.zeros(X.shape)
        for i in range(X.shape[0]):
            cols = X.indices[X.indptr[i] : X.indptr[i + 1]]
            dense[i, cols] += X.data[X.indptr[i] : X.indptr[i + 1]]
        y = np.array([clf.classes.index(d.label) for d in part])
        return np.array([dense[y == c].sum(axis=0) for c in range(len(clf.classes))])

    trained = train(docs, analyzer_options, options)
    y = np.array([trained.classes.index(d.label) for d in docs])
    one_call = trained.model.class_sums(trained.counts([d.data for d in docs]), y)
    assert trained.model.fit_count == pytest.approx(one_call, rel=1e-12)  # train adds batch by batch
    assert one_call == pytest.approx(by_hand(trained, docs), rel=1e-12)

    corpus = crossval.analyse_corpus(docs, Analyzer(analyzer_options))
    fold = crossval.stratified_folds(corpus.y, 4, seed=1)
    counts = crossval.FoldCounts(corpus, fold, 4, options.needs_doc_freq)
    for f in (0, 3):
        part = [d for d, k in zip(docs, fold) if k != f]
        got = fold_classifier(counts, f, analyzer_options, options)
        assert got.model.fit_count == pytest.approx(by_hand(got, part), rel=1e-12)
        assert got.model.fit_count == pytest.approx(train(part, analyzer_options, options).model.fit_count, rel=1e-12)
