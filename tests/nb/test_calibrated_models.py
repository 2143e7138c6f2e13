"""Calibrated models end to end (issue 16): `train --calibrate` stores the
map scikit-learn fits on the same held-out scores; the map survives save
and load, `--jobs`, `learn` (which says when it is stale), dump and load;
`nbcli calibrate` refits it; `info` and `eval --calibration` show it."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from test_calibrators import SKLEARN_METHOD, Scores

from nbcli.fit.training import train as train_in_process
from nbcli.fit.training_options import training_options
from nbcli.store import modelfile
from nbcli.text.analyzer import Analyzer
from nbcli.text.identity import digests
from nbcli.text.sources import ReadOptions, labeled_corpus

from conftest import SAMPLES, run

MAIL = SAMPLES / "mail"


def info(path) -> dict:
    result = run(["info", path, "--json"])
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def mail_docs(part="train"):
    return list(labeled_corpus([str(MAIL / part)], [], ReadOptions()))


def heldout_by_hand(docs, analyzer_options, options, groups):
    """Each document's raw log-posteriors under a model trained (by
    training's own code, from the documents) on the other groups."""
    scores = np.zeros((len(docs), 2))
    for g in sorted(set(groups)):
        inside = [i for i, gg in enumerate(groups) if gg == g]
        rest = [d for d, gg in zip(docs, groups) if gg != g]
        model = train_in_process(rest, analyzer_options, options)
        scores[inside] = model.score([docs[i].data for i in inside], [docs[i].kind for i in inside])
    return scores


@pytest.mark.parametrize("method", ["platt", "temperature", "isotonic"])
def test_the_stored_map_is_scikit_learns_on_the_same_held_out_log_odds(tmp_path, method):
    """The held-out scores are rebuilt here from models trained without each
    group; CalibratedClassifierCV(ensemble=False) fed their log-odds fits the
    map the model file holds, to the optimisers' tolerance."""
    model = tmp_path / "m.nb"
    assert run(["train", MAIL / "train", "-o", model, "-q", "--calibrate", method]).exit_code == 0
    stored = modelfile.load(str(model))
    assert stored.calibration.method == method and stored.calibration.documents == 525

    docs = mail_docs()
    analyzer_options, options = training_options()
    analyzer = Analyzer(analyzer_options)
    batch = analyzer.analyze([d.data for d in docs], [d.kind for d in docs])
    keys = digests(batch.hashes, batch.doc_ptr)[:, 0]
    # the groups, by the documented rule: per class, distinct digests in increasing order, dealt in turn
    classes = sorted({d.label for d in docs})
    group, dealt = {}, 0
    for c in classes:
        distinct = sorted({int(k) for k, d in zip(keys, docs) if d.label == c})
        group.update({k: (dealt + r) % 5 for r, k in enumerate(distinct)})
        dealt += len(distinct)
    scores = heldout_by_hand(docs, analyzer_options, options, [group[int(k)] for k in keys])
    truth = np.array([classes.index(d.label) for d in docs])
    log_odds = scores[:, 1] - scores[:, 0]

    oracle = CalibratedClassifierCV(Scores(), method=SKLEARN_METHOD[method], cv=5, ensemble=False)
    oracle.fit(log_odds[:, None], truth)
    grid = np.linspace(log_odds.min() - 1, log_odds.max() + 1, 400)
    want = oracle.predict_proba(grid[:, None])[:, 1]
    rows = np.stack([-np.logaddexp(0.0, grid), -np.logaddexp(0.0, -grid)], axis=1)  # log sigmoid(-s), log sigmoid(s)
    if method == "isotonic":
        got = np.exp(stored.calibration._apply(rows, clip=False))[:, 1]  # the table itself, before the clip
    else:
        got = np.exp(stored.calibration.apply(rows))[:, 1]
    assert np.abs(got - want).max() < 1e-6


def test_calibration_survives_save_load_jobs_and_the_api(tmp_path):
    import nbcli

    one, two = tmp_path / "one.nb", tmp_path / "two.nb"
    assert run(["train", MAIL / "train", "-o", one, "-q", "--jobs", "1"]).exit_code == 0
    assert run(["train", MAIL / "train", "-o", two, "-q", "--jobs", "2"]).exit_code == 0
    a, b = modelfile.load(str(one)), modelfile.load(str(two))
    assert a.calibration is not None and a.calibration == b.calibration
    assert info(one)["model_id"] == info(two)["model_id"]
    docs = mail_docs("test")
    data, kinds = [d.data for d in docs], [d.kind for d in docs]
    assert np.array_equal(a.score(data, kinds), b.score(data, kinds))
    # what predict writes is the map applied to the event model's posteriors
    raw = a.uncalibrated().score(data, kinds)
    assert np.allclose(a.score(data, kinds), a.calibration.apply(raw), rtol=0, atol=1e-12)
    assert not np.allclose(raw, a.score(data, kinds))
    # the library trains the same model (calibrate= as --calibrate)
    texts, labels = [d.data for d in mail_docs()], [d.label for d in mail_docs()]
    api = tmp_path / "api.nb"
    nbcli.train(texts, labels).save(api)
    assert modelfile.load(str(api)).calibration == a.calibration
    nbcli.train(texts, labels, calibrate="none").save(api)
    assert modelfile.load(str(api)).calibration is None


def test_info_names_the_map_and_none_keeps_raw_posteriors(tmp_path):
    model, raw = tmp_path / "m.nb", tmp_path / "raw.nb"
    assert run(["train", MAIL / "train", "-o", model, "-q", "--calibrate", "temperature"]).exit_code == 0
    assert run(["train", MAIL / "train", "-o", raw, "-q", "--calibrate", "none"]).exit_code == 0
    cal = info(model)["calibration"]
    assert cal["method"] == "temperature" and cal["documents"] == 525 and cal["keeps_ranking"] and not cal["stale"]
    assert cal["map"].startswith("temperature ") and cal["source"] == "cross-validation"
    text = run(["info", model]).stdout
    assert "calibration: temperature " in text and "fitted on 525 held-out documents" in text
    assert info(raw)["calibration"] == {"method": None, "reason": None}
    assert "calibration: none (raw event-model posteriors)" in run(["info", raw]).stdout
    assert modelfile.read_payload(str(raw))["format_version"] == 2  # uncalibrated: readable by the nbcli before


def test_a_corpus_too_small_to_cross_validate(tmp_path, make_class_folders):
    corpus = make_class_folders(["apple bread", "apple cider", "zebra quagga"], ["a", "a", "b"])
    model = tmp_path / "m.nb"
    result = run(["train", corpus, "-o", model])
    assert result.exit_code == 0
    assert "nbcli: not calibrated: class b has only one distinct document" in result.stderr
    assert info(model)["calibration"]["reason"] == "class b has only one distinct document"
    result = run(["train", corpus, "-o", model, "--calibrate", "platt"])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert "cannot calibrate by cross-validation: class b has only one distinct document" in result.stderr
    line = run(["train", corpus, "-o", model, "--model", "complement", "--idf", "--tf-log", "--calibrate", "platt"])
    assert line.exit_code == 1 and "--calibrate cannot cross-validate" in line.stderr


def test_learn_keeps_the_map_and_says_when_it_is_stale(tmp_path):
    corpus = tmp_path / "train"
    shutil.copytree(MAIL / "train", corpus)
    later = tmp_path / "later"
    later.mkdir()
    for path in sorted((corpus / "spam").iterdir())[:80]:
        path.rename(later / path.name)
    model = tmp_path / "m.nb"
    assert run(["train", corpus, "-o", model, "-q"]).exit_code == 0
    fitted = modelfile.load(str(model)).calibration
    few = sorted(later.iterdir())[:10]
    result = run(["learn", model, "--spam", *few])
    assert result.exit_code == 0 and "stale" not in result.stderr  # 10 of 445: under the 10% rule
    assert modelfile.load(str(model)).calibration == fitted
    result = run(["learn", model, "--spam", later])
    assert result.exit_code == 0
    assert f"{model}'s calibration is stale: it was fitted when the model had 445 documents, and it has 525" in (
        result.stderr
    )
    assert modelfile.load(str(model)).calibration == fitted
    cal = info(model)["calibration"]
    assert cal["stale"] and "STALE: fitted at 445 documents" in run(["info", model]).stdout
    # a refit on held-out mail is fresh again
    result = run(["calibrate", model, MAIL / "test"])
    assert result.exit_code == 0, result.stderr
    assert "fitted on 175 held-out documents" in result.stderr
    assert not info(model)["calibration"]["stale"]
    # a new class cannot keep a map of two classes: it is dropped, once, with a note
    result = run(["learn", model, "--class", "news", "--new-class", MAIL / "test" / "ham" / "0001.eml"])
    assert result.exit_code == 0 and "is no longer calibrated (the model's classes changed)" in result.stderr
    assert info(model)["calibration"]["method"] is None


def test_calibrate_refits_removes_and_refuses(tmp_path):
    model = tmp_path / "m.nb"
    assert run(["train", MAIL / "train", "-o", model, "-q"]).exit_code == 0
    before = info(model)["model_id"]
    out = tmp_path / "iso.nb"
    result = run(["calibrate", model, MAIL / "test", "--method", "isotonic", "-o", out, "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["method"] == "isotonic" and report["documents"] == 175
    assert report["after"]["log_loss"] < report["before"]["log_loss"]
    assert info(out)["calibration"]["source"] == f"held-out: {MAIL / 'test'}"
    assert info(model)["model_id"] == before  # -o: MODEL untouched
    assert info(out)["model_id"] != before  # another map, other probabilities: another identity
    # the refit map is what the model applies from now on
    docs = mail_docs("test")
    refit = modelfile.load(str(out))
    raw = refit.uncalibrated().score([d.data for d in docs], [d.kind for d in docs])
    predicted = [json.loads(line) for line in run(["predict", out, MAIL / "test", "--json"]).stdout.splitlines()]
    mapped = np.exp(refit.calibration.apply(raw))
    by_id = {p["id"]: p["probabilities"]["spam"] for p in predicted}
    assert np.allclose([by_id[d.id] for d in docs], mapped[:, 1], rtol=0, atol=1e-12)

    assert run(["calibrate", out, "--method", "none", "-q"]).exit_code == 2  # HELDOUT is needed even so
    assert run(["calibrate", out, MAIL / "test", "--method", "none", "-q"]).exit_code == 0
    assert info(out)["calibration"]["method"] is None
    result = run(["calibrate", model, "--label", f"spam={MAIL / 'test' / 'spam'}"])
    assert result.exit_code == 1 and "have none of class ham" in result.stderr
    result = run(["calibrate", model, MAIL / "train", "-o", MAIL / "train" / "x.nb"])
    assert result.exit_code == 1 and "lies inside the input folder" in result.stderr
    result = run(["calibrate", tmp_path / "nope.nb", MAIL / "test"])
    assert result.exit_code == 1 and "nope.nb: no such model file" in result.stderr


def test_calibrate_never_turns_the_model_upside_down(tmp_path):
    """Issue 25: calibrating on the model's mistakes fitted a platt map of
    negative slope, and the ROC AUC on fresh mail fell from 0.99 to 0.005."""
    model = tmp_path / "m.nb"
    assert run(["train", MAIL / "train", "-o", model, "-q"]).exit_code == 0
    before = model.read_bytes()
    auc = json.loads(run(["eval", model, MAIL / "test", "--json"]).stdout)["spam_filter"]["auc"]
    assert auc > 0.95
    # every document labelled the other way: held-out documents the model gets all wrong
    swapped = ["--label", f"ham={MAIL / 'test' / 'spam'}", "--label", f"spam={MAIL / 'test' / 'ham'}"]
    for method in ("platt", "isotonic", "temperature"):
        result = run(["calibrate", model, *swapped, "--method", method])
        assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.stderr
        assert "the held-out documents rank against the model" in result.stderr
        assert model.read_bytes() == before  # nothing written
    assert json.loads(run(["eval", model, MAIL / "test", "--json"]).stdout)["spam_filter"]["auc"] == auc


def test_calibrate_refuses_too_few_one_sided_or_learned_documents(tmp_path):
    model = tmp_path / "m.nb"
    assert run(["train", MAIL / "train", "-o", model, "-q"]).exit_code == 0
    before = model.read_bytes()
    misfiled = tmp_path / "misfiled"
    for label in ("ham", "spam"):  # three documents of each class, as a user's "misfiled" folder
        (misfiled / label).mkdir(parents=True)
        for path in sorted((MAIL / "test" / label).iterdir())[:3]:
            shutil.copy(path, misfiled / label / path.name)
    cases = [
        ([misfiled], "have 3 of class ham: a calibration map needs at least 20 of every class"),
        (["--label", "ham=/dev/null", "--label", f"spam={MAIL / 'test' / 'spam'}"], "have 1 of class ham"),
        ([MAIL / "train"], f"have none of class ham, after leaving out the 525 {model} was trained on"),
    ]
    for heldout, message in cases:
        result = run(["calibrate", model, *heldout])
        assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.stderr
        assert message in result.stderr
        assert model.read_bytes() == before
    # documents it learned among new ones: left out, said in one line, the map fitted on the rest
    learned = MAIL / "train" / "ham" / sorted(p.name for p in (MAIL / "train" / "ham").iterdir())[0]
    result = run(["calibrate", model, MAIL / "test", "--label", f"ham={learned}", "--json"])
    assert result.exit_code == 0, result.stderr
    assert f"left out 1 held-out document {model} was trained on" in result.stderr
    assert json.loads(result.stdout)["documents"] == 175


def test_info_says_a_stored_map_reverses_the_ranking(tmp_path):
    """A model file calibrated before the rule still loads; info says what its map does."""
    from nbcli.nb import calibrators

    model = tmp_path / "m.nb"
    assert run(["train", MAIL / "train", "-o", model, "-q"]).exit_code == 0
    classifier = modelfile.load(str(model))
    docs = mail_docs("test")
    raw = classifier.uncalibrated().score([d.data for d in docs], [d.kind for d in docs])
    wrong = np.array([0 if d.label == "spam" else 1 for d in docs])
    classifier.calibration = calibrators.fit("platt", raw, wrong)
    modelfile.save(classifier, str(model))
    assert "reverses the model's ranking: refit it (nbcli calibrate MODEL HELDOUT)" in run(["info", model]).stdout


def test_train_does_not_keep_a_cross_validated_map_that_falls(tmp_path):
    """Each document's words are in the other class's documents only: every
    document held out is classified wrong, and platt's slope is negative."""
    corpus = tmp_path / "corpus"
    for label, other in (("a", "left"), ("b", "right")):
        (corpus / label).mkdir(parents=True)
        for i in range(40):
            (corpus / label / f"{i}.txt").write_text(f"word{i} {other}{i}\n")
    model = tmp_path / "m.nb"
    result = run(["train", corpus, "-o", model])
    assert result.exit_code == 0, result.stderr
    assert "not calibrated: the corpus's own documents, cross-validated, rank against the model" in result.stderr
    assert info(model)["calibration"]["method"] is None
    for method in ("platt", "isotonic"):
        result = run(["train", corpus, "-o", model, "--calibrate", method])
        assert result.exit_code == 1 and "cannot calibrate by cross-validation" in result.stderr


def test_eval_calibration_reports_before_and_after(tmp_path):
    model = tmp_path / "m.nb"
    assert run(["train", MAIL / "train", "-o", model, "-q"]).exit_code == 0
    result = run(["eval", model, MAIL / "test", "--calibration", "--json"])
    report = json.loads(result.stdout)
    before = report["calibration"]["uncalibrated"]
    assert report["log_loss"] < before["log_loss"]
    raw_report = json.loads(run(["eval", model, MAIL / "test", "--json"]).stdout)
    assert raw_report["log_loss"] == pytest.approx(report["log_loss"])  # the same calibrated scores either way
    text = run(["eval", model, MAIL / "test", "--calibration"]).stdout
    assert "before the model's calibration map: Brier score" in text


def test_dump_and_load_keep_the_map(tmp_path):
    model, copy = tmp_path / "m.nb", tmp_path / "copy.nb"
    assert run(["train", MAIL / "train", "-o", model, "-q", "--calibrate", "isotonic"]).exit_code == 0
    text = run(["dump", model]).stdout
    assert json.loads(text.splitlines()[0])["calibration"]["method"] == "isotonic"
    assert run(["load", "-", "-o", copy, "-q"], input=text).exit_code == 0
    assert modelfile.load(str(copy)).calibration == modelfile.load(str(model)).calibration
    assert info(copy)["model_id"] == info(model)["model_id"]


@pytest.mark.parametrize(
    "damage",
    [
        lambda c: c["params"].update(a=[float("nan")]),
        lambda c: c["params"].update(a=[1.0, 2.0]),
        lambda c: c.update(n_classes=3),
        lambda c: c.update(method="magic"),
        lambda c: c["params"].update(a="1.0"),
        lambda c: c.update(params=[]),
    ],
    ids=["nan", "shape", "classes", "method", "type", "params"],
)
def test_a_damaged_calibration_is_a_one_line_error(tmp_path, damage):
    model = tmp_path / "m.nb"
    assert run(["train", MAIL / "train", "-o", model, "-q", "--calibrate", "platt"]).exit_code == 0
    payload = dict(modelfile.read_payload(str(model)))
    cal = json.loads(json.dumps(payload["calibration"]))
    damage(cal)
    payload["calibration"] = cal
    bad = tmp_path / "bad.nb"
    modelfile.write_payload({k: (np.array(v) if isinstance(v, np.ndarray) else v) for k, v in payload.items()}, bad)
    result = run(["predict", bad, MAIL / "test" / "spam" / "0001.eml"])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert "is corrupt" in result.stderr and "calibration" in result.stderr and "Traceback" not in result.stderr
