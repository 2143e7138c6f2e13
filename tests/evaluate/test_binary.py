"""Spam-filter metrics against scikit-learn and hand-made score lists."""

import numpy as np
import pytest
from sklearn import metrics as skm

from nbcli.evaluate import binary as bm


def test_auc_and_roc_agree_with_scikit_learn():
    rng = np.random.default_rng(3)
    for _ in range(20):
        n = int(rng.integers(2, 60))
        scores = np.round(rng.normal(size=n), 1)  # rounding makes ties
        positive = rng.random(n) < 0.4
        if positive.all() or not positive.any():
            continue
        assert bm.roc_auc(scores, positive) == pytest.approx(skm.roc_auc_score(positive, scores))
        fpr, tpr = bm.roc_curve(scores, positive)
        sk_fpr, sk_tpr, _ = skm.roc_curve(positive, scores, drop_intermediate=False)
        assert np.allclose(fpr, sk_fpr) and np.allclose(tpr, sk_tpr)
    assert bm.roc_auc([0.1, 0.2], [True, True]) is None


def test_target_fpr_cutoff_on_a_hand_made_list():
    # ten ham, five spam; log-odds
    ham = [-50, -40, -30, -20, -10, -5, 0, 5, 30, 100]
    spam = [2, 6, 31, 200, 300]
    scores = np.array(ham + spam, dtype=float)
    is_spam = np.array([False] * 10 + [True] * 5)
    # 0.1 of ten ham: one may be spam -> cut at the second-highest ham, 30
    got = bm.cutoff_for_fpr(scores, is_spam, 0.1)
    assert got["log_odds_cutoff"] == 30 and got["ham_fpr"] == 0.1 and got["spam_recall"] == 3 / 5
    # under one ham: none may be spam -> cut at the highest ham
    got = bm.cutoff_for_fpr(scores, is_spam, 0.001)
    assert got["log_odds_cutoff"] == 100 and got["ham_fpr"] == 0 and got["spam_recall"] == 2 / 5
    assert got["spam_cutoff"] == 1.0  # a probability cannot tell 100 from 30: hence log-odds
    # 0.25: two ham may be spam -> cut at the third, 5
    got = bm.cutoff_for_fpr(scores, is_spam, 0.25)
    assert got["log_odds_cutoff"] == 5 and got["ham_fpr"] == 0.2 and got["spam_recall"] == 4 / 5
    got = bm.cutoff_for_fpr(scores, is_spam, 1.0)
    assert got["log_odds_cutoff"] is None and got["spam_recall"] == 1.0


def test_rates_at_cutoffs():
    p = np.array([0.0, 0.5, 0.995, 1.0, 0.002, 0.99])
    is_spam = np.array([False, False, False, True, True, True])
    got = bm.at_cutoffs(p, is_spam, 0.99, 0.01)
    # decided: all but 0.5; right: 0.0 (ham), 1.0 and 0.99 (spam); wrong: 0.995 (a ham), 0.002 (a spam)
    assert got == pytest.approx({"ham_fpr": 1 / 3, "spam_recall": 2 / 3, "unsure": 1 / 6, "decided_accuracy": 3 / 5})


def test_target_fpr_cutoff_is_the_lowest_that_keeps_the_rate():
    """Against brute force over every candidate cut-off, with ties."""
    rng = np.random.default_rng(11)
    for _ in range(200):
        n = int(rng.integers(1, 40))
        scores = rng.integers(-5, 6, size=n).astype(float)
        is_spam = rng.random(n) < 0.5
        target = float(rng.choice([0.0, 0.05, 0.1, 0.25, 0.5]))
        got = bm.cutoff_for_fpr(scores, is_spam, target)
        n_ham = int((~is_spam).sum())

        def fpr(t, scores=scores, is_spam=is_spam, n_ham=n_ham):
            return ((scores > t) & ~is_spam).sum() / n_ham if n_ham else 0.0

        ok = [t for t in np.unique(np.r_[scores, -np.inf]) if fpr(t) <= target + 1e-12]
        lowest = min(ok)
        if lowest == -np.inf:  # only when there is no ham: everything may be spam
            assert n_ham == 0 and got["log_odds_cutoff"] is None and got["spam_recall"] == 1.0
        else:
            # no lower cut-off keeps the rate; this one does
            assert got["log_odds_cutoff"] is not None and fpr(got["log_odds_cutoff"]) <= target
            assert _recall(scores, is_spam, got["log_odds_cutoff"]) == pytest.approx(_recall(scores, is_spam, lowest))
            assert got["spam_recall"] == pytest.approx(_recall(scores, is_spam, lowest))
            assert got["ham_fpr"] == pytest.approx(fpr(lowest))


def _recall(scores, is_spam, t):
    return ((scores > t) & is_spam).sum() / is_spam.sum() if is_spam.any() else 0.0


@pytest.mark.parametrize(
    ("spam_cutoff", "ham_cutoff"),
    [(0.99, 0.01), (0.9, 0.4), (0.5, 0.5), (1.0, 0.0)],
    ids=["defaults", "narrow", "equal", "extremes"],
)
def test_filter_and_eval_give_every_p_spam_the_same_verdict(spam_cutoff, ham_cutoff):
    """`nbcli filter` (Verdicts.of) and `nbcli eval` (at_cutoffs) both decide
    by cutoff_verdicts: spam at p >= the spam cut-off, ham at p <= the ham
    cut-off, unsure between; a p exactly at a cut-off, equal cut-offs and
    NaN are decided alike by both."""
    from nbcli.spam.filtering import Verdicts

    with np.errstate(divide="ignore"):
        log_p = np.log(
            [0.0, 1e-300, 0.01, 0.0100001, 0.4, 0.4000001, 0.5, 0.5000001, 0.8999999, 0.9, 0.99, 1.0, np.nan]
        )
        # P(spam) as the filter sees it (exp of a log-posterior), and
        # cut-offs that some of these values hit exactly
        p = np.exp(log_p)
        spam_cutoff, ham_cutoff = (float(np.exp(np.log(c))) for c in (spam_cutoff, ham_cutoff))
    assert {spam_cutoff, ham_cutoff} <= set(p.tolist())
    is_spam = np.arange(len(p)) % 2 == 1
    verdicts = Verdicts(["spam", "ham"], "spam", spam_cutoff, ham_cutoff)
    by_filter = [verdicts.of(np.array([lp, 0.0]))[0] for lp in log_p]
    codes = bm.cutoff_verdicts(p, spam_cutoff, ham_cutoff)
    assert by_filter == [bm.VERDICTS[c] for c in codes]
    assert [bm.VERDICTS[bm.cutoff_verdicts(float(x), spam_cutoff, ham_cutoff)] for x in p] == by_filter
    for x, verdict in zip(p, by_filter):
        want = "spam" if x >= spam_cutoff else "ham" if x <= ham_cutoff else "unsure"
        assert verdict == want
    if spam_cutoff == ham_cutoff:
        assert "unsure" not in by_filter[:-1]  # equal cut-offs: only NaN is unsure
    filed = np.array(by_filter)
    assert bm.at_cutoffs(p, is_spam, spam_cutoff, ham_cutoff) == {
        "ham_fpr": float(np.mean(filed[~is_spam] == "spam")),
        "spam_recall": float(np.mean(filed[is_spam] == "spam")),
        "unsure": float(np.mean(filed == "unsure")),
        "decided_accuracy": float(np.mean((filed == "spam")[filed != "unsure"] == is_spam[filed != "unsure"])),
    }
