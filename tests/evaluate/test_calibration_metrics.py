"""Calibration metrics on hand-computed cases and against scikit-learn."""

import math

import numpy as np
import pytest
from sklearn.metrics import brier_score_loss

from nbcli.errors import NbcliError
from nbcli.evaluate import calibration as cal


def test_reliability_and_ece_by_hand_with_four_bins():
    prob = [0.1, 0.2, 0.3, 0.6, 0.9, 1.0]
    correct = [False, True, False, True, True, True]
    rows = cal.reliability(prob, correct, bins=4)
    # [0, .25): 0.1, 0.2    -> confidence .15, accuracy 1/2, gap  .35
    # [.25, .5): 0.3        -> confidence .3,  accuracy 0,   gap -.3
    # [.5, .75): 0.6        -> confidence .6,  accuracy 1,   gap  .4
    # [.75, 1]: 0.9, 1.0    -> confidence .95, accuracy 1,   gap  .05 (1.0 falls in the last bin)
    expected = [
        (0.0, 0.25, 2, 0.15, 0.5, 0.35),
        (0.25, 0.5, 1, 0.3, 0.0, -0.3),
        (0.5, 0.75, 1, 0.6, 1.0, 0.4),
        (0.75, 1.0, 2, 0.95, 1.0, 0.05),
    ]
    assert len(rows) == len(expected)
    for row, (low, high, count, confidence, accuracy, gap) in zip(rows, expected):
        assert (row["low"], row["high"], row["count"]) == (low, high, count)
        assert row["confidence"] == pytest.approx(confidence)
        assert row["accuracy"] == pytest.approx(accuracy)
        assert row["gap"] == pytest.approx(gap)
    # ECE = (2 * .35 + 1 * .3 + 1 * .4 + 2 * .05) / 6 = 1.5 / 6 = .25
    assert cal.expected_calibration_error(prob, correct, bins=4) == pytest.approx(0.25)


def test_reliability_and_ece_by_hand_with_the_default_fifteen_bins():
    prob = [0.95, 0.95, 0.95, 0.95, 0.5]
    correct = [True, True, True, False, True]
    # 0.5 * 15 = 7.5   -> bin 7, [7/15, 8/15): confidence .5, accuracy 1, gap .5
    # 0.95 * 15 = 14.25 -> bin 14, [14/15, 1]: confidence .95, accuracy 3/4, gap -.2; empty bins are left out
    rows = cal.reliability(prob, correct)
    assert [(r["low"], r["high"], r["count"]) for r in rows] == [(7 / 15, 8 / 15, 1), (14 / 15, 1.0, 4)]
    assert rows[0]["gap"] == pytest.approx(0.5) and rows[1]["gap"] == pytest.approx(-0.2)
    # ECE = (1 * .5 + 4 * .2) / 5 = 1.3 / 5 = .26
    assert cal.expected_calibration_error(prob, correct) == pytest.approx(0.26)


def test_bin_edges_are_half_open():
    edges = np.arange(16) / 15
    rows = cal.reliability(edges, np.ones(16, dtype=bool))
    # b/15 opens bin b; 15/15 = 1.0 joins the last bin
    assert [r["count"] for r in rows] == [1] * 14 + [2]
    assert all(r["low"] <= p < r["high"] for r, p in zip(rows, edges[:14]))


def test_ece_matches_a_plain_loop():
    rng = np.random.default_rng(5)
    prob = rng.random(500)
    correct = rng.random(500) < prob**2
    total = 0.0
    for b in range(10):
        inside = (prob >= b / 10) & ((prob < (b + 1) / 10) | (b == 9))
        if inside.any():
            total += inside.sum() / 500 * abs(correct[inside].mean() - prob[inside].mean())
    assert cal.expected_calibration_error(prob, correct, bins=10) == pytest.approx(total)


def test_all_in_one_bin_and_empty_input():
    rows = cal.reliability([1.0, 1.0, 1.0], [True, True, False])
    assert len(rows) == 1 and rows[0]["count"] == 3 and rows[0]["low"] == 14 / 15
    # one bin: ECE = |2/3 - 1| = 1/3
    assert cal.expected_calibration_error([1.0, 1.0, 1.0], [True, True, False]) == pytest.approx(1 / 3)
    assert cal.reliability([], []) == []
    assert cal.expected_calibration_error([], []) is None
    assert cal.brier(np.zeros((0, 2)), []) is None
    assert cal.binary_brier([], []) is None


def test_bad_input_is_refused():
    with pytest.raises(NbcliError, match="outside"):
        cal.reliability([0.5, 1.5], [True, True])
    with pytest.raises(NbcliError, match="outside"):
        cal.reliability([np.nan], [True])
    with pytest.raises(NbcliError, match="length"):
        cal.reliability([0.5], [True, False])
    with pytest.raises(NbcliError, match="out of range"):
        cal.brier([[0.5, 0.5]], [2])
    with pytest.raises(NbcliError, match="bins"):
        cal.reliability([0.5], [True], bins=0)


def test_multiclass_brier_by_hand():
    proba = [[0.7, 0.2, 0.1], [0.1, 0.3, 0.6]]
    # row 0, class 0: .3^2 + .2^2 + .1^2 = .14; row 1, class 1: .1^2 + .7^2 + .6^2 = .86; mean .5
    assert cal.brier(proba, [0, 1]) == pytest.approx(0.5)
    assert cal.brier([[1.0, 0.0], [0.0, 1.0]], [0, 1]) == 0.0
    assert cal.brier([[0.0, 1.0]], [0]) == 2.0  # the maximum


def test_two_class_brier_is_twice_scikit_learns():
    rng = np.random.default_rng(7)
    p = rng.random(200)
    y = rng.random(200) < p
    sk = brier_score_loss(y, p)
    assert cal.binary_brier(p, y) == pytest.approx(sk)
    assert cal.brier(np.c_[1 - p, p], y.astype(int)) == pytest.approx(2 * sk)


def test_summary_skips_unknown_classes():
    proba = np.array([[0.7, 0.2, 0.1], [0.1, 0.3, 0.6], [0.2, 0.2, 0.6]])
    with np.errstate(divide="ignore"):
        out = cal.summary(np.log(proba), np.array([0, 1, -1]))
    # documents 0 and 1: Brier .5 (as above); confidences .7 (right) and .6 (wrong)
    # .7 in [10/15, 11/15): gap 1 - .7 = .3; .6 in [9/15, 10/15): gap 0 - .6 = -.6; ECE = (.3 + .6) / 2 = .45
    assert out["documents"] == 2 and out["bins"] == 15
    assert out["brier"] == pytest.approx(0.5)
    assert out["ece"] == pytest.approx(0.45)
    assert [r["count"] for r in out["reliability"]] == [1, 1]
    empty = cal.summary(np.zeros((1, 2)), np.array([-1]))
    assert empty == {"documents": 0, "brier": None, "ece": None, "bins": 15, "reliability": []}


def test_summary_with_certain_predictions():
    # log P = 0 and -inf: confidence exactly 1, all right -> perfectly calibrated
    log_proba = np.array([[0.0, -np.inf], [-np.inf, 0.0]])
    out = cal.summary(log_proba, np.array([0, 1]), bins=10)
    assert out["brier"] == 0.0 and out["ece"] == 0.0 and out["bins"] == 10


def test_unsure_band_by_hand():
    log_odds = [-5, -1, -0.5, 0.2, 3, 6]
    is_spam = [False, False, True, False, True, True]
    out = cal.unsure_band(log_odds, is_spam, 0.34)
    # k = floor(.34 * 6) = 2; |log-odds| sorted .2, .5, 1, 3, 5, 6: t = the 3rd, 1
    # unsure |x| < 1: 0.2 and -0.5 -> 2/6 (exactly k)
    # decided: -5 ham ok, -1 ham ok (it sits at t), 3 spam ok, 6 spam ok -> 4/4
    assert out["target"] == 0.34
    assert out["threshold_log_odds"] == 1.0
    assert out["unsure"] == pytest.approx(2 / 6)
    assert out["decided"] == 4
    assert out["decided_accuracy"] == pytest.approx(1.0)
    assert out["spam_cutoff"] == pytest.approx(1 / (1 + math.exp(-1.0)))
    assert out["ham_cutoff"] == pytest.approx(1 / (1 + math.exp(1.0)))


def test_unsure_band_with_nothing_unsure():
    # target .1: k = floor(.3) = 0 -> t = the smallest |x|, 0: decided by sign; log-odds 0 is ham (wrong here)
    out = cal.unsure_band([0.0, 1.0, -1.0], [True, True, False], 0.1)
    assert out["threshold_log_odds"] == 0.0 and out["unsure"] == 0.0 and out["decided"] == 3
    assert out["spam_cutoff"] == 0.5 and out["ham_cutoff"] == 0.5
    assert out["decided_accuracy"] == pytest.approx(2 / 3)
    # k counts with a little slack: .3 * 10 is 2.9999999999999996 in floats, k is still 3
    out = cal.unsure_band(np.arange(1.0, 11.0), np.ones(10, dtype=bool), 0.3)
    assert out["threshold_log_odds"] == 4.0 and out["unsure"] == pytest.approx(0.3)


def test_unsure_band_ties_at_t_are_decided():
    # k = floor(.5 * 4) = 2, t = the 3rd |x| = 1; all four |log-odds| are 1, none below: nothing unsure
    out = cal.unsure_band([-1.0, 1.0, -1.0, 1.0], [False, True, True, True], 0.5)
    assert out["threshold_log_odds"] == 1.0 and out["unsure"] == 0.0 and out["decided"] == 4
    assert out["decided_accuracy"] == pytest.approx(0.75)


def test_unsure_band_with_infinite_log_odds():
    log_odds = [-np.inf, -2.0, 0.1, np.inf, np.inf]
    is_spam = [False, False, True, True, True]
    # k = 1: |x| sorted .1, 2, inf, inf, inf -> t = the 2nd, 2; 0.1 unsure; -2 and -inf ham, inf spam: all right
    out = cal.unsure_band(log_odds, is_spam, 0.2)
    assert out["threshold_log_odds"] == 2.0 and out["unsure"] == pytest.approx(0.2)
    assert out["decided"] == 4 and out["decided_accuracy"] == 1.0
    # k = 5: t = inf; every finite score is unsure, the infinite ones are decided
    out = cal.unsure_band(log_odds, is_spam, 1.0)
    assert out["threshold_log_odds"] == math.inf
    assert out["spam_cutoff"] == 1.0 and out["ham_cutoff"] == 0.0
    assert out["unsure"] == pytest.approx(0.4) and out["decided"] == 3 and out["decided_accuracy"] == 1.0


def test_unsure_band_edge_cases():
    out = cal.unsure_band([], [], 0.5)
    assert out["threshold_log_odds"] == 0.0 and out["unsure"] == 0.0
    assert out["decided"] == 0 and out["decided_accuracy"] is None
    with pytest.raises(NbcliError, match="outside"):
        cal.unsure_band([1.0], [True], 1.5)
    with pytest.raises(NbcliError, match="NaN"):
        cal.unsure_band([np.nan], [True], 0.5)


# -- nbcli eval --calibration / --target-unsure --------------------------------------


def test_eval_reports_calibration_and_the_unsure_band(tmp_path):
    import json

    from nbcli.store import modelfile

    from conftest import SAMPLES, run

    model = tmp_path / "m.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", model, "-q"]).exit_code == 0
    test = SAMPLES / "mail" / "test"
    result = run(["eval", model, test, "--json", "--calibration", "--target-unsure", "0.1"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    # the same figures as the module's, on the model's own log-probabilities
    clf = modelfile.load(str(model))
    paths = sorted(test.glob("*/*"))
    log_proba = clf.log_proba([p.read_bytes() for p in paths], ["mail"] * len(paths))
    truth = np.array([clf.classes.index(p.parent.name) for p in paths])
    want = cal.summary(log_proba, truth)
    assert report["calibration"]["brier"] == pytest.approx(want["brier"])
    assert report["calibration"]["ece"] == pytest.approx(want["ece"])
    assert len(report["calibration"]["reliability"]) == len(want["reliability"])
    s = clf.classes.index("spam")
    band = cal.unsure_band(log_proba[:, s] - log_proba[:, 1 - s], truth == s, 0.1)
    assert report["spam_filter"]["target_unsure"] == pytest.approx(band)
    assert report["spam_filter"]["target_unsure"]["unsure"] <= 0.1
    text = run(["eval", model, test, "--calibration", "--target-unsure", "0.1"]).stdout
    assert "expected calibration error" in text and "for at most 0.1 unsure" in text
    limited = run(["eval", model, test, "--calibration", "--fail-over", "ece=0.0000001"])
    assert limited.exit_code == 1 and "ece" in limited.stderr


def test_eval_calibration_plot_is_the_reliability_diagram(tmp_path):
    import xml.etree.ElementTree as ET

    from conftest import SAMPLES, run

    model, picture = tmp_path / "m.nb", tmp_path / "reliability.svg"
    assert run(["train", SAMPLES / "mail" / "train", "-o", model, "-q"]).exit_code == 0
    result = run(["eval", model, SAMPLES / "mail" / "test", "--calibration", "--json", "--plot", picture])
    assert result.exit_code == 0, result.stderr
    import json

    cal = json.loads(result.stdout)["calibration"]
    bins, before = cal["reliability"], cal["uncalibrated"]["reliability"]
    tree = ET.parse(picture)
    circles = [e for e in tree.iter() if e.tag.endswith("circle")]
    # one dot per non-empty bin, after the model's calibration map and (grey) before it
    assert len(circles) == len(bins) + len(before) and len(bins) >= 1
    grey = [c for c in circles if c.get("fill") == "#7f8c8d"]
    assert len(grey) == len(before)
    texts = " ".join(e.text or "" for e in tree.iter() if e.tag.endswith("text"))
    assert "reliability" in texts and "accuracy" in texts
    assert f"before calibration, ECE {cal['uncalibrated']['ece']:.4f}" in texts
    assert f"calibrated, ECE {cal['ece']:.4f}" in texts

    raw = tmp_path / "raw.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", raw, "-q", "--calibrate", "none"]).exit_code == 0
    result = run(["eval", raw, SAMPLES / "mail" / "test", "--calibration", "--json", "--plot", picture])
    assert "uncalibrated" not in json.loads(result.stdout)["calibration"]  # nothing to compare with
    circles = [e for e in ET.parse(picture).iter() if e.tag.endswith("circle")]
    assert len(circles) == len(json.loads(result.stdout)["calibration"]["reliability"])
