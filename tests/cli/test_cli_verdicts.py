"""Issue 25: one verdict everywhere, and explanations that say their unit.

For a two-class spam model, predict, eval, filter and serve give the same
message the same verdict (spam / unsure / ham, from the calibrated P(spam)
and the cut-offs), and every explanation says that its numbers are the
event model's raw log-odds, not those of the (calibrated) p shown.
"""

import collections
import json
import re

import numpy as np
import pytest

from nbcli.evaluate import binary as bm
from nbcli.spam import filtering

from conftest import SAMPLES, run

TEST = SAMPLES / "mail" / "test"
RAW = "raw log-odds, before calibration"
FROM_LINE = b"From sender@example.org Tue Mar  3 10:00:00 2026\n"


@pytest.fixture(scope="module")
def mail_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "mail.nb"  # calibrated, as train makes it by default
    assert run(["train", SAMPLES / "mail" / "train", "-o", path, "-q"]).exit_code == 0
    return path


@pytest.fixture(scope="module")
def test_mbox(tmp_path_factory):
    files = sorted(TEST.glob("*/*.eml"))
    path = tmp_path_factory.mktemp("mbox") / "test.mbox"
    quoted = [re.sub(rb"(?m)^From ", b">From ", f.read_bytes()).rstrip(b"\n") + b"\n" for f in files]
    path.write_bytes(b"\n".join(FROM_LINE + message for message in quoted))
    return path, [f.parent.name for f in files]


def filter_verdicts(model, mbox, *options) -> list[str]:
    result = run(["filter", model, mbox, *options])
    assert result.exit_code == 0, result.stderr
    return [v.decode() for v in re.findall(rb"(?m)^X-NB-Class: ([a-z]+);", result.stdout_bytes)]


@pytest.mark.parametrize("cutoffs", [[], ["--spam-cutoff", "0.6", "--ham-cutoff", "0.3"]], ids=["default", "given"])
def test_predict_reports_the_verdict_filter_gives(mail_model, test_mbox, cutoffs):
    mbox, truth = test_mbox
    tsv = run(["predict", mail_model, mbox, *cutoffs])
    assert tsv.exit_code == 0, tsv.stderr
    rows = [line.split("\t") for line in tsv.stdout.splitlines()]
    assert len(rows) == len(truth) and all(len(r) == 4 for r in rows)  # the verdict is one column, at the end
    predicted = [r[3] for r in rows]
    assert predicted == filter_verdicts(mail_model, mbox, *cutoffs)
    as_json = [json.loads(line) for line in run(["predict", mail_model, mbox, "--json", *cutoffs]).stdout.splitlines()]
    assert [r["verdict"] for r in as_json] == predicted
    assert [[r["id"], r["label"], repr(r["probability"])] for r in as_json] == [r[:3] for r in rows]
    # the verdict comes from P(spam) and the cut-offs, not from the most probable class: they differ here
    assert set(predicted) == {"spam", "unsure", "ham"}
    assert any(r[1] != r[3] for r in rows)
    spam_cutoff, ham_cutoff = (float(cutoffs[1]), float(cutoffs[3])) if cutoffs else (0.98, 0.05)
    for r, rec in zip(rows, as_json):
        p = rec["probabilities"]["spam"]  # the calibrated P(spam) predict prints
        assert r[3] == ("spam" if p >= spam_cutoff else "ham" if p <= ham_cutoff else "unsure")


def test_serve_gives_the_same_verdicts(mail_model, test_mbox):
    from nbcli.spam import daemon as serve
    from nbcli.spam import spamd

    mbox, _ = test_mbox
    predicted = [line.split("\t")[3] for line in run(["predict", mail_model, mbox]).stdout.splitlines()]
    # the messages as filter and predict read them: cut from the same mbox
    messages = [m.rstrip(b"\n") + b"\n" for m in mbox.read_bytes().split(FROM_LINE)[1:]]
    assert len(messages) == len(predicted)
    settings = serve.Settings(str(mail_model), None, None, [], 1)
    worker = serve.Worker(settings, [])
    served = []
    for body in messages:
        head = spamd.parse_head(b"SYMBOLS SPAMC/1.5\r\nContent-length: %d\r\n\r\n" % len(body))
        reply = worker.respond(head, body).decode()
        served.append(re.search(r"NBCLI_(SPAM|UNSURE|HAM)", reply).group(1).lower())
    assert served == predicted
    # REPORT's evidence says its unit: the raw log-odds, not those of the score beside it
    head = spamd.parse_head(b"REPORT SPAMC/1.5\r\nContent-length: %d\r\n\r\n" % len(messages[0]))
    report = worker.respond(head, messages[0]).decode()
    assert f" contribution  term  (contributions in {RAW})\r\n" in report


def test_eval_counts_the_verdicts_beside_the_argmax_figures(mail_model):
    lines = run(["predict", mail_model, TEST, "--json"]).stdout.splitlines()
    records = [json.loads(line) for line in lines]
    counted = collections.Counter((r["id"].split("/")[-2], r["verdict"]) for r in records)
    expected = {c: {v: counted[c, v] for v in ("ham", "unsure", "spam")} for c in ("ham", "spam")}
    report = json.loads(run(["eval", mail_model, TEST, "--json"]).stdout)
    assert report["spam_filter"]["verdicts"] == expected
    assert sum(expected["ham"].values()) == 105 and expected["ham"]["unsure"] > 0
    # the same from the predictions, and in the report for people, under the argmax figures
    again = run(["eval", "--predictions", "-", "--json"], input="\n".join(lines) + "\n")
    assert json.loads(again.stdout)["spam_filter"]["verdicts"] == expected
    text = run(["eval", mail_model, TEST]).stdout
    assert text.index("confusion matrix") < text.index("verdicts at the cut-offs")
    table = text[text.index("verdicts at the cut-offs") :].splitlines()[1:4]
    assert table[0].split() == ["ham", "unsure", "spam"]
    for line, cls in zip(table[1:], ("ham", "spam")):
        assert line.split() == [cls, *(str(expected[cls][v]) for v in ("ham", "unsure", "spam"))]


def test_no_verdict_for_a_model_that_is_not_a_spam_model(tmp_path, mail_model):
    topics = tmp_path / "topics.nb"
    assert run(["train", SAMPLES / "topics" / "train.jsonl", "-o", topics, "-q"]).exit_code == 0
    tsv = run(["predict", topics, SAMPLES / "topics" / "test.jsonl"])
    assert tsv.exit_code == 0 and {len(line.split("\t")) for line in tsv.stdout.splitlines()} == {3}
    rec = json.loads(run(["predict", topics, SAMPLES / "topics" / "test.jsonl", "--json"]).stdout.splitlines()[0])
    assert "verdict" not in rec
    # cut-off options that could change nothing are refused in one line
    for options in (["--spam-cutoff", "0.9"], ["--spam-class", "football"]):
        bad = run(["predict", topics, SAMPLES / "topics" / "test.jsonl", *options])
        assert bad.exit_code == 1 and bad.stdout == "" and bad.stderr.count("\n") == 1, bad.stderr
        assert "two-class model" in bad.stderr
    # --spam-class names the spam class of a spam model; one it does not have is refused too
    assert run(["predict", mail_model, TEST / "ham" / "0003.eml", "--spam-class", "junk"]).exit_code == 1
    flipped = run(["predict", mail_model, TEST / "ham" / "0001.eml", "--spam-class", "ham"]).stdout
    assert flipped.split("\t")[3].strip() == "spam"  # ham is the "spam" class now
    usage = run(["predict", mail_model, TEST / "ham" / "0003.eml", "--ham-cutoff", "0.9", "--spam-cutoff", "0.5"])
    assert usage.exit_code == 2 and "--ham-cutoff" in usage.stderr


def test_explanations_say_their_unit(tmp_path, mail_model, test_mbox):
    doc = TEST / "ham" / "0002.eml"
    rec = json.loads(run(["predict", mail_model, doc, "--json", "--explain", "3"]).stdout)
    e = rec["explanation"]
    assert e["unit"] == RAW
    calibrated = np.log(rec["probabilities"]["ham"]) - np.log(rec["probabilities"]["spam"])
    assert abs(e["log_odds"] - calibrated) > 1  # not the log-odds of the p shown: hence the label
    fields = run(["predict", mail_model, doc, "--explain", "3"]).stdout.rstrip("\n").split("\t")
    assert fields[-2:] == [RAW, rec["verdict"]] and len(fields) == 3 + 9 + 2
    header = run(["filter", mail_model, doc, "--explain", "3"]).stdout_bytes.split(b"\n\n")[0]
    evidence = re.search(rb"X-NB-Evidence: ([^\n]*(?:\n\t[^\n]*)*)", header).group(1).replace(b"\n\t", b" ")
    assert evidence.startswith(b"versus spam; in " + RAW.encode() + b"; log-odds +")
    # an uncalibrated model's log-odds are those of its p: said so, without "raw"
    plain = tmp_path / "plain.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", plain, "-q", "--calibrate", "none"]).exit_code == 0
    rec = json.loads(run(["predict", plain, doc, "--json", "--explain", "3"]).stdout)
    assert rec["explanation"]["unit"] == "log-odds"
    lp = rec["log_probabilities"]
    assert rec["explanation"]["log_odds"] == pytest.approx(lp["ham"] - lp["spam"], rel=1e-9)


def test_unknown_terms_that_contribute_nothing_are_not_listed(tmp_path, mail_model):
    doc = TEST / "spam" / "0004.eml"
    rec = json.loads(run(["predict", mail_model, doc, "--json", "--explain", "3"]).stdout)
    assert rec["explanation"]["unknown"]["count"] > 0 and rec["explanation"]["unknown"]["contribution"] == 0
    assert "(unknown)" not in run(["predict", mail_model, doc, "--explain", "3"]).stdout
    assert b"unknown terms" not in run(["filter", mail_model, doc, "--explain", "3"]).stdout_bytes
    # with --unknown-terms smooth they do count, and are listed
    smooth = tmp_path / "smooth.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", smooth, "-q", "--unknown-terms", "smooth"]).exit_code == 0
    rec = json.loads(run(["predict", smooth, doc, "--json", "--explain", "3"]).stdout)
    assert rec["explanation"]["unknown"]["contribution"] != 0
    fields = run(["predict", smooth, doc, "--explain", "3"]).stdout.rstrip("\n").split("\t")
    assert fields[12:14] == ["(unknown)", str(rec["explanation"]["unknown"]["count"])]
    assert b"unknown terms" in run(["filter", smooth, doc, "--explain", "3"]).stdout_bytes


def test_one_rule_for_spam_models_and_their_verdicts():
    assert bm.spam_index(["ham", "spam"], "spam") == 1
    assert bm.spam_index(["junk", "ok"], "junk") == 0
    assert bm.spam_index(["a", "b", "spam"], "spam") is None
    assert bm.spam_index(["ham", "good"], "spam") is None
    with np.errstate(divide="ignore"):
        log_proba = np.log(np.array([[0.99, 0.01], [0.5, 0.5], [0.01, 0.99], [0.05, 0.95], [0.0, 1.0]]))
    codes, p = bm.verdict_codes(log_proba, 1, 0.95, 0.1)
    assert [bm.VERDICTS[c] for c in codes] == ["ham", "unsure", "spam", "spam", "spam"]
    for row, code in zip(log_proba, codes):  # one row at a time (filter, serve) as a batch (predict, eval)
        assert bm.verdict_codes(row, 1, 0.95, 0.1)[0] == code
    verdicts = filtering.Verdicts(["ham", "spam"], "spam", 0.95, 0.1)
    assert verdicts.names(log_proba) == [verdicts.of(row)[0] for row in log_proba]
    assert filtering.Verdicts(["a", "b", "c"]).names(np.log(np.full((2, 3), 1 / 3))) is None
    counts = bm.verdict_counts(codes, np.array([False, False, True, False, True]), "spam", "ham")
    assert counts == {"ham": {"ham": 1, "unsure": 1, "spam": 1}, "spam": {"ham": 0, "unsure": 0, "spam": 2}}
