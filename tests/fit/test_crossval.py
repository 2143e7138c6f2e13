"""Cross-validation: stratified, seeded folds; fold models equal to models
trained on the other folds; `nbcli eval --cv`."""

import json

import numpy as np
import pytest

from nbcli.fit import crossval

from conftest import make_docs, run


def test_folds_are_stratified_and_reproducible():
    y = np.repeat([0, 1, 2], [50, 23, 7])
    fold = crossval.stratified_folds(y, 5, seed=4)
    assert (fold == crossval.stratified_folds(y, 5, seed=4)).all()
    assert (fold != crossval.stratified_folds(y, 5, seed=5)).any()
    for c in range(3):
        per_fold = np.bincount(fold[y == c], minlength=5)
        assert per_fold.max() - per_fold.min() <= 1
    sizes = np.bincount(fold, minlength=5)
    assert sizes.max() - sizes.min() <= 1


@pytest.fixture
def corpus_dir(make_class_folders):
    texts, labels = make_docs(300, seed=3, classes=["ham", "spam"])
    return make_class_folders(texts, labels)


def test_eval_cv_json_and_parallel_folds(corpus_dir):
    result = run(["eval", "--cv", "5", corpus_dir, "--json", "-j", "1", "--alpha", "0.3", "--seed", "7"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert (
        report["folds"] == 5 and report["seed"] == 7 and report["documents"] == 300 and len(report["fold_reports"]) == 5
    )
    accuracies = [r["accuracy"] for r in report["fold_reports"]]
    assert report["metrics"]["accuracy"] == pytest.approx({"mean": np.mean(accuracies), "std": np.std(accuracies)})
    assert sum(r["documents"] for r in report["fold_reports"]) == 300
    assert "auc" in report["metrics"] and "ham_fpr" in report["metrics"]
    parallel = run(["eval", "--cv", "5", corpus_dir, "--json", "-j", "3", "--alpha", "0.3", "--seed", "7"])
    assert parallel.stdout == result.stdout
    other_seed = run(["eval", "--cv", "5", corpus_dir, "--json", "--alpha", "0.3", "--seed", "8"])
    assert other_seed.stdout != result.stdout
    text = run(["eval", "--cv", "3", corpus_dir]).stdout
    assert (
        text.startswith("3-fold stratified cross-validation of 300 documents (seed 0)")
        and "accuracy" in text
        and " ± " in text
    )


def test_eval_cv_limits_and_errors(tmp_path, corpus_dir, make_class_folders):
    tiny = make_class_folders(
        ["apple pie", "apple tart", "apple crumble", "banana split"], ["a", "a", "a", "b"], name="tiny"
    )
    bad = run(["eval", "--cv", "3", corpus_dir, "--fail-under", "accuracy=0.9999", "-q"])
    assert bad.exit_code == 1 and bad.stderr.startswith("nbcli: error: mean accuracy ")
    assert run(["eval", "--cv", "3", corpus_dir, "--fail-under", "accuracy=0.5", "-q"]).exit_code == 0
    for args, code, message in [
        (["--cv", "1", corpus_dir], 2, "Invalid value for '--cv'"),
        (["--cv", "3"], 2, "give a CORPUS or at least one --label CLASS=PATH to cross-validate"),
        (["--cv", "3", "--predictions", "-"], 2, "--cv and --predictions do not go together"),
        (["m.nb", corpus_dir, "--seed", "3"], 2, "--seed needs --cv"),
        (["m.nb", corpus_dir, "--alpha", "3"], 2, "--alpha needs --cv"),
        (["--cv", "3", corpus_dir, "--alpha", "0"], 1, "--alpha must be a positive number"),
        (["--cv", "400", corpus_dir], 1, "--cv 400 needs at least 400 documents; the corpus has 300"),
        (["--cv", "3", "--label", f"ham={corpus_dir / 'ham'}"], 1, "the corpus has only one class (ham)"),
        (
            ["--cv", "2", tiny],
            1,
            (
                "class b has only one document: a fold's training part would lack it; cross-validation needs at "
                "least two documents of each class"
            ),
        ),
    ]:
        result = run(["eval", *args])
        assert result.exit_code == code and message in result.stderr and result.stderr.count("\n") == 1, (
            args,
            result.stderr,
        )


def test_too_many_folds_names_the_parameter():
    from nbcli.errors import ParameterError
    from nbcli.text.analyzer import Analyzer, AnalyzerOptions
    from nbcli.text.sources import Document

    texts, labels = make_docs(6, seed=1, classes=["ham", "spam"])
    docs = [Document(f"d{i}", lab, t) for i, (t, lab) in enumerate(zip(texts, labels))]
    corpus = crossval.analyse_corpus(docs, Analyzer(AnalyzerOptions()))
    with pytest.raises(ParameterError) as caught:
        crossval.fold_counts(corpus, 10, 0, False)
    assert caught.value.parameter == "cv" and str(caught.value) == "cv 10 needs at least 10 documents; the corpus has 6"


def test_fold_counts_are_the_corpus_less_the_fold():
    from nbcli.text.analyzer import Analyzer, AnalyzerOptions
    from nbcli.text.sources import Document

    texts, labels = make_docs(60, seed=2, classes=["ham", "spam"])
    docs = [Document(f"d{i}", lab, t) for i, (t, lab) in enumerate(zip(texts, labels))]
    corpus = crossval.analyse_corpus(docs, Analyzer(AnalyzerOptions()))
    counts = crossval.fold_counts(corpus, 3, 5, doc_freq=True)
    for f in range(3):
        rows = np.flatnonzero(counts.fold != f)
        class_count, tf, df = counts.training(f)
        assert class_count.tolist() == np.bincount(corpus.y[rows], minlength=2).tolist()
        for c in range(2):
            mine = corpus.X[rows[corpus.y[rows] == c]]
            assert np.array_equal(tf[c], np.asarray(mine.sum(axis=0)).ravel().astype(np.int64))
            assert np.array_equal(df[c], np.asarray((mine > 0).sum(axis=0)).ravel())
