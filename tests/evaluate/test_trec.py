"""The TREC spam track measures on hand-computed streams and against scikit-learn."""

import math

import numpy as np
import pytest
from sklearn import metrics as skm

from nbcli.evaluate import trec


def _stream(ham_errors: int, n_ham: int, spam_errors: int, n_spam: int):
    """n_ham ham then n_spam spam; the first ham_errors ham and the first
    spam_errors spam are called wrong."""
    is_spam = np.array([False] * n_ham + [True] * n_spam)
    called = is_spam.copy()
    called[:ham_errors] = True
    called[n_ham : n_ham + spam_errors] = False
    score = np.where(called, 5.0, -5.0)
    return is_spam, score, called


def test_lam_by_hand():
    # logit(1/4) = ln(1/3), logit(1/3) = ln(1/2); their mean is ln(1/6) / 2 = ln(1/sqrt 6)
    # logit^-1(ln(1/sqrt 6)) = (1/sqrt 6) / (1 + 1/sqrt 6) = 1 / (1 + sqrt 6) = 0.28989...
    assert trec.lam(0.25, 1 / 3) == pytest.approx(1 / (1 + math.sqrt(6)))
    assert trec.lam(0.25, 1 / 3) == pytest.approx(0.2898979)
    assert trec.lam(0.1, 0.1) == pytest.approx(0.1)  # equal rates: lam is that rate
    assert trec.lam(0.5, 0.5) == 0.5
    # the logit is infinite at 0 and 1; taken as given, unsmoothed
    assert trec.lam(0.0, 0.3) == 0.0 and trec.lam(1.0, 0.3) == 1.0
    with pytest.raises(ValueError, match="one rate is 0 and the other 1"):
        trec.lam(0.0, 1.0)
    with pytest.raises(ValueError, match="fraction"):
        trec.lam(1.5, 0.1)


def test_measures_by_hand():
    # 4 ham + 6 spam; 1 ham called spam, 2 spam called ham
    got = trec.measures(*_stream(1, 4, 2, 6))
    assert (got["messages"], got["spam"], got["ham"], got["errors"]) == (10, 6, 4, 3)
    assert got["accuracy_pct"] == pytest.approx(70.0)  # 7 of 10 right
    assert got["hm_pct"] == pytest.approx(25.0)  # 1 / 4
    assert got["sm_pct"] == pytest.approx(100 / 3)  # 2 / 6
    # lam from the smoothed rates: hm' = (1 + .5) / (4 + .5) = 1/3, odds 1/2;
    # sm' = (2 + .5) / (6 + .5) = 5/13, odds 5/8. The mean of the logits is the
    # log of the geometric mean of the odds, sqrt(5/16) = sqrt(5)/4 = 0.559017;
    # lam = 0.559017 / 1.559017 = 0.358570
    assert got["lam_pct"] == pytest.approx(100 * (math.sqrt(5) / 4) / (1 + math.sqrt(5) / 4))
    assert got["lam_pct"] == pytest.approx(35.8570, abs=1e-4)
    # scores +5 for called spam, -5 for called ham; 6 x 4 = 24 (spam, ham) pairs:
    # 4 right spam (+5) vs 3 right ham (-5): 12 pairs in order; 4 right
    # spam vs 1 wrong ham (+5): 4 ties; 2 wrong spam (-5) vs 3 right ham: 6 ties; 2 wrong
    # spam vs 1 wrong ham: 2 pairs wrong. AUC = (12 + (4 + 6) / 2) / 24 = 17/24
    assert got["one_minus_roca_pct"] == pytest.approx(100 * 7 / 24)


def test_zero_errors_follow_the_smoothing_rule():
    got = trec.measures(*_stream(0, 4, 0, 6))
    assert got["hm_pct"] == 0.0 and got["sm_pct"] == 0.0 and got["errors"] == 0 and got["accuracy_pct"] == 100.0
    # hm' = 0.5 / 4.5 = 1/9, odds 1/8; sm' = 0.5 / 6.5 = 1/13, odds 1/12;
    # geometric mean of the odds 1/sqrt(96) = 0.102062; lam = 0.102062 / 1.102062 = 0.092610
    assert got["lam_pct"] == pytest.approx(100 / (1 + math.sqrt(96)))
    assert got["lam_pct"] == pytest.approx(9.2610, abs=1e-4)
    assert got["one_minus_roca_pct"] == 0.0
    # every ham wrong: hm' = 4.5 / 4.5 = 1, logit +inf, lam 100%
    assert trec.measures(*_stream(4, 4, 0, 6))["lam_pct"] == 100.0
    # more messages, same perfection: a smaller lam
    assert trec.measures(*_stream(0, 400, 0, 600))["lam_pct"] < got["lam_pct"]


def test_undefined_measures_are_none():
    only_spam = trec.measures([True, True], [1.0, -1.0], [True, False])
    assert only_spam["hm_pct"] is None and only_spam["lam_pct"] is None and only_spam["one_minus_roca_pct"] is None
    assert only_spam["sm_pct"] == 50.0 and only_spam["ham"] == 0 and only_spam["accuracy_pct"] == 50.0
    only_ham = trec.measures([False], [0.0], [False])
    assert only_ham["sm_pct"] is None and only_ham["hm_pct"] == 0.0 and only_ham["lam_pct"] is None
    empty = trec.measures([], [], [])
    assert empty["messages"] == 0 and empty["accuracy_pct"] is None and empty["one_minus_roca_pct"] is None
    with pytest.raises(ValueError, match="differ in length"):
        trec.measures([True], [1.0, 2.0], [True])
    with pytest.raises(ValueError, match="NaN"):
        trec.measures([True, False], [math.nan, 1.0], [True, False])


def test_roc_area_with_ties_and_infinities_by_hand():
    # spam scores 3, 2, +inf; ham 2, 1, -inf. Of the 9 (spam, ham) pairs all are
    # in order but (2, 2), a tie counting one half: AUC = 8.5 / 9, 1-ROCA = 0.5 / 9
    is_spam = np.array([True, True, True, False, False, False])
    score = np.array([3.0, 2.0, math.inf, 2.0, 1.0, -math.inf])
    got = trec.measures(is_spam, score, score > 0)
    assert got["one_minus_roca_pct"] == pytest.approx(100 * 0.5 / 9)
    # huge log-odds keep their order
    assert trec.measures(is_spam, score * 1e300, score > 0)["one_minus_roca_pct"] == pytest.approx(100 * 0.5 / 9)


def test_one_minus_roca_agrees_with_scikit_learn():
    rng = np.random.default_rng(7)
    for _ in range(30):
        n = int(rng.integers(2, 200))
        is_spam = rng.random(n) < 0.6
        if is_spam.all() or not is_spam.any():
            continue
        score = np.round(rng.normal(size=n) + 1.5 * is_spam, 1)  # rounding makes ties
        got = trec.measures(is_spam, score, score > 0)["one_minus_roca_pct"]
        assert got == pytest.approx((1 - skm.roc_auc_score(is_spam, score)) * 100)


def test_learning_curve_on_a_tiny_stream():
    # 40 messages, wrong at messages 1, 2, 3 and 40; window = max(1, 40 // 20) = 2
    is_spam = np.array([True, False] * 20)
    called = is_spam.copy()
    called[[0, 1, 2, 39]] = ~called[[0, 1, 2, 39]]
    seen, errors, rate = trec.learning_curve(is_spam, called, points=4)
    assert seen.tolist() == [10, 20, 30, 40]  # ceil(i * 40 / 4)
    assert errors.tolist() == [3, 3, 3, 4]
    # messages 9-10, 19-20, 29-30: no error; 39-40: one of two
    assert rate.tolist() == [0.0, 0.0, 0.0, 50.0]
    seen, errors, rate = trec.learning_curve(is_spam, called)  # 200 points > 40 messages: every message
    assert seen.tolist() == list(range(1, 41)) and errors[:4].tolist() == [1, 2, 3, 3]
    # at 1 message seen only that one is in the window: 100%; at 2 and 3, both wrong: 100%; at 4, 1 of 2
    assert rate[:5].tolist() == [100.0, 100.0, 100.0, 50.0, 0.0]
    seen, _, _ = trec.learning_curve(is_spam[:10], called[:10], points=3)
    assert seen.tolist() == [4, 7, 10]  # ceil(10/3), ceil(20/3), 10
    seen, errors, rate = trec.learning_curve([], [])
    assert len(seen) == len(errors) == len(rate) == 0
    with pytest.raises(ValueError, match="points"):
        trec.learning_curve(is_spam, called, points=0)
