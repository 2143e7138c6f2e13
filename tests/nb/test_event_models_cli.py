"""The event models (multinomial, bernoulli, complement) and the smoothing
choices: against scikit-learn through the CLI, against hand-computed cases,
and the invariants (probabilities sum to 1, round trips, --jobs)."""

from __future__ import annotations

import json

import numpy as np
import pytest
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.naive_bayes import BernoulliNB, ComplementNB, MultinomialNB

from nbcli.fit.settings import TrainOptions
from nbcli.fit.training import train
from nbcli.nb.event_models import MODELS, sparse_dot
from nbcli.store import modelfile
from nbcli.text.analyzer import AnalyzerOptions
from nbcli.text.sources import Document
from nbcli.text.vectorize import SparseCounts

from conftest import SAMPLES, make_docs, run

PATTERN = r"(?u)\b\w\w+\b"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """A seeded four-class corpus as class folders, a test table, and the
    texts for scikit-learn."""
    root = tmp_path_factory.mktemp("models")
    train_texts, train_labels = make_docs(2000, seed=41)
    test_texts, _ = make_docs(400, seed=42)
    for i, (text, label) in enumerate(zip(train_texts, train_labels)):
        d = root / "train" / label
        d.mkdir(parents=True, exist_ok=True)
        (d / f"{i:05d}.txt").write_text(text, encoding="utf-8")
    test = root / "test.jsonl"
    test.write_text(
        "".join(json.dumps({"id": f"d{i}", "text": t}) + "\n" for i, t in enumerate(test_texts)), encoding="utf-8"
    )
    vec = CountVectorizer(token_pattern=PATTERN)
    X = vec.fit_transform(train_texts)
    return {
        "root": root,
        "train": root / "train",
        "test": test,
        "X": X,
        "y": train_labels,
        "X_test": vec.transform(test_texts),
    }


def _cli_proba(corpus, tmp_path, *options):
    model = tmp_path / "m.nb"
    # the event model's own posteriors, as scikit-learn's (no calibration map)
    cmd = ["train", corpus["train"], "-o", model, "-q", "--token-pattern", PATTERN, "--calibrate", "none", *options]
    result = run(cmd)
    assert result.exit_code == 0, result.stderr
    result = run(["predict", model, corpus["test"], "--json"])
    assert result.exit_code == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]
    classes = sorted(records[0]["probabilities"])
    return classes, np.array([[r["probabilities"][c] for c in classes] for r in records])


def _agree(classes, got, sk, X_test):
    assert list(sk.classes_) == classes
    expected = sk.predict_proba(X_test)
    assert got.shape == expected.shape
    assert np.abs(got - expected).max() < 1e-9
    assert np.allclose(got.sum(axis=1), 1.0, atol=1e-12)


@pytest.mark.parametrize("alpha", [1.0, 0.1, 1e-4])
def test_bernoulli_agrees_with_scikit_learn(corpus, tmp_path, alpha):
    classes, got = _cli_proba(corpus, tmp_path, "--model", "bernoulli", "--alpha", alpha)
    _agree(classes, got, BernoulliNB(alpha=alpha).fit(corpus["X"], corpus["y"]), corpus["X_test"])


@pytest.mark.parametrize("alpha, norm", [(1.0, False), (0.3, False), (1e-4, False), (1.0, True), (1e-4, True)])
def test_complement_agrees_with_scikit_learn(corpus, tmp_path, alpha, norm):
    extra = ["--weight-norm"] if norm else []
    classes, got = _cli_proba(corpus, tmp_path, "--model", "complement", "--alpha", alpha, *extra)
    _agree(classes, got, ComplementNB(alpha=alpha, norm=norm).fit(corpus["X"], corpus["y"]), corpus["X_test"])


@pytest.mark.parametrize("alpha", [2.0, 1e-4, 1e-6])
def test_multinomial_agrees_with_scikit_learn_for_small_alphas(corpus, tmp_path, alpha):
    classes, got = _cli_proba(corpus, tmp_path, "--model", "multinomial", "--alpha", alpha)
    _agree(classes, got, MultinomialNB(alpha=alpha).fit(corpus["X"], corpus["y"]), corpus["X_test"])


def _by_hand(X, tf_log, idf, length_norm, idf_of=None):
    """TfidfTransformer's steps, one at a time: log(1 + tf), smoothed idf, L2."""
    X = scipy.sparse.csr_matrix(X, dtype=np.float64)
    if tf_log:
        X.data = np.log1p(X.data)
    if idf:
        if idf_of is None:
            df = np.bincount(X.indices, minlength=X.shape[1])
            idf_of = np.log((1 + X.shape[0]) / (1 + df)) + 1
        X = X @ scipy.sparse.diags(idf_of)
    if length_norm:
        norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
        norms[norms == 0] = 1
        X = scipy.sparse.diags(1 / norms) @ X
    return scipy.sparse.csr_matrix(X), idf_of


@pytest.mark.parametrize(
    "flags",
    [
        ["--tf-log"],
        ["--idf"],
        ["--length-norm"],
        ["--tf-log", "--idf", "--length-norm"],
        ["--tf-log", "--idf", "--length-norm", "--weight-norm"],
    ],
)
def test_complement_transforms_agree_with_the_steps_by_hand(corpus, tmp_path, flags):
    tf_log, idf, length_norm, norm = (
        ("--tf-log" in flags),
        ("--idf" in flags),
        ("--length-norm" in flags),
        ("--weight-norm" in flags),
    )
    classes, got = _cli_proba(corpus, tmp_path, "--model", "complement", "--alpha", "0.5", *flags)
    X, idf_of = _by_hand(corpus["X"], tf_log, idf, length_norm)
    X_test, _ = _by_hand(corpus["X_test"], tf_log, idf, length_norm, idf_of)
    _agree(classes, got, ComplementNB(alpha=0.5, norm=norm).fit(X, corpus["y"]), X_test)


def test_the_scoring_contract_holds_for_every_kind(corpus, tmp_path):
    """jll = transform(X) @ weights + bias + log_prior, for each event model."""
    texts, labels = make_docs(300, seed=5)
    docs = [Document(str(i), lab, t) for i, (t, lab) in enumerate(zip(texts, labels))]
    options = [
        TrainOptions(kind="multinomial"),
        TrainOptions(kind="bernoulli", alpha=0.5),
        TrainOptions(kind="complement", tf_log=True, idf=True, length_norm=True, weight_norm=True),
    ]
    for opts in options:
        clf = train(docs, AnalyzerOptions(), opts)
        m = clf.model
        X = clf.counts(texts[:50])
        for name in (
            "classes",
            "class_count",
            "feature_count",
            "kind",
            "alpha",
            "prior",
            "log_prior",
            "weights",
            "bias",
            "unknown_weight",
        ):
            assert hasattr(m, name), name
        T = m.transform(X)
        assert hasattr(T, "indptr") and hasattr(T, "indices") and hasattr(T, "data")
        expected = sparse_dot(T, m.weights) + m.bias + m.log_prior
        assert np.allclose(m.joint_log_likelihood(X), expected, rtol=0, atol=1e-9)
        assert m.term_log_odds().shape == (len(m.classes), len(clf.vocabulary))
        assert np.allclose(np.exp(clf.log_proba(texts[:50])).sum(axis=1), 1.0)


# -- hand-computed cases -----------------------------------------------------------


def _presence(clf, cls, term):
    """theta_cj of a Bernoulli model: weights are log(theta / (1 - theta))."""
    w = clf.model.weights[clf.vocabulary.index_of(term), clf.classes.index(cls)]
    return 1 / (1 + np.exp(-w))


@pytest.mark.parametrize("estimate, expected", [("mean", 6 / 11), ("map", 5 / 9)])
def test_beta_5_3_through_the_cli(tmp_path, make_class_folders, estimate, expected):
    """Beta(5, 3) is the m-estimate M = 8, P = 5/8 of a term's presence: class
    x has three documents, one containing t (observations t, f, f)."""
    corpus = make_class_folders(["t a", "a", "a", "b", "b t"], ["x", "x", "x", "y", "y"])
    model = tmp_path / "beta.nb"
    args = [
        "train",
        corpus,
        "-o",
        model,
        "-q",
        "--model",
        "bernoulli",
        "--m-estimate",
        "8,0.625",
        "--estimate",
        estimate,
    ]
    result = run([*args, "--token-pattern", r"\w+"])
    assert result.exit_code == 0, result.stderr
    assert _presence(modelfile.load(str(model)), "x", "t") == pytest.approx(expected, rel=1e-12)


def test_laplace_on_a_tiny_table_gives_counts_plus_one_fractions(tmp_path, make_class_folders):
    corpus = make_class_folders(
        ["dog cat dog", "cat dog", "tulip rose", "rose rose tulip"], ["animal", "animal", "flower", "flower"]
    )
    model = tmp_path / "laplace.nb"
    assert run(["train", corpus, "-o", model, "-q", "--model", "bernoulli", "--alpha", "1"]).exit_code == 0
    clf = modelfile.load(str(model))
    # Bernoulli: (documents containing the term + 1) / (documents + 2)
    assert _presence(clf, "animal", "dog") == pytest.approx(3 / 4)
    assert _presence(clf, "animal", "rose") == pytest.approx(1 / 4)
    assert _presence(clf, "flower", "rose") == pytest.approx(3 / 4)
    model2 = tmp_path / "map.nb"
    # MAP with alpha = 2 is Laplace's counts-plus-one too: (N + 2 - 1) / (T + K)
    assert run(["train", corpus, "-o", model2, "-q", "--estimate", "map", "--alpha", "2"]).exit_code == 0
    theta = np.exp(modelfile.load(str(model2)).model.log_theta)
    clf2 = modelfile.load(str(model2))
    assert theta[0, clf2.vocabulary.index_of("dog")] == pytest.approx(4 / 9)
    assert theta[1, clf2.vocabulary.index_of("dog")] == pytest.approx(1 / 9)


def test_m_estimate_and_prior_alpha(tmp_path, make_class_folders):
    corpus = make_class_folders(
        ["dog cat dog", "cat dog", "dog", "tulip rose", "rose rose tulip"], ["a", "a", "a", "f", "f"]
    )
    model = tmp_path / "m.nb"
    assert run(["train", corpus, "-o", model, "-q", "--m-estimate", "8", "--prior-alpha", "1"]).exit_code == 0
    clf = modelfile.load(str(model))
    theta = np.exp(clf.model.log_theta)
    # |V| = 4, so P = 1/4: (N + M P) / (T + M); class a has dog 4 of 6 tokens
    assert theta[0, clf.vocabulary.index_of("dog")] == pytest.approx((4 + 2) / (6 + 8))
    # (N_c + 1) / (N + 2)
    assert np.exp(clf.model.log_prior) == pytest.approx([4 / 7, 3 / 7])


# -- invariants ----------------------------------------------------------------------


KINDS = [
    ["--model", "multinomial"],
    ["--model", "bernoulli"],
    ["--model", "complement"],
    ["--model", "complement", "--tf-log", "--idf", "--length-norm", "--weight-norm"],
    ["--estimate", "map", "--alpha", "1.5", "--prior-alpha", "2"],
]


@pytest.mark.parametrize("options", KINDS)
def test_every_kind_round_trips_and_does_not_depend_on_jobs(tmp_path, options):
    mail = SAMPLES / "mail"
    loaded, outputs = {}, {}
    for jobs in (1, 2):
        path = tmp_path / f"j{jobs}.nb"
        result = run(["train", mail / "train", "-o", path, "-q", "--jobs", jobs, *options])
        assert result.exit_code == 0, result.stderr
        loaded[jobs] = modelfile.load(str(path))
        predicted = run(["predict", path, mail / "test", "--json", "--jobs", jobs])
        assert predicted.exit_code == 0, predicted.stderr
        outputs[jobs] = predicted.stdout
    a, b = loaded[1].model, loaded[2].model
    assert a.kind == b.kind and a.spec() == b.spec()
    for name in ("log_prior", "weights", "bias", "unknown_weight"):
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert outputs[1] == outputs[2]
    proba = np.array([list(json.loads(line)["probabilities"].values()) for line in outputs[1].splitlines()])
    assert np.allclose(proba.sum(axis=1), 1.0)
    # the tables loaded from the file are the ones derived again from its counts
    for name, table in zip(("log_prior", "weights", "bias", "unknown_weight"), a.rebuilt().derive()):
        assert np.allclose(getattr(a, name), table, rtol=1e-12, atol=0), name
    info = run(["info", tmp_path / "j1.nb", "--json"])
    assert json.loads(info.stdout)["kind"] == a.kind
    text = run(["info", tmp_path / "j1.nb", "--top", "3"]).stdout
    transforms = [k.replace("_", "-") for k in ("tf_log", "idf", "length_norm", "weight_norm") if a.spec().get(k)]
    shown = f"event model: {a.kind}" + (f" ({', '.join(transforms)})" if transforms else "")
    assert shown + "\n" in text


BAD = [
    ["--model", "gaussian"],
    ["--estimate", "map"],
    ["--estimate", "map", "--alpha", "0.5"],
    ["--estimate", "median"],
    ["--m-estimate", "x"],
    ["--m-estimate", "0"],
    ["--m-estimate", "2,1.5"],
    ["--m-estimate", "2,0.5"],
    ["--m-estimate", "2", "--alpha", "1"],
    ["--tf-log"],
    ["--weight-norm", "--model", "bernoulli"],
    ["--prior-alpha", "-1"],
    ["--prior", "uniform", "--prior-alpha", "1"],
    ["--unknown-terms", "smooth", "--model", "bernoulli"],
    ["--select", "0"],
    ["--select-by", "gini"],
    ["--estimate", "map", "--m-estimate", "2"],
]


@pytest.mark.parametrize("options", BAD)
def test_bad_option_values_are_one_line_errors(tmp_path, options):
    result = run(["train", SAMPLES / "topics" / "train.jsonl", "-o", tmp_path / "m.nb", *options])
    assert result.exit_code != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nbcli: error:"), result.stderr
    assert not (tmp_path / "m.nb").exists()


def test_transforms_that_read_twice_refuse_stdin(tmp_path):
    """--tf-log and --length-norm are summed in the counting pass, unless
    pruning narrows the vocabulary the norm is taken over: then the corpus
    is read twice, which stdin cannot be."""
    data = (SAMPLES / "topics" / "train.jsonl").read_bytes()
    pruned = ["--model", "complement", "--length-norm", "--min-df", "2"]
    result = run(["train", "-", "-o", tmp_path / "m.nb", *pruned], input=data)
    assert result.exit_code == 1 and "cannot come from stdin" in result.stderr
    one_pass = run(["train", "-", "-o", tmp_path / "s.nb", "--model", "complement", "--length-norm", "-q"], input=data)
    assert one_pass.exit_code == 0, one_pass.stderr
    from_file = ["train", SAMPLES / "topics" / "train.jsonl", "-o", tmp_path / "f.nb", "--model", "complement"]
    assert run([*from_file, "--length-norm", "-q"]).exit_code == 0
    a, b = modelfile.load(str(tmp_path / "s.nb")), modelfile.load(str(tmp_path / "f.nb"))
    assert np.allclose(a.model.fit_count, b.model.fit_count, rtol=1e-9) and np.array_equal(
        a.model.weights, b.model.weights
    )
    ok = run(["train", "-", "-o", tmp_path / "m.nb", "--model", "complement", "--idf", "-q"], input=data)
    assert ok.exit_code == 0, ok.stderr


# -- feature selection ---------------------------------------------------------------


def test_selection_scores_agree_with_scikit_learn_and_scipy(corpus):
    from scipy.stats import chi2_contingency
    from sklearn.metrics import mutual_info_score

    from nbcli.fit.selection import select_scores

    X = (corpus["X"] > 0).astype(np.int64).tocsc()
    y = np.array(corpus["y"])
    classes = sorted(set(corpus["y"]))
    class_count = np.array([np.sum(y == c) for c in classes], dtype=np.float64)
    df = np.array([np.asarray(X[y == c].sum(axis=0)).ravel() for c in classes])
    ig = select_scores(df, class_count, "ig")
    chi2 = select_scores(df, class_count, "chi2")
    for j in [0, 1, 5, 50, 500, X.shape[1] - 1]:
        present = X[:, j].toarray().ravel()
        assert ig[j] == pytest.approx(mutual_info_score(y, present), abs=1e-12)
        table = np.array([df[:, j], class_count - df[:, j]])
        if (table.sum(axis=1) > 0).all():
            assert chi2[j] == pytest.approx(chi2_contingency(table, correction=False)[0], rel=1e-9)


@pytest.mark.parametrize("by", ["ig", "chi2"])
def test_select_keeps_the_best_k_terms_after_pruning(corpus, tmp_path, by):
    from nbcli.fit.selection import select_scores

    full, selected = tmp_path / "full.nb", tmp_path / "sel.nb"
    common = ["train", corpus["train"], "-q", "--token-pattern", PATTERN, "--min-df", "2"]
    assert run([*common, "-o", full, "--model", "bernoulli"]).exit_code == 0
    assert run([*common, "-o", selected, "--select", "100", "--select-by", by]).exit_code == 0
    a, b = modelfile.load(str(full)), modelfile.load(str(selected))
    assert len(b.vocabulary) == 100
    scores = select_scores(a.model.doc_freq, a.model.class_count, by)
    kept = set(b.vocabulary.terms(range(100)))
    best = np.argsort(-scores, kind="stable")[:100]
    assert kept == set(a.vocabulary.terms(best))


# -- train --from-model ----------------------------------------------------------------


def test_from_model_rederives_the_tables_without_the_corpus(corpus, tmp_path):
    common = ["train", corpus["train"], "-q", "--min-df", "1", "--max-df", "1.0"]
    old, new, direct = tmp_path / "old.nb", tmp_path / "new.nb", tmp_path / "direct.nb"
    assert run([*common, "-o", old, "--model", "bernoulli"]).exit_code == 0
    for options in (
        ["--alpha", "0.1"],
        ["--model", "multinomial", "--alpha", "0.1"],
        ["--model", "complement", "--weight-norm"],
        ["--estimate", "map", "--alpha", "3", "--prior", "uniform"],
        ["--select", "200"],
    ):
        kind = options[1] if options[0] == "--model" else "bernoulli"
        result = run(["train", "--from-model", old, "-o", new, "-q", *options])
        assert result.exit_code == 0, result.stderr
        direct_options = [*options] if options[0] == "--model" else ["--model", kind, *options]
        assert run([*common, "-o", direct, *direct_options]).exit_code == 0
        a, b = modelfile.load(str(new)), modelfile.load(str(direct))
        assert a.model.kind == b.model.kind == kind
        assert a.vocabulary.terms(range(len(a.vocabulary))) == b.vocabulary.terms(range(len(b.vocabulary)))
        for name in ("log_prior", "weights", "bias"):
            assert np.allclose(getattr(a.model, name), getattr(b.model, name), rtol=1e-12, atol=1e-12), (options, name)


def test_from_model_refuses_what_needs_the_corpus(tmp_path, small_model):
    for options, needle in (
        (["--ngrams", "2"], "--ngrams needs the corpus"),
        (["--model", "complement", "--tf-log"], "--tf-log needs the corpus"),
        (["--model", "bernoulli"], "document frequencies"),
        (["sample_corpora"], "give no CORPUS"),
    ):
        result = run(["train", "--from-model", small_model, "-o", tmp_path / "x.nb", *options])
        assert result.exit_code != 0 and needle in result.stderr, result.stderr
        assert len(result.stderr.strip().splitlines()) == 1


def test_version_1_files_still_load(tmp_path, plain_model, small_model):
    """A plain multinomial model is still written as format 1 (older nbcli
    reads it); a file without the version-2 keys loads as multinomial; a
    calibrated model is format 3, which older nbcli refuse rather than give
    other probabilities."""
    from nbcli.store.modelfile import read_payload, write_payload

    assert read_payload(str(small_model))["format_version"] == modelfile.FORMAT_VERSION == 3
    payload = dict(read_payload(str(plain_model)))
    assert payload["format_version"] == 1
    payload["model"] = {k: payload["model"][k] for k in ("kind", "alpha", "prior", "unknown")}
    for key in ("idf", "fit_count"):
        payload.pop(key)
    path = tmp_path / "v1.nb"
    write_payload({k: (np.array(v) if isinstance(v, np.ndarray) else v) for k, v in payload.items()}, str(path))
    clf = modelfile.load(str(path))
    assert clf.model.kind == "multinomial" and clf.model.estimate == "mean"
    original = modelfile.load(str(plain_model))
    assert np.array_equal(clf.model.weights, original.model.weights)
    bern = tmp_path / "b.nb"
    topics = SAMPLES / "topics" / "train.jsonl"
    assert run(["train", topics, "-o", bern, "-q", "--model", "bernoulli", "--calibrate", "none"]).exit_code == 0
    assert read_payload(str(bern))["format_version"] == 2


# -- invariants on random count tables ----------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    n_classes=st.integers(2, 4),
    n_terms=st.integers(1, 30),
    kind=st.sampled_from(sorted(MODELS)),
    alpha=st.sampled_from([1e-6, 0.01, 1.0, 2.5]),
    estimate=st.sampled_from(["mean", "map"]),
    extras=st.sampled_from([{}, {"tf_log": True}, {"idf": True, "length_norm": True, "weight_norm": True}]),
)
def test_probabilities_sum_to_one_and_the_contract_holds(seed, n_classes, n_terms, kind, alpha, estimate, extras):
    rng = np.random.default_rng(seed)
    class_count = rng.integers(1, 20, n_classes).astype(np.float64)
    doc_freq = rng.integers(0, class_count[:, None] + 1, (n_classes, n_terms))
    feature_count = doc_freq * rng.integers(1, 4, (n_classes, n_terms))
    options = dict(alpha=alpha, estimate=estimate, doc_freq=doc_freq)
    if kind == "complement" and extras:
        options.update({k: v for k, v in extras.items() if k != "idf"})
        if extras.get("idf"):
            options["idf"] = np.log((1 + class_count.sum()) / (1 + doc_freq.sum(axis=0))) + 1
    try:
        model = MODELS[kind](["a", "b", "c", "d"][:n_classes], class_count, feature_count, **options)
    except Exception as exc:  # only the MAP estimate may be refused
        assert estimate == "map" and "undefined" in str(exc)
        return
    docs = rng.integers(0, 3, (7, n_terms))
    rows, cols = np.nonzero(docs)
    X = SparseCounts(
        np.searchsorted(rows, np.arange(8)).astype(np.int64), cols, docs[rows, cols].astype(np.float64), (7, n_terms)
    )
    log_p = model.predict_log_proba(X)
    assert np.isfinite(log_p).all()
    assert np.allclose(np.exp(log_p).sum(axis=1), 1.0)
    T = model.transform(X)
    assert np.allclose(model.joint_log_likelihood(X), sparse_dot(T, model.weights) + model.bias + model.log_prior)
    dense = np.zeros((7, n_terms))
    np.add.at(dense, (np.repeat(np.arange(7), np.diff(T.indptr)), T.indices), T.data)
    assert np.allclose(model.joint_log_likelihood(X), dense @ model.weights + model.bias + model.log_prior)


@pytest.mark.parametrize(
    "change",
    [
        {"kind": "gaussian"},
        {"estimate": "median"},
        {"m_estimate": "8"},
        {"m_estimate": ["x", None]},
        {"prior_alpha": "x"},
        {"idf": False},  # complement says no idf, but the file holds an idf array
    ],
)
def test_bad_version_2_model_settings_are_one_line_errors(tmp_path, change):
    from nbcli.store.modelfile import read_payload, write_payload

    good = tmp_path / "c.nb"
    args = ["train", SAMPLES / "topics" / "train.jsonl", "-o", good, "-q", "--model", "complement", "--idf"]
    assert run(args).exit_code == 0
    payload = {k: (np.array(v) if isinstance(v, np.ndarray) else v) for k, v in read_payload(str(good)).items()}
    payload["model"] = {**payload["model"], **change}
    bad = tmp_path / "bad.nb"
    write_payload(payload, str(bad))
    result = run(["predict", bad, SAMPLES / "topics" / "test.jsonl"])
    assert result.exit_code == 1
    assert len(result.stderr.strip().splitlines()) == 1 and result.stderr.startswith("nbcli: error:"), result.stderr


def test_train_help_documents_each_formula():
    text = " ".join(run(["train", "--help"]).stdout.split())
    for needle in (
        "(D_cj + alpha) / (N_c + 2 alpha)",
        "theta~_cj",
        "(N + a - 1) / (T + K (a - 1))",
        "(N + M P) / (T + M)",
        "(N_c + A) / (N + A C)",
        "ln((1 + N) / (1 + df_j)) + 1",
        "H(C) - H(C | term present/absent)",
        "--from-model",
    ):
        assert needle in text, needle


def test_from_model_keeps_the_mail_models_alpha_rule(tmp_path):
    """The mail model's alpha = 0.3/N survives `train --from-model`, unless
    --alpha fixes one."""
    model, again, fixed = tmp_path / "m.nb", tmp_path / "r.nb", tmp_path / "f.nb"
    # uncalibrated: a refit has no calibration (it is fitted to the old tables), so its identity would differ
    assert run(["train", SAMPLES / "mail" / "train", "-o", model, "-q", "--calibrate", "none"]).exit_code == 0
    assert run(["train", "--from-model", model, "-o", again, "-q"]).exit_code == 0
    assert run(["train", "--from-model", model, "--alpha", "0.01", "-o", fixed, "-q"]).exit_code == 0
    info = {p: json.loads(run(["info", p, "--json"]).stdout) for p in (model, again, fixed)}
    assert info[model]["options"]["alpha"] == info[again]["options"]["alpha"] == "0.3/N"
    assert info[model]["model_id"] == info[again]["model_id"] != info[fixed]["model_id"]
    a, b = modelfile.load(str(model)), modelfile.load(str(fixed))
    assert a.model.alpha_per_document == 0.3 and a.model.alpha == pytest.approx(0.3 / 525)
    assert b.model.alpha_per_document is None and b.model.alpha == 0.01 and info[fixed]["options"]["alpha"] == 0.01
