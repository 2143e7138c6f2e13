"""`nbcli eval --online`: the TREC online protocol, checked against models
trained on each prefix of the stream."""

from __future__ import annotations

import json

import numpy as np
import pytest

from nbcli.evaluate import trec
from nbcli.fit import online
from nbcli.fit.settings import resolved_defaults
from nbcli.fit.training import train
from nbcli.fit.training_options import training_options
from nbcli.text.analyzer import Analyzer, AnalyzerOptions
from nbcli.text.sources import Document

from conftest import SAMPLES, make_docs, run

MAIL = sorted((SAMPLES / "mail" / "train").glob("*/*"))


@pytest.fixture(scope="module")
def docs():
    # every third message of the sample mail: both classes, in file order (ham, then spam)
    return [Document(str(p), p.parent.name, p.read_bytes(), "mail") for p in MAIL[::3]]


@pytest.fixture(scope="module")
def stream(docs):
    return online.analyse_stream(docs, Analyzer(AnalyzerOptions()))


SETTINGS = [
    ("multinomial", dict(alpha=0.0001, unknown="smooth")),
    ("multinomial", dict(alpha=2.0, estimate="map")),
    ("multinomial", dict(m_estimate="5", unknown="smooth")),
    ("multinomial", dict(alpha=0.5, prior="uniform")),
    ("multinomial", dict(alpha=0.1, prior_alpha=1.0)),
    ("bernoulli", dict(alpha=0.5)),
    ("complement", dict(alpha=0.3, tf_log=True, length_norm=True)),
    ("complement", dict(alpha=0.3, idf=True)),
]


def _settings(kind, fields, classes):
    """As `eval --online` resolves them for a corpus of mail (training's rule)."""
    _, options = training_options(kind=kind, **fields)
    alpha, unknown = resolved_defaults(options, mostly_mail=True)
    return options, online.settings_for(options, alpha, unknown, classes)


@pytest.mark.parametrize("kind,fields", SETTINGS[:5])
def test_the_fast_multinomial_scores_what_the_rebuilt_model_scores(stream, kind, fields):
    _, settings = _settings(kind, fields, stream.classes)
    order = online.order_of(stream, "date")
    fast = online.run(stream, kind, settings, order, "all")
    slow = online.run(stream, kind, settings, order, "all", fast=False)
    assert np.array_equal(np.isfinite(fast.score), np.isfinite(slow.score))
    finite = np.isfinite(fast.score)
    assert np.allclose(fast.score[finite], slow.score[finite], rtol=1e-9, atol=1e-7)
    assert np.array_equal(fast.called_spam, slow.called_spam)


@pytest.mark.parametrize("kind,fields", SETTINGS)
def test_each_message_is_scored_by_the_model_of_the_messages_before_it(docs, stream, kind, fields):
    """The online score of message k equals the log-odds that `nbcli train`
    on messages 0..k-1 (taken in the same order, all learned) gives it."""
    options, settings = _settings(kind, fields, stream.classes)
    order = online.order_of(stream, "date")
    result = online.run(stream, kind, settings, order, "all", fast=False)
    analyzer_options, _ = training_options(kind=kind, **fields)
    for k in (40, 90, len(docs) - 1):
        assert len({docs[i].label for i in order[:k]}) == 2
        model = train([docs[i] for i in order[:k]], analyzer_options, options)
        log_proba = model.log_proba([docs[order[k]].data], ["mail"])[0]
        s = model.classes.index("spam")
        assert result.score[k] == pytest.approx(log_proba[s] - log_proba[1 - s], rel=1e-9, abs=1e-7)


def test_training_rules(stream):
    _, settings = _settings("multinomial", dict(alpha=0.01), stream.classes)
    order = online.order_of(stream, "date")
    everything = online.run(stream, "multinomial", settings, order, "all")
    assert everything.learned.all()
    errors = online.run(stream, "multinomial", settings, order, "errors")
    wrong = errors.called_spam != errors.is_spam
    assert np.array_equal(errors.learned, wrong) and wrong.any()
    unsure = online.run(stream, "multinomial", settings, order, "unsure", spam_cutoff=0.99, ham_cutoff=0.01)
    band = (unsure.score > np.log(0.01 / 0.99)) & (unsure.score < np.log(0.99 / 0.01))
    assert np.array_equal(unsure.learned, (unsure.called_spam != unsure.is_spam) | band)
    warm = online.run(stream, "multinomial", settings, order, "errors", warmup=30)
    assert warm.warmup == 30 and len(warm.score) == len(order) - 30
    assert np.array_equal(warm.order, order[30:])


def test_nothing_learned_scores_zero_and_one_class_learned_is_certain(stream):
    _, settings = _settings("multinomial", dict(alpha=1.0), stream.classes)
    order = online.order_of(stream, "given")  # the ham come first
    result = online.run(stream, "multinomial", settings, order, "all")
    assert result.score[0] == 0.0 and not result.called_spam[0]
    assert result.score[1] == -np.inf  # only ham learned: P(spam) = 0


def _message(date: str | None, subject: str, body: str) -> bytes:
    head = f"Date: {date}\n" if date else ""
    return f"{head}From: a@example.com\nSubject: {subject}\n\n{body}\n".encode()


def test_date_order_with_undated_messages_kept_in_place():
    dates = [30.0, None, 10.0, 20.0, None]
    assert online.order_of(
        online.Stream(None, np.zeros(5), ["ham", "spam"], np.array([np.nan if d is None else d for d in dates]), [], 0),
        "date",
    ).tolist() == [2, 3, 4, 0, 1]  # keys 30, 30, 10, 20, 20: an undated one follows its predecessor


def test_cli_reports_the_trec_measures(tmp_path):
    corpus = tmp_path / "c"
    stamps = ["Mon, 01 Jan 2024 10:00:00 +0000", "Tue, 02 Jan 2024 10:00:00 +0000", None]
    for i in range(12):
        for label, words in (("ham", "meeting agenda notes lunch"), ("spam", "winner prize cash offer")):
            (corpus / label).mkdir(parents=True, exist_ok=True)
            (corpus / label / f"{i}.eml").write_bytes(_message(stamps[i % 3], f"{label} {i}", f"{words} n{i}"))
    plot = tmp_path / "curve.svg"
    result = run(["eval", "--online", corpus, "--train", "all", "--json", "--plot", plot])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    for key in ("one_minus_roca_pct", "hm_pct", "sm_pct", "lam_pct", "accuracy_pct", "messages", "learned"):
        assert key in report
    assert report["messages"] == 24 and report["learned"] == 24 and report["train"] == "all"
    assert plot.read_text().startswith("<svg") or "<svg" in plot.read_text()[:200]
    text = run(["eval", "--online", corpus])
    assert text.exit_code == 0 and "lam%" in text.stdout and "(1-ROCA)%" in text.stdout
    # the measures are trec's, on the stream the run scored
    stream = online.analyse_stream(
        [Document(str(p), p.parent.name, p.read_bytes()) for p in sorted(corpus.glob("*/*"))],
        Analyzer(AnalyzerOptions()),
    )
    assert stream.classes == ["ham", "spam"]


def test_cli_refusals(tmp_path):
    folders = tmp_path / "three"
    for label in ("a", "b", "c"):
        (folders / label).mkdir(parents=True)
        (folders / label / "1.txt").write_text(f"{label} words here")
    three = run(["eval", "--online", folders])
    assert three.exit_code == 1 and "two classes" in three.stderr and len(three.stderr.splitlines()) == 1
    lone = run(["eval", SAMPLES / "mail" / "train", "--order", "given"])
    assert lone.exit_code == 2 and "--order goes with --online" in lone.stderr
    pruned = run(["eval", "--online", SAMPLES / "mail" / "train", "--min-df", "2"])
    assert pruned.exit_code == 1 and "cannot prune" in pruned.stderr


def test_trec_measures_of_a_run_match_the_stream(stream):
    _, settings = _settings("multinomial", dict(alpha=0.01), stream.classes)
    result = online.run(stream, "multinomial", settings, online.order_of(stream, "date"), "errors")
    report = online.report(result, "errors", "date")
    assert report == {
        "protocol": "online",
        "order": "date",
        "train": "errors",
        "warmup": 0,
        **trec.measures(result.is_spam, result.score, result.called_spam),
        "learned": int(result.learned.sum()),
    }
    assert report["errors"] == int((result.called_spam != result.is_spam).sum())


def test_protocol_errors_name_the_parameter_and_the_cli_says_the_flag():
    from nbcli.cli.options import in_flag_terms
    from nbcli.errors import ParameterError

    texts, labels = make_docs(20, seed=1, classes=["ham", "spam"])
    stream = online.analyse_stream(
        [Document(f"d{i}", lab, t) for i, (t, lab) in enumerate(zip(texts, labels))], Analyzer(AnalyzerOptions())
    )
    order = online.order_of(stream, "given")
    with pytest.raises(ParameterError) as caught:
        online.run(stream, "multinomial", {}, order, train="sometimes")
    assert caught.value.parameter == "train" and str(caught.value).startswith("train 'sometimes' is not one of")
    assert str(in_flag_terms(caught.value)) == "--train 'sometimes' is not one of all, errors, unsure"
    with pytest.raises(ParameterError) as caught:
        online.run(stream, "multinomial", {}, order, spam_class="junk")
    assert str(in_flag_terms(caught.value)) == (
        "eval --online measures a spam filter: the corpus needs two classes, one of them 'junk' (it has ham, spam); "
        "name the spam class with --spam-class"
    )
    # a warm-up that takes every message leaves nothing to measure ('n/a' for every figure before)
    with pytest.raises(ParameterError) as caught:
        online.run(stream, "multinomial", {}, order, warmup=20)
    assert str(in_flag_terms(caught.value)) == (
        "--warmup 20 leaves none of the 20 messages to classify; give --warmup less than the number of messages"
    )
    _, settings = _settings("multinomial", dict(alpha=1.0), stream.classes)
    assert len(online.run(stream, "multinomial", settings, order, warmup=19).score) == 1
