"""Values far out in a numeric column (nbcli.nb.table_scoring): 1e200 in a
Gaussian column gave "a 0.5 ... +nan" and numpy warnings; now the class
whose Gaussian is widest wins, against an exact (Fraction) oracle where
the densities are beyond floats, and scikit-learn's GaussianNB still
matches on moderate values."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from sklearn.naive_bayes import GaussianNB

from nbcli.nb.table_classifier import TableClassifier
from nbcli.nb.tables import TableModel, TableSettings

from conftest import run_process

FAR_VALUES = [1e100, 1e146, 1e160, 1e200, -1e300, 1.7e308, -1.79e308]


def two_widths(numeric_model: str = "gaussian", n: int = 60):
    """Class a of unit spread, class b twice as wide (the tester's table)."""
    rng = np.random.default_rng(1)
    y = np.arange(n) % 2
    x = rng.normal(0.0, np.where(y == 1, 1.0, 2.0))
    model = TableModel.fit(["b", "a"], y, ["x"], ["numeric"], [x], TableSettings(numeric_model=numeric_model))
    return model, x, y


def exact_log_odds(x: float, model: TableModel) -> float:
    """log P(b | x) - log P(a | x) of a gaussian column, Q in exact Fractions."""
    mean, var = model.tables[0]
    q = [Fraction(x) - Fraction(float(m)) for m in mean]
    quadratic = [qq * qq / (2 * Fraction(float(v))) for qq, v in zip(q, var)]
    rest = [float(p) - 0.5 * math.log(v) for p, v in zip(model.log_prior, var)]
    return float(quadratic[1] - quadratic[0]) + rest[0] - rest[1]


@pytest.mark.filterwarnings("error")
def test_far_values_go_to_the_widest_gaussian_without_nan_or_warnings():
    model, x, y = two_widths()
    X = np.array(FAR_VALUES)[:, None]
    log_proba = model.predict_log_proba(X)
    assert not np.isnan(log_proba).any()
    assert (log_proba.argmax(axis=1) == 0).all() and (np.exp(log_proba[:, 0]) == 1.0).all()  # b, the wider
    for values in (model.joint_log_likelihood(X), model.column_log_likelihood(X)):
        assert not np.isnan(values).any() and (values < 0).all()  # -inf where beyond floats
    # where the log-density is still a float, far or not, it is the exact value
    for value in (1e140, 1e146, -1e150):
        want = exact_log_odds(value, model)
        assert model.predict_log_proba(np.array([[value]]))[0, 1] == pytest.approx(-want, rel=1e-12)
    # moderate values: GaussianNB's posteriors, as before
    moderate = np.array([-30.0, -3.0, 0.0, 0.5, 4.0, 30.0])
    sk = GaussianNB().fit(x[:, None], np.where(y == 1, "a", "b"))
    got = np.exp(model.predict_log_proba(moderate[:, None]))
    np.testing.assert_allclose(got, sk.predict_proba(moderate[:, None])[:, ::-1], rtol=1e-9, atol=1e-12)


@pytest.mark.filterwarnings("error")
def test_far_values_in_a_kde_column_go_to_the_widest_kernels():
    model, _, _ = two_widths("kde")
    widest = int(np.argmax([h for _, _, _, h in model.tables[0]]))
    X = np.array(FAR_VALUES)[:, None]
    log_proba = model.predict_log_proba(X)
    assert not np.isnan(log_proba).any() and (log_proba.argmax(axis=1) == widest).all()
    # beyond the direct sum's range, the log-density against an exact sum over the kernels
    value = 1e150
    ll = model.column_log_likelihood(np.array([[value]]))[0, 0]
    for c, (points, log_weights, n, h) in enumerate(model.tables[0]):
        Q = [(Fraction(value) - Fraction(float(p))) ** 2 / (2 * Fraction(h) ** 2) for p in points]
        least = min(Q)
        tail = sum(math.exp(w - float(q - least)) for w, q in zip(log_weights, Q))
        want = -float(least) + math.log(tail) - math.log(n * h) - 0.5 * math.log(2 * math.pi)
        assert ll[c] == pytest.approx(want, rel=1e-12)


@pytest.mark.filterwarnings("error")
def test_explanations_of_far_values_have_no_nan():
    model, _, _ = two_widths()
    classifier = TableClassifier(model, {})
    rows = [{"x": repr(v)} for v in FAR_VALUES]
    log_proba, explained = classifier.score(rows, explain=1)
    assert [classifier.classes[i] for i in log_proba.argmax(axis=1)] == ["b"] * len(rows)
    for why in explained:
        assert why["versus"] == "a" and why["log_odds"] > 1e199 and why["terms"][0]["contribution"] > 1e199
    assert explained[0]["log_odds"] == explained[0]["terms"][0]["contribution"] < math.inf  # 1e100: a float
    assert explained[3]["log_odds"] == math.inf  # 1e200: beyond floats


def test_predict_and_cluster_models_say_no_nan_and_no_warning(tmp_path):
    rng = np.random.default_rng(1)
    lines = ["x,w,label"] + [f"{rng.normal(0, 1 if i % 2 else 2)},{rng.normal(5, 1)},{'ba'[i % 2]}" for i in range(60)]
    table = tmp_path / "g.csv"
    table.write_text("\n".join(lines) + "\n")
    query = "x,w\n1e100,5\n1e200,5\n-1e300,1e200\n"
    for model, make in (
        ("g.nb", ["train", table, "--features", "all", "--calibrate", "none"]),
        ("c.nb", ["cluster", table, "--features", "all", "--ignore-fields", "label", "-k", "2"]),
    ):
        assert run_process([*make, "-o", tmp_path / model, "-q"]).returncode == 0
        result = run_process(["predict", tmp_path / model, "-", "--explain", "2"], input=query.encode())
        assert result.returncode == 0 and result.stderr == b""
        out = result.stdout.decode()
        assert "nan" not in out.lower() and len(out.splitlines()) == 3
        assert max(len(field) for field in out.split()) < 30  # 1e100's contribution: +4.1e+199, not 200 digits
        if model == "g.nb":
            assert [line.split("\t")[1] for line in out.splitlines()][:2] == ["b", "b"]  # the wider Gaussian
