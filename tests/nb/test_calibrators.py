"""Calibration maps (nbcli.nb.calibrators), against scikit-learn's
CalibratedClassifierCV as the oracle, and by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.calibration import CalibratedClassifierCV

from nbcli.errors import NbcliError
from nbcli.evaluate.binary import roc_auc
from nbcli.nb import calibrators as cb

SKLEARN_METHOD = {"platt": "sigmoid", "isotonic": "isotonic", "temperature": "temperature"}


class Scores(ClassifierMixin, BaseEstimator):
    """A classifier whose decision function is its input: one column -> 1-D
    (two classes), else the columns themselves."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def decision_function(self, X):
        X = np.asarray(X, dtype=np.float64)
        return X[:, 0] if X.shape[1] == 1 else X

    def predict(self, X):
        d = self.decision_function(X)
        return self.classes_[(d > 0).astype(int) if d.ndim == 1 else d.argmax(axis=1)]


def binary_rows(s):
    """Log-probabilities [log sigmoid(-s), log sigmoid(s)] of log-odds s."""
    s = np.asarray(s, dtype=np.float64)
    return np.stack([-np.logaddexp(0.0, s), -np.logaddexp(0.0, -s)], axis=1)


def binary_data(n, rng, scale=20.0):
    """Over-confident scores: raw log-odds = scale * true logit."""
    logit = rng.normal(0.0, 2.0, n)
    y = (rng.random(n) < 1.0 / (1.0 + np.exp(-logit))).astype(np.int64)
    return scale * logit, y, logit


def multi_data(n, rng, scale=15.0, classes=3):
    logit = rng.normal(0.0, 2.0, (n, classes))
    p = np.exp(logit - np.logaddexp.reduce(logit, axis=1, keepdims=True))
    y = (rng.random(n)[:, None] > np.cumsum(p, axis=1)).sum(axis=1).clip(0, classes - 1)
    return cb._log_proba(scale * logit), y, p


def nll(log_proba, y):
    return float(-np.mean(log_proba[np.arange(len(y)), y]))


# ---- the oracle


@pytest.mark.parametrize("method", cb.METHODS)
def test_binary_matches_sklearn(method):
    rng = np.random.default_rng(1)
    s, y, _ = binary_data(300, rng)
    ours = cb.fit(method, binary_rows(s), y)
    ref = CalibratedClassifierCV(Scores(), method=SKLEARN_METHOD[method], cv=5, ensemble=False).fit(s[:, None], y)
    grid = np.linspace(-200.0, 200.0, 401)
    expected = ref.predict_proba(grid[:, None])
    got = np.exp(ours._apply(binary_rows(grid), clip=False))
    assert np.abs(got - expected).max() < 1e-7
    (calibrator,) = ref.calibrated_classifiers_[0].calibrators
    if method == "temperature":
        # sklearn turns a 1-D decision function s into logits (-s, s): p = sigmoid(2 beta s), so T = 1 / (2 beta)
        assert ours.params["temperature"][0] == pytest.approx(1.0 / (2.0 * calibrator.beta_), rel=1e-7)
    elif method == "platt":
        assert ours.params["a"][0] == pytest.approx(-calibrator.a_, rel=1e-6)
        assert ours.params["b"][0] == pytest.approx(-calibrator.b_, rel=1e-6, abs=1e-8)
    else:
        np.testing.assert_allclose(ours.params["x"], calibrator.X_thresholds_, rtol=1e-13)
        np.testing.assert_array_equal(ours.params["y"], calibrator.y_thresholds_)


@pytest.mark.parametrize("method", cb.METHODS)
def test_three_classes_match_sklearn(method):
    rng = np.random.default_rng(2)
    lp, y, _ = multi_data(300, rng)
    ours = cb.fit(method, lp, y)
    ref = CalibratedClassifierCV(Scores(), method=SKLEARN_METHOD[method], cv=5, ensemble=False).fit(lp, y)
    grid, _, _ = multi_data(300, rng)
    got = np.exp(ours._apply(grid, clip=False))
    # the isotonic thresholds near log-probability 0 are ~1e-12 apart, so interpolating there amplifies rounding
    assert np.abs(got - ref.predict_proba(grid)).max() < (1e-5 if method == "isotonic" else 1e-7)
    calibrators = ref.calibrated_classifiers_[0].calibrators
    if method == "temperature":
        assert ours.params["temperature"][0] == pytest.approx(1.0 / calibrators[0].beta_, rel=1e-7)
    elif method == "platt":
        np.testing.assert_allclose(ours.params["a"], [-c.a_ for c in calibrators], rtol=1e-6)
    else:
        offsets = ours.params["offsets"]
        for j, c in enumerate(calibrators):
            np.testing.assert_array_equal(ours.params["x"][offsets[j] : offsets[j + 1]], c.X_thresholds_)
            np.testing.assert_allclose(ours.params["y"][offsets[j] : offsets[j + 1]], c.y_thresholds_, rtol=1e-14)


def test_three_classes_isotonic_matches_sklearn_tightly_away_from_zero():
    rng = np.random.default_rng(3)
    lp, y, _ = multi_data(300, rng, scale=1.0)
    ours = cb.fit("isotonic", lp, y)
    ref = CalibratedClassifierCV(Scores(), method="isotonic", cv=5, ensemble=False).fit(lp, y)
    grid, _, _ = multi_data(300, rng, scale=1.0)
    assert np.abs(np.exp(ours._apply(grid, clip=False)) - ref.predict_proba(grid)).max() < 1e-12


@pytest.mark.parametrize("method", ["platt", "temperature"])
def test_our_optimum_is_no_worse_than_sklearn(method):
    rng = np.random.default_rng(4)
    s, y, _ = binary_data(300, rng)
    ours = cb.fit(method, binary_rows(s), y)
    ref = CalibratedClassifierCV(Scores(), method=SKLEARN_METHOD[method], cv=5, ensemble=False).fit(s[:, None], y)
    if method == "temperature":
        ref_lp = np.log(ref.predict_proba(s[:, None]))
        assert nll(ours.apply(binary_rows(s)), y) <= nll(ref_lp, y) + 1e-15
    else:  # Platt's loss is against the smoothed targets
        n_pos, n_neg = y.sum(), len(y) - y.sum()
        t = np.where(y == 1, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
        u = s
        (c,) = ref.calibrated_classifiers_[0].calibrators
        loss = cb._platt_loss(np.array([ours.params["a"][0], ours.params["b"][0]]), u, t)
        assert loss <= cb._platt_loss(np.array([-c.a_, -c.b_]), u, t) + 1e-15


# ---- by hand


def test_pav_small_sequence():
    got = cb._pav(np.array([1.0, 3.0, 2.0, 4.0, 3.5, 5.0, 0.0]), np.ones(7))
    np.testing.assert_allclose(got, [1.0, 2.5, 2.5, 3.125, 3.125, 3.125, 3.125])
    weighted = cb._pav(np.array([2.0, 1.0]), np.array([3.0, 1.0]))
    np.testing.assert_allclose(weighted, [1.75, 1.75])


def test_isotonic_table_by_hand():
    cal = cb.fit("isotonic", binary_rows([0.0, 1.0, 2.0, 3.0, 3.0, 4.0]), np.array([0, 1, 0, 1, 0, 1]))
    # pooled: 3.0 -> 1/2; PAV: (0, 1, 0, 1/2, 1) -> (0, 1/2, 1/2, 1/2, 1); the flat run's interior point 2.0 goes
    np.testing.assert_allclose(cal.params["x"], [0.0, 1.0, 3.0, 4.0], atol=1e-14)
    np.testing.assert_allclose(cal.params["y"], [0.0, 0.5, 0.5, 1.0])
    assert cal.describe() == "isotonic, 4 steps"
    p = np.exp(cal._apply(binary_rows([-5.0, 0.5, 3.5, 9.0]), clip=False))[:, 1]
    np.testing.assert_allclose(p, [0.0, 0.25, 0.75, 1.0], atol=1e-13)
    eps = 1 / (6 + 2)
    clipped = np.exp(cal.apply(binary_rows([-5.0, 9.0])))[:, 1]
    np.testing.assert_allclose(clipped, [eps, 1 - eps])


def test_temperature_closed_form():
    # three documents at log-odds 2, two of them positive: sigmoid(2 / T) = 2/3
    cal = cb.fit("temperature", binary_rows([2.0, 2.0, 2.0]), np.array([1, 1, 0]))
    assert cal.params["temperature"][0] == pytest.approx(2.0 / math.log(2.0), rel=1e-13)
    assert np.exp(cal.apply(binary_rows([2.0])))[0, 1] == pytest.approx(2.0 / 3.0, rel=1e-13)


def test_temperature_stationary():
    rng = np.random.default_rng(5)
    lp, y, _ = multi_data(50, rng, scale=8.0, classes=4)
    cal = cb.fit("temperature", lp, y)
    beta = 1.0 / cal.params["temperature"][0]
    assert abs(cb._temperature_slope(beta, lp, y)) < 1e-12
    assert cb._temperature_slope(beta * 0.999, lp, y) < 0.0 < cb._temperature_slope(beta * 1.001, lp, y)


def test_platt_stationary():
    rng = np.random.default_rng(6)
    s, y, _ = binary_data(80, rng)
    cal = cb.fit("platt", binary_rows(s), y)
    a, b = cal.params["a"][0], cal.params["b"][0]
    t = np.where(y == 1, (y.sum() + 1) / (y.sum() + 2), 1 / (len(y) - y.sum() + 2))
    r = 1.0 / (1.0 + np.exp(-(a * s + b))) - t
    assert abs(np.mean(r * s)) < 1e-10 and abs(np.mean(r)) < 1e-12


def test_temperature_bounded_when_separated():
    cal = cb.fit("temperature", binary_rows([-3.0, -1.0, 2.0, 5.0]), np.array([0, 0, 1, 1]))
    assert cal.params["temperature"][0] == cb.MIN_TEMPERATURE
    noise = cb.fit("temperature", binary_rows([-3.0, 3.0]), np.array([1, 0]))
    assert noise.params["temperature"][0] == cb.MAX_TEMPERATURE
    platt = cb.fit("platt", binary_rows([-3.0, -1.0, 2.0, 5.0]), np.array([0, 0, 1, 1]))
    assert np.isfinite(platt.params["a"]).all() and platt.params["a"][0] > 0


# ---- properties


@pytest.mark.parametrize("method", ["temperature", "platt"])
def test_keeps_ranking(method):
    rng = np.random.default_rng(7)
    s, y, _ = binary_data(200, rng)
    cal = cb.fit(method, binary_rows(s), y)
    assert cal.keeps_ranking
    out = cal.apply(binary_rows(s))
    assert roc_auc(out[:, 1] - out[:, 0], y == 1) == roc_auc(s, y == 1)


def test_keeps_ranking_false():
    rng = np.random.default_rng(8)
    s, y, _ = binary_data(200, rng)
    assert not cb.fit("isotonic", binary_rows(s), y).keeps_ranking
    assert not cb.fit("platt", binary_rows(-s), y).keeps_ranking  # a < 0
    lp, y3, _ = multi_data(100, rng)
    assert not cb.fit("temperature", lp, y3).keeps_ranking


@pytest.mark.parametrize("method", cb.METHODS)
def test_reduces_log_loss(method):
    rng = np.random.default_rng(9)
    s, y, logit = binary_data(1000, rng)
    cal = cb.fit(method, binary_rows(s[:500]), y[:500])
    raw, fitted, truth = binary_rows(s[500:]), cal.apply(binary_rows(s[500:])), binary_rows(logit[500:])
    assert nll(fitted, y[500:]) < 0.5 * nll(raw, y[500:])
    assert nll(fitted, y[500:]) < nll(truth, y[500:]) + 0.05
    lp, y3, p = multi_data(1000, rng)
    cal3 = cb.fit(method, lp[:500], y3[:500])
    fitted3 = cal3.apply(lp[500:])
    assert nll(fitted3, y3[500:]) < 0.5 * nll(lp[500:], y3[500:])
    assert nll(fitted3, y3[500:]) < nll(np.log(p[500:]), y3[500:]) + 0.1


@pytest.mark.parametrize("method", cb.METHODS)
@pytest.mark.parametrize("classes", [2, 3])
def test_apply_edge_inputs(method, classes):
    rng = np.random.default_rng(10)
    if classes == 2:
        s, y, _ = binary_data(100, rng)
        lp = binary_rows(s)
    else:
        lp, y, _ = multi_data(100, rng)
    lp[0, 0] = -np.inf  # fitting copes with -inf too
    cal = cb.fit(method, lp, y)
    assert cal.apply(np.empty((0, classes))).shape == (0, classes)
    huge = np.array([[0.0] + [-1e4] * (classes - 1), [-1e4] * (classes - 1) + [0.0], [0.0] + [-np.inf] * (classes - 1)])
    jll = huge - 5e5  # joint log-likelihoods: the same rows, unnormalised
    for rows in (huge, jll, np.full((1, classes), -3.0)):
        with np.errstate(over="raise", invalid="raise", divide="raise"):
            out = cal.apply(rows)
        assert np.isfinite(out).all()
        np.testing.assert_allclose(np.logaddexp.reduce(out, axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(cal.apply(jll), cal.apply(huge), atol=1e-9)


# ---- errors


def test_fit_refuses():
    lp = binary_rows([1.0, -1.0, 2.0])
    with pytest.raises(NbcliError, match="unknown calibration method"):
        cb.fit("beta", lp, np.array([1, 0, 1]))
    with pytest.raises(NbcliError, match="no held-out"):
        cb.fit("platt", np.empty((0, 2)), np.empty(0, dtype=int))
    with pytest.raises(NbcliError, match="class 0 never occurs"):
        cb.fit("platt", lp, np.array([1, 1, 1]))
    bad = lp.copy()
    bad[1, 0] = np.nan
    with pytest.raises(NbcliError, match="NaN"):
        cb.fit("isotonic", bad, np.array([1, 0, 1]))
    with pytest.raises(NbcliError, match="out of range"):
        cb.fit("isotonic", lp, np.array([1, 0, 2]))
    with pytest.raises(NbcliError, match="all -inf"):
        cb.fit("temperature", np.array([[-np.inf, -np.inf], [0.0, -1.0]]), np.array([1, 0]))
    cal = cb.fit("temperature", lp, np.array([1, 0, 1]))
    with pytest.raises(NbcliError, match="for 3 classes"):
        cal.apply(np.zeros((1, 3)))


# ---- increasing maps only (issue 25)


def test_a_map_that_would_reverse_or_flatten_the_ranking_is_refused():
    """Scores that rank against the truths (a model's mistakes): platt's
    slope is negative, isotonic pools everything into one flat step,
    temperature runs to its bound (all but uniform); each refused, naming
    the map."""
    rng = np.random.default_rng(12)
    s, y, _ = binary_data(200, rng)
    wrong = binary_rows(-s)
    assert cb.fit("platt", wrong, y).params["a"][0] < 0  # what nbcli calibrate used to store
    with pytest.raises(cb.NotIncreasing, match=r"platt map has slope a = -[0-9.e-]+, not positive"):
        cb.fit_increasing("platt", wrong, y)
    with pytest.raises(cb.NotIncreasing, match="isotonic map is flat"):
        cb.fit_increasing("isotonic", wrong, y)
    assert cb.fit("temperature", wrong, y).params["temperature"][0] == cb.MAX_TEMPERATURE
    with pytest.raises(cb.NotIncreasing, match=r"temperature map is flat \(T = 1e\+06"):
        cb.fit_increasing("temperature", wrong, y)
    for method in cb.METHODS:  # scores that rank with the truths pass, every map increasing
        cal = cb.fit_increasing(method, binary_rows(s), y)
        grid = np.linspace(-300.0, 300.0, 601)
        z = cal.apply(binary_rows(grid))
        assert np.all(np.diff(z[:, 1] - z[:, 0]) >= 0) and z[-1, 1] > z[0, 1]


def test_several_classes_name_the_map_that_falls():
    rng = np.random.default_rng(13)
    lp, y, _ = multi_data(300, rng)
    flipped = lp.copy()
    flipped[:, 2] = np.where(y == 2, -50.0, 0.0)  # class 2's score is highest where it is not class 2
    with pytest.raises(cb.NotIncreasing, match="platt map of class pear has slope"):
        cb.fit_increasing("platt", flipped, y, ["apple", "fig", "pear"])
    assert cb.fit_increasing("platt", lp, y, ["apple", "fig", "pear"]).not_increasing() is None


def test_cross_validated_maps_are_skipped_or_refused():
    rng = np.random.default_rng(14)
    s, y, _ = binary_data(200, rng)
    cal, skipped = cb.fit_cross_validated("platt", binary_rows(-s), y, ["ham", "spam"], strict=False)
    assert cal is None and "rank against the model" in skipped
    with pytest.raises(NbcliError, match="cannot calibrate by cross-validation: .* rank against the model"):
        cb.fit_cross_validated("platt", binary_rows(-s), y, ["ham", "spam"], strict=True)
    cal, skipped = cb.fit_cross_validated("platt", binary_rows(s), y, ["ham", "spam"], strict=True)
    assert skipped is None and cal.keeps_ranking


# ---- the model file


def fitted_all():
    rng = np.random.default_rng(11)
    s, y, _ = binary_data(100, rng)
    lp, y3, _ = multi_data(100, rng)
    return [cb.fit(m, binary_rows(s), y) for m in cb.METHODS] + [cb.fit(m, lp, y3) for m in cb.METHODS]


@pytest.mark.parametrize("cal", fitted_all(), ids=lambda c: f"{c.method}-{c.n_classes}")
def test_state_round_trip(cal):
    state = cal.state()
    back = cb.Calibration.from_state(state, cal.n_classes)
    assert back == cal
    assert back.describe() == cal.describe()
    grid = cal.apply(np.log(np.full((2, cal.n_classes), 1.0 / cal.n_classes)))
    np.testing.assert_array_equal(back.apply(np.log(np.full((2, cal.n_classes), 1.0 / cal.n_classes))), grid)
    state["params"][next(iter(state["params"]))][0] += 1  # the state is a copy
    assert back == cal


def test_describe():
    cal = cb.Calibration("temperature", 2, {"temperature": np.array([3.7412])}, 10)
    assert cal.describe() == "temperature 3.74"
    platt = cb.Calibration("platt", 3, {"a": np.array([0.41, 0.5, 0.3]), "b": np.array([-0.3, 0.1, 0.0])}, 10)
    assert platt.describe() == "platt a=0.41/0.5/0.3 b=-0.3/0.1/0"


def damage(state, path, value):
    state = {**state, "params": dict(state["params"])}
    if len(path) == 2:
        state["params"][path[1]] = value
    else:
        state[path[0]] = value
    return state


TEMPERATURE = {"method": "temperature", "n_classes": 2, "documents": 10, "params": {"temperature": np.array([2.0])}}
ISOTONIC = {
    "method": "isotonic",
    "n_classes": 2,
    "documents": 10,
    "params": {"x": np.array([-1.0, 0.0, 2.0]), "y": np.array([0.0, 0.5, 1.0]), "offsets": np.array([0, 3])},
}
PLATT = {"method": "platt", "n_classes": 3, "documents": 10, "params": {"a": np.ones(3), "b": np.zeros(3)}}


@pytest.mark.parametrize(
    ("state", "n_classes", "what"),
    [
        (damage(TEMPERATURE, ["params", "temperature"], np.array([0.0])), 2, "not positive"),
        (damage(TEMPERATURE, ["params", "temperature"], np.array([-1.0])), 2, "not positive"),
        (damage(TEMPERATURE, ["params", "temperature"], np.array([np.nan])), 2, "not finite"),
        (damage(TEMPERATURE, ["params", "temperature"], np.array([2.0, 3.0])), 2, "not one number"),
        (damage(TEMPERATURE, ["params", "temperature"], np.array(["2"])), 2, "not a vector of numbers"),
        (damage(TEMPERATURE, ["params", "temperature"], np.array([[2.0]])), 2, "not a vector"),
        (damage(TEMPERATURE, ["method"], "beta"), 2, "unknown method"),
        (damage(TEMPERATURE, ["documents"], 0), 2, "documents"),
        (damage(TEMPERATURE, ["documents"], "10"), 2, "documents"),
        (TEMPERATURE, 3, "the model has 3"),
        ({"method": "temperature"}, 2, "entries"),
        ([], 2, "entries"),
        (damage(TEMPERATURE, ["params"], {"a": np.ones(1)}), 2, "needs parameters"),
        (damage(ISOTONIC, ["params", "x"], np.array([0.0, -1.0, 2.0])), 2, "not increasing"),
        (damage(ISOTONIC, ["params", "y"], np.array([0.0, 0.6, 0.5])), 2, "decreasing"),
        (damage(ISOTONIC, ["params", "y"], np.array([0.0, 0.5, 1.5])), 2, "outside"),
        (damage(ISOTONIC, ["params", "y"], np.array([0.0, 0.5])), 2, "x has 3 values and y 2"),
        (damage(ISOTONIC, ["params", "offsets"], np.array([0, 2])), 2, "offsets"),
        (damage(ISOTONIC, ["params", "offsets"], np.array([0.0, 3.0])), 2, "integers"),
        (damage(PLATT, ["params", "a"], np.ones(2)), 3, "a has 2 values"),
        (damage(PLATT, ["params", "b"], np.array([0.0, np.inf, 0.0])), 3, "b is not finite"),
    ],
)
def test_from_state_refuses_damage(state, n_classes, what):
    with pytest.raises(NbcliError, match=f"calibration is damaged: .*{what}") as caught:
        cb.Calibration.from_state(state, n_classes)
    assert caught.value.hint


def test_from_state_accepts_good():
    for state, n in ((TEMPERATURE, 2), (ISOTONIC, 2), (PLATT, 3)):
        cal = cb.Calibration.from_state(state, n)
        assert cal.state()["method"] == state["method"]
        assert cal.params[next(iter(cal.params))].dtype in (np.float64, np.int64)
