"""`train --decide` through the commands: the threshold is shown (train,
info), applied (predict, eval, filter, serve, the Python API: a document
whose probability of the positive class lies between the threshold and 0.5
gets the positive class), kept through dump/load and learn (marked stale as
the calibration is), chosen again by `calibrate`; old models are
unchanged; several classes are refused."""

import json
import math
import re

import pytest

import nbcli
from nbcli.spam import daemon, spamd
from nbcli.spam.settings import Settings
from nbcli.store import modelfile

from conftest import SAMPLES, make_docs, make_skewed_docs, model_info, one_line_error, run


@pytest.fixture
def skewed(tmp_path, make_class_folders):
    """(decided model, a copy without the decision, test folder)."""
    corpus = make_class_folders(*make_skewed_docs(seed=3), name="train")
    test = make_class_folders(*make_skewed_docs(seed=4), name="test")
    model = tmp_path / "f1.nb"
    result = run(["train", corpus, "--decide", "f1", "-o", model])
    assert result.exit_code == 0, result.stderr
    assert re.search(r"decision: space when P\(space\) >= 0\.\d+ .*--decide f1 on 600 held-out", result.stderr)
    plain = tmp_path / "plain.nb"
    classifier = modelfile.load(str(model))
    classifier.meta = {k: v for k, v in classifier.meta.items() if k != "decision"}
    modelfile.save(classifier, str(plain))
    return model, plain, test


def _probabilities(model, test) -> dict:
    lines = run(["predict", model, test, "--json"]).stdout.splitlines()
    return {r["id"]: r for r in map(json.loads, lines)}


def _set_threshold(model, t: float) -> None:
    classifier = modelfile.load(str(model))
    classifier.meta["decision"] = {**classifier.meta["decision"], "threshold": t}
    modelfile.save(classifier, str(model))


def _between(plain, test, model):
    """Move the model's threshold just below the highest P(space) under 0.5
    among the test documents; (that document's id, every document's P(space))."""
    rows = _probabilities(plain, test)
    p = {i: r["probabilities"]["space"] for i, r in rows.items()}
    doc, p_doc = max(((i, q) for i, q in p.items() if q < 0.5), key=lambda x: x[1])
    assert p_doc > 0.05
    _set_threshold(model, math.log(p_doc / (1 - p_doc)) - 1e-9)
    return doc, p


def test_info_shows_the_threshold_and_old_models_show_nothing_new(skewed):
    model, plain, _ = skewed
    info = model_info(model)["decision"]
    assert info["objective"] == "f1" and info["positive"] == "space" and info["documents"] == 600
    assert info["probability"] == pytest.approx(1 / (1 + math.exp(-info["threshold"])))
    assert 0.0 < info["probability"] < 0.5 and info["stale"] is False
    text = run(["info", model]).stdout
    assert re.search(
        r"^decision: +space when P\(space\) >= 0\.\d+ \(log-odds -?[\d.]+\), chosen for --decide f1", text, re.M
    )
    assert "decision" not in model_info(plain) and "decision:" not in run(["info", plain]).stdout


def test_predict_eval_and_the_api_decide_by_the_threshold(skewed):
    model, plain, test = skewed
    doc, p = _between(plain, test, model)
    t = modelfile.load(str(model)).meta["decision"]["threshold"]
    p_t = 1 / (1 + math.exp(-t))
    decided = _probabilities(model, test)
    assert decided[doc]["label"] == "space" and _probabilities(plain, test)[doc]["label"] == "code"
    for i, row in decided.items():
        assert row["label"] == ("space" if p[i] >= p_t else "code"), (i, p[i], p_t)
        assert row["probabilities"]["space"] == p[i]  # the probabilities are the calibrated ones, unmoved
    tsv = {line.split("\t")[0]: line.split("\t")[1] for line in run(["predict", model, test]).stdout.splitlines()}
    assert tsv == {i: r["label"] for i, r in decided.items()}

    report = json.loads(run(["eval", model, test, "--json"]).stdout)
    truth = {i: i.split("/")[-2] for i in decided}
    tp = sum(truth[i] == "space" and r["label"] == "space" for i, r in decided.items())
    called = sum(r["label"] == "space" for r in decided.values())
    real = sum(v == "space" for v in truth.values())
    d = report["decision"]
    assert d["positive"] == "space" and d["threshold"] == pytest.approx(p_t)
    assert d["precision"] == pytest.approx(tp / called) and d["recall"] == pytest.approx(tp / real)
    assert d["f1"] == pytest.approx(2 * tp / (called + real))
    row = next(r for r in report["classes"] if r["class"] == "space")
    assert row["f1"] == pytest.approx(d["f1"])
    text = run(["eval", model, test]).stdout
    assert re.search(
        r"^decision: space when P\(space\) >= [\d.]+ \(--decide f1\): space precision [\d.]+, recall", text, re.M
    )
    assert "decision" not in json.loads(run(["eval", plain, test, "--json"]).stdout)

    text_of = (test / "space").parent  # the API classifies the document's text
    path = next(q for q in text_of.rglob("*.txt") if str(q) == doc)
    assert nbcli.load(model).classify([path.read_text(encoding="utf-8")])[0].label == "space"
    assert nbcli.load(plain).classify([path.read_text(encoding="utf-8")])[0].label == "code"


def test_filter_decides_by_the_threshold(skewed, tmp_path):
    model, plain, _ = skewed
    texts, _ = make_skewed_docs(seed=4)
    message = tmp_path / "message.txt"
    # filter reads mail: find a message whose P(space) under filter lies below 0.5, then move the threshold under it
    for text in texts:
        message.write_text(text, encoding="utf-8")
        header = run(["filter", plain, message]).stdout.splitlines()[0]
        label, p = re.match(r"X-NB-Class: (\w+); p=([\d.]+);", header).groups()
        p_space = float(p) if label == "space" else 1 - float(p)
        if label == "code" and 0.1 < p_space < 0.5:
            break
    else:
        pytest.fail("no message with P(space) in (0.1, 0.5)")
    _set_threshold(model, math.log((p_space - 1e-4) / (1 - p_space + 1e-4)))
    assert run(["filter", model, message]).stdout.startswith("X-NB-Class: space; ")
    _set_threshold(model, math.log((p_space + 1e-4) / (1 - p_space - 1e-4)))
    assert run(["filter", model, message]).stdout.startswith("X-NB-Class: code; ")


@pytest.fixture
def decided_mail(tmp_path):
    model = tmp_path / "mail-f1.nb"
    result = run(["train", SAMPLES / "mail" / "train", "--decide", "f1", "-o", model, "-q"])
    assert result.exit_code == 0, result.stderr
    assert model_info(model)["decision"]["positive"] == "spam"
    return model


def test_a_spam_models_threshold_is_its_spam_cut_off_in_filter_and_serve(decided_mail):
    ham = sorted((SAMPLES / "mail" / "test" / "ham").iterdir())[0]
    assert run(["filter", decided_mail, ham]).stdout.startswith("X-NB-Class: ham; ")
    p_spam = json.loads(run(["predict", decided_mail, ham, "--json"]).stdout)["probabilities"]["spam"]
    # the threshold just under this ham's P(spam): it becomes spam, below the default 0.98 cut-off
    t = math.log(p_spam / (1 - p_spam)) - 1e-3
    _set_threshold(decided_mail, t)
    assert run(["filter", decided_mail, ham]).stdout.startswith("X-NB-Class: spam; ")
    assert run(["filter", decided_mail, ham, "--spam-cutoff", "0.99"]).stdout.startswith("X-NB-Class: ham; ")
    predicted = json.loads(run(["predict", decided_mail, ham, "--json"]).stdout)
    assert predicted["verdict"] == "spam" and predicted["label"] == "spam"

    worker = daemon.Worker(Settings(str(decided_mail), None, None, [], 1), [])
    body = ham.read_bytes()
    reply = worker.respond(spamd.parse_head(b"CHECK SPAMC/1.5\r\nContent-length: %d\r\n\r\n" % len(body)), body)
    assert reply.startswith(b"SPAMD/1.1 0 EX_OK\r\nSpam: True ; ")
    assert f"/ {spamd.score_text(t)}".encode() in reply  # the required score is the threshold
    given = daemon.Worker(Settings(str(decided_mail), None, None, [], 1, cutoffs_given=True), [])
    reply = given.respond(spamd.parse_head(b"CHECK SPAMC/1.5\r\nContent-length: %d\r\n\r\n" % len(body)), body)
    assert reply.startswith(b"SPAMD/1.1 0 EX_OK\r\nSpam: False ; ")


def test_the_threshold_survives_dump_and_load(skewed, tmp_path):
    model, _, _ = skewed
    dumped = tmp_path / "model.dump"
    assert run(["dump", model, "-o", dumped]).exit_code == 0
    loaded = tmp_path / "loaded.nb"
    result = run(["load", dumped, "-o", loaded])
    assert result.exit_code == 0, result.stderr
    assert modelfile.load(str(loaded)).meta["decision"] == modelfile.load(str(model)).meta["decision"]
    assert model_info(loaded)["model_id"] == model_info(model)["model_id"]


def test_learn_keeps_the_threshold_and_says_when_it_is_stale(skewed, tmp_path, make_class_folders):
    model, _, _ = skewed
    before = modelfile.load(str(model)).meta["decision"]
    few = make_class_folders(*make_docs(10, seed=9, classes=["code", "space"]), name="few")
    result = run(["learn", model, few / "space", "--class", "space"])
    assert result.exit_code == 0, result.stderr
    assert "stale" not in result.stderr and model_info(model)["decision"]["stale"] is False
    many = make_class_folders(*make_docs(120, seed=10, classes=["code", "space"]), name="many")
    result = run(["learn", model, many / "code", "--class", "code"])
    assert result.exit_code == 0, result.stderr
    assert f"{model}'s decision threshold is stale: it was chosen when the model had 600 documents" in result.stderr
    info = model_info(model)["decision"]
    assert info["stale"] is True and info["threshold"] == before["threshold"]
    assert "stale: refit it with nbcli calibrate MODEL HELDOUT" in run(["info", model]).stdout
    result = run(["forget", model, many / "code", "--class", "code"])  # back to the documents it was chosen on
    assert result.exit_code == 0, result.stderr
    assert "stale" not in result.stderr and model_info(model)["decision"]["threshold"] == before["threshold"]


def test_calibrate_chooses_the_threshold_again_for_the_stored_objective(skewed):
    model, _, test = skewed
    before = modelfile.load(str(model)).meta["decision"]
    result = run(["calibrate", model, test, "--json"])
    assert result.exit_code == 0, result.stderr
    said = json.loads(result.stdout)["decision"]
    after = modelfile.load(str(model))
    assert said == after.meta["decision"]
    assert said["objective"] == "f1" and said["positive"] == "space" and said["documents"] == 600
    assert said["source"].startswith("held-out: ") and said["threshold"] != before["threshold"]
    assert "decision: space when P(space) >= " in result.stderr
    result = run(["calibrate", model, test, "--method", "none"])
    assert result.exit_code == 0, result.stderr
    raw = modelfile.load(str(model))
    assert raw.calibration is None and raw.meta["decision"]["threshold"] != said["threshold"]


def test_refusals_are_one_line(tmp_path, make_class_folders):
    corpus = make_class_folders(*make_docs(90, classes=["code", "food", "space"]))
    line = one_line_error(run(["train", corpus, "--decide", "f1", "-o", tmp_path / "m.nb"]))
    assert "--decide f1 needs a two-class model, and this one has 3 classes" in line
    assert "train one class against the rest" in line
    two = make_class_folders(*make_skewed_docs(), name="two")
    line = one_line_error(run(["train", two, "--decide", "f1", "--positive", "food", "-o", tmp_path / "m.nb"]))
    assert "--positive 'food' is not a class of the model" in line
    line = one_line_error(run(["train", two, "--decide", "balanced", "--unlabeled", two, "-o", tmp_path / "m.nb"]), 2)
    assert "--decide f1|balanced chooses its threshold by cross-validating the corpus" in line
    for table in ([], ["--features", "all"]):  # --positive alone was ignored: the model decided by the argmax
        line = one_line_error(run(["train", two, "--positive", "space", *table, "-o", tmp_path / "m.nb"]), 2)
        assert "--positive names the positive class of --decide f1 or --decide balanced: give one" in line
        assert not (tmp_path / "m.nb").exists()


def test_calibrate_none_chooses_the_threshold_on_the_raw_posteriors(tmp_path, make_class_folders):
    corpus = make_class_folders(*make_skewed_docs())
    model = tmp_path / "raw.nb"
    result = run(["train", corpus, "--decide", "balanced", "--calibrate", "none", "--positive", "space", "-o", model])
    assert result.exit_code == 0, result.stderr
    info = model_info(model)
    assert info["calibration"]["method"] is None and info["decision"]["objective"] == "balanced"


@pytest.mark.parametrize(
    "damage",
    [{"threshold": float("nan")}, {"threshold": "0.3"}, {"positive": "food"}, {"objective": "accuracy"}],
)
def test_a_damaged_decision_is_a_one_line_corrupt_model(skewed, damage):
    model, _, test = skewed
    classifier = modelfile.load(str(model))
    classifier.meta["decision"] = {**classifier.meta["decision"], **damage}
    modelfile.save(classifier, str(model))
    line = one_line_error(run(["predict", model, test]))
    assert "is corrupt ('meta' has a bad decision threshold)" in line


def test_a_table_model_decides_by_its_threshold_too(tmp_path):
    """--features: the threshold is chosen on the 5-fold scores the table
    model's map is fitted on; predict and eval decide by it."""
    import csv

    import numpy as np

    rng = np.random.default_rng(0)
    table = tmp_path / "rows.csv"
    with open(table, "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["x", "y", "label"])
        for _ in range(400):
            rare = rng.random() < 0.08
            out.writerow(
                [round(rng.normal(1.5 if rare else 0, 1), 3), round(rng.normal(0, 1), 3), "rare" if rare else "common"]
            )
    model = tmp_path / "rows.nb"
    result = run(["train", table, "--features", "all", "--decide", "balanced", "-o", model])
    assert result.exit_code == 0, result.stderr
    decision = model_info(model)["decision"]
    assert decision["positive"] == "rare" and decision["objective"] == "balanced" and decision["documents"] == 400
    p_t = decision["probability"]
    rows = [json.loads(line) for line in run(["predict", model, table, "--json"]).stdout.splitlines()]
    assert any(0.5 > r["probabilities"]["rare"] >= p_t for r in rows)  # the threshold moves some decisions
    for r in rows:
        assert r["label"] == ("rare" if r["probabilities"]["rare"] >= p_t else "common")
    report = json.loads(run(["eval", model, table, "--json"]).stdout)
    assert report["decision"]["positive"] == "rare" and report["decision"]["recall"] is not None
