"""Naive Bayes on tables: Mitchell's PlayTennis by hand, and scikit-learn's
CategoricalNB / GaussianNB and scipy's gaussian_kde as oracles."""

import csv
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import gaussian_kde
from sklearn.naive_bayes import CategoricalNB, GaussianNB

from nbcli.errors import NbcliError, ParameterError
from nbcli.nb.table_cells import MISSING, is_missing
from nbcli.nb.tables import TableModel, TableSettings, check_settings

PLAYTENNIS = Path(__file__).resolve().parents[2] / "sample_corpora" / "playtennis.csv"
QUERY = {"Outlook": "Sunny", "Temperature": "Cool", "Humidity": "High", "Wind": "Strong"}


def playtennis():
    with open(PLAYTENNIS, newline="") as f:
        rows = list(csv.DictReader(f))
    names = ["Outlook", "Temperature", "Humidity", "Wind"]  # Day is an id, not a feature
    classes = sorted({r["PlayTennis"] for r in rows})
    y = np.array([classes.index(r["PlayTennis"]) for r in rows])
    columns = [np.array([r[n] for r in rows]) for n in names]
    return rows, names, classes, y, columns


def hand_posterior_no(rows, alpha: int, prior_alpha: int) -> Fraction:
    """P(No | QUERY) with Fraction arithmetic from the table's counts."""
    names = list(QUERY)
    values = {n: sorted({r[n] for r in rows}) for n in names}
    score = {}
    for c in ("No", "Yes"):
        mine = [r for r in rows if r["PlayTennis"] == c]
        p = Fraction(len(mine) + prior_alpha, len(rows) + 2 * prior_alpha)
        for n in names:
            hits = sum(r[n] == QUERY[n] for r in mine)
            p *= Fraction(hits + alpha, len(mine) + alpha * len(values[n]))
        score[c] = p
    return score["No"] / (score["No"] + score["Yes"])


@pytest.mark.parametrize(
    "alpha, prior_alpha, expected",
    [(0, None, Fraction(486, 611)), (1, None, Fraction(3025, 4201)), (1, 1, Fraction(1089, 1481))],
)
def test_playtennis_posteriors_are_the_textbook_fractions(alpha, prior_alpha, expected):
    rows, names, classes, y, columns = playtennis()
    assert hand_posterior_no(rows, alpha, prior_alpha or 0) == expected
    model = TableModel.fit(
        classes, y, names, ["categorical"] * 4, columns, TableSettings(alpha=alpha, prior_alpha=prior_alpha)
    )
    X = model.encode([np.array([QUERY[n]]) for n in names])
    proba = np.exp(model.predict_log_proba(X))[0]
    assert proba[classes.index("No")] == pytest.approx(float(expected), abs=1e-12)
    assert proba.sum() == pytest.approx(1.0, abs=1e-12)


def test_playtennis_file_is_mitchells_table():
    rows, *_ = playtennis()
    assert [r["Day"] for r in rows] == [f"D{i}" for i in range(1, 15)]
    assert sum(r["PlayTennis"] == "Yes" for r in rows) == 9
    assert rows[0] == {
        "Day": "D1",
        "Outlook": "Sunny",
        "Temperature": "Hot",
        "Humidity": "High",
        "Wind": "Weak",
        "PlayTennis": "No",
    }


def test_m_estimate_with_uniform_p_is_laplace_times_k():
    # Mitchell's (n_c + m p) / (n + m) with p = 1/k and m = k is Laplace's rule
    rows, names, classes, y, columns = playtennis()
    laplace = TableModel.fit(classes, y, names, ["categorical"] * 4, columns, TableSettings(alpha=1))
    outlook = TableModel.fit(classes, y, names[:1], ["categorical"], columns[:1], TableSettings(m_estimate=(3, None)))
    assert np.allclose(outlook.tables[0], laplace.tables[0])
    given_p = TableModel.fit(classes, y, names[:1], ["categorical"], columns[:1], TableSettings(m_estimate=(4, 0.5)))
    no = classes.index("No")
    sunny = given_p.categories[0].index("Sunny")
    assert np.exp(given_p.tables[0][sunny, no]) == pytest.approx((3 + 4 * 0.5) / (5 + 4))


def test_unseen_category_scores_the_mass_of_one_more_pseudo_count():
    rows, names, classes, y, columns = playtennis()
    model = TableModel.fit(classes, y, names, ["categorical"] * 4, columns, TableSettings(alpha=1))
    X = model.encode([np.array(["Snow"]), np.array(["?"]), np.array([""]), np.array(["NA"])])
    assert X[0, 0] == 3 and np.isnan(X[0, 1:]).all()
    ll = model.column_log_likelihood(X)[0]
    # Outlook: 3 categories seen; No has 5 rows, Yes 9
    assert np.exp(ll[0]) == pytest.approx([1 / (5 + 3), 1 / (9 + 3)])
    assert (ll[1:] == 0).all()
    unsmoothed = TableModel.fit(classes, y, names, ["categorical"] * 4, columns, TableSettings(alpha=0))
    only_unseen = unsmoothed.encode([np.array(["Snow"]), np.array(["Hot"]), np.array(["High"]), np.array(["Weak"])])
    # every class has probability 0: the row gets the prior
    assert np.exp(unsmoothed.predict_log_proba(only_unseen))[0] == pytest.approx([5 / 14, 9 / 14])


def test_categories_are_stripped_and_sorted_and_missing_spellings_are_skipped():
    y = np.array([0, 0, 1, 1, 1])
    cells = np.array([" b", "a ", "N/A", "b", " ? "], dtype=object)
    model = TableModel.fit(["x", "z"], y, ["v"], ["categorical"], [cells], TableSettings())
    assert model.categories == [["a", "b"]]
    assert model.present.tolist() == [[2], [1]]
    assert model.stats[0]["counts"].tolist() == [[1, 1], [0, 1]]
    assert is_missing(" NaN ") and is_missing("n/a") and not is_missing("0")
    assert MISSING == {"", "?", "na", "n/a", "nan"}


# -- scikit-learn CategoricalNB ------------------------------------------------


def random_categorical(rng, n, n_columns, n_classes):
    y = rng.integers(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)
    k = rng.integers(2, 6, n_columns)
    codes = np.stack([rng.integers(0, kj, n) for kj in k], axis=1)
    codes[: k.max()] = np.arange(k.max())[:, None] % k  # every category seen
    return y, codes


@pytest.mark.parametrize("alpha", [0.3, 1.0, 2.5])
@pytest.mark.parametrize("prior", ["fit", "uniform"])
def test_categorical_columns_are_sklearn_categorical_nb(alpha, prior):
    rng = np.random.default_rng(int(alpha * 10) + (prior == "fit"))
    y, codes = random_categorical(rng, 300, 5, 3)
    classes = ["a", "b", "c"]
    columns = [np.array([f"v{v}" for v in codes[:, j]]) for j in range(codes.shape[1])]
    names = [f"f{j}" for j in range(codes.shape[1])]
    model = TableModel.fit(classes, y, names, ["categorical"] * 5, columns, TableSettings(alpha=alpha, prior=prior))
    sk = CategoricalNB(alpha=alpha, fit_prior=prior == "fit").fit(codes, y)
    test = rng.integers(0, 2, (50, 5))  # categories 0 and 1 exist in every column
    X = model.encode([np.array([f"v{v}" for v in test[:, j]]) for j in range(5)])
    assert (X == test).all()  # v0 < v1 < ... sorted as strings
    assert np.allclose(np.exp(model.predict_log_proba(X)), sk.predict_proba(test), rtol=0, atol=1e-9)
    assert np.allclose(model.joint_log_likelihood(X), sk.predict_joint_log_proba(test), rtol=0, atol=1e-9)


def test_map_estimate_is_the_posterior_mode():
    y = np.array([0, 0, 0, 1])
    cells = np.array(["a", "a", "b", "b"])
    model = TableModel.fit(["x", "z"], y, ["v"], ["categorical"], [cells], TableSettings(alpha=3, estimate="map"))
    # class x: (2 + 2) / (3 + 4), (1 + 2) / 7; unseen 2 / 7
    assert np.exp(model.tables[0][:3, 0]) == pytest.approx([4 / 7, 3 / 7, 2 / 7])
    with pytest.raises(NbcliError, match="map"):
        TableModel.fit(["x", "z"], y, ["v"], ["categorical"], [cells], TableSettings(alpha=0.5, estimate="map"))


# -- scikit-learn GaussianNB ---------------------------------------------------


def random_numeric(rng, n, n_columns, n_classes):
    y = rng.integers(0, n_classes, n)
    y[:n_classes] = np.arange(n_classes)
    X = rng.normal(size=(n, n_columns)) * rng.uniform(0.5, 20, n_columns) + y[:, None] * rng.normal(size=n_columns)
    X[:, 0] = 3.0 + 1e-7 * rng.normal(size=n)  # a column of tiny variance
    return y, X


@pytest.mark.parametrize("var_smoothing", [1e-9, 1e-3, 0.2])
def test_numeric_columns_are_sklearn_gaussian_nb(var_smoothing):
    rng = np.random.default_rng(7)
    y, X = random_numeric(rng, 400, 4, 3)
    names = [f"x{j}" for j in range(4)]
    settings = TableSettings(var_smoothing=var_smoothing)
    model = TableModel.fit(["a", "b", "c"], y, names, ["numeric"] * 4, list(X.T), settings)
    assert model.kinds == ["gaussian"] * 4
    sk = GaussianNB(var_smoothing=var_smoothing).fit(X, y)
    test = X[:60] + rng.normal(size=(60, 4))
    Xt = model.encode(list(test.T))
    assert np.allclose(np.exp(model.predict_log_proba(Xt)), sk.predict_proba(test), rtol=0, atol=1e-9)
    jll, sk_jll = model.joint_log_likelihood(Xt), sk.predict_joint_log_proba(test)
    assert np.allclose(jll, sk_jll, rtol=1e-12, atol=1e-6)


def test_mixed_table_is_categorical_nb_plus_gaussian_nb_minus_one_prior():
    rng = np.random.default_rng(3)
    y, codes = random_categorical(rng, 300, 3, 2)
    _, numbers = random_numeric(rng, 300, 2, 2)
    numbers += y[:, None]
    columns = [np.array([f"c{v}" for v in codes[:, j]]) for j in range(3)] + list(numbers.T)
    names = ["a", "b", "c", "u", "v"]
    model = TableModel.fit(["n", "p"], y, names, ["categorical"] * 3 + ["numeric"] * 2, columns, TableSettings())
    cat = CategoricalNB(alpha=1.0).fit(codes, y)
    gauss = GaussianNB().fit(numbers, y)
    test_codes, test_numbers = rng.integers(0, 2, (40, 3)), numbers[:40] + 0.5
    X = model.encode([np.array([f"c{v}" for v in test_codes[:, j]]) for j in range(3)] + list(test_numbers.T))
    expected = (
        cat.predict_joint_log_proba(test_codes)
        + gauss.predict_joint_log_proba(test_numbers)
        - np.log(cat.class_count_ / cat.class_count_.sum())
    )
    assert np.allclose(model.joint_log_likelihood(X), expected, rtol=1e-12, atol=1e-9)
    per_column = model.column_log_likelihood(X)
    assert per_column.shape == (40, 5, 2)
    assert np.allclose(per_column.sum(axis=1) + model.log_prior, model.joint_log_likelihood(X))


# -- kernel density estimates --------------------------------------------------


@pytest.mark.parametrize("bandwidth", ["scott", "silverman", 0.7])
def test_kde_columns_are_scipy_gaussian_kde(bandwidth):
    rng = np.random.default_rng(11)
    y = np.repeat([0, 1], [40, 70])
    x = np.where(y == 0, rng.normal(0, 1, 110), rng.gamma(2, 2, 110))
    x[[5, 50]] = np.nan  # missing cells are left out of the densities
    settings = TableSettings(numeric_model="kde", bandwidth=bandwidth)
    model = TableModel.fit(["a", "b"], y, ["x"], ["numeric"], [x], settings)
    queries = np.linspace(-4, 15, 37)
    ll = model.column_log_likelihood(queries[:, None])[:, 0, :]
    for c in (0, 1):
        values = x[(y == c) & ~np.isnan(x)]
        bw = bandwidth if isinstance(bandwidth, str) else bandwidth / np.std(values, ddof=1)
        assert np.allclose(ll[:, c], gaussian_kde(values, bw_method=bw).logpdf(queries), rtol=0, atol=1e-9)
    assert model.summary()["classes"]["a"]["x"]["n"] == 39


def test_kde_two_points_by_hand():
    y = np.array([0, 0, 1])
    x = np.array([0.0, 2.0, 5.0])
    model = TableModel.fit(["a", "b"], y, ["x"], ["numeric"], [x], TableSettings(numeric_model="kde", bandwidth=1.0))
    phi1 = np.exp(-0.5) / np.sqrt(2 * np.pi)
    assert np.exp(model.column_log_likelihood(np.array([[1.0]]))[0, 0, 0]) == pytest.approx(phi1, rel=1e-12)
    # far away the density is the nearest point's kernel, not log(0)
    far = model.column_log_likelihood(np.array([[1000.0]]))[0, 0, 0]
    assert far == pytest.approx(np.log(0.5 / np.sqrt(2 * np.pi)) - 0.5 * 998.0**2, rel=1e-12)


def test_a_single_value_class_gets_the_floor_bandwidth():
    y = np.array([0, 0, 1, 1])
    x = np.array([1.0, 1.0, 0.0, 4.0])
    model = TableModel.fit(["a", "b"], y, ["x"], ["numeric"], [x], TableSettings(numeric_model="kde"))
    h = model.summary()["classes"]["a"]["x"]["bandwidth"]
    assert h == pytest.approx(np.sqrt(1e-9 * np.var(x)))
    assert np.isfinite(model.joint_log_likelihood(np.array([[1.0], [2.0]]))).all()


# -- discretize ----------------------------------------------------------------


def test_discretize_by_hand():
    # 1..10, 5 bins: quantiles 0.2..0.8 with inverted_cdf are 2, 4, 6, 8
    x = np.arange(1.0, 11.0)
    y = np.array([0, 0, 0, 1, 0, 1, 1, 1, 1, 0])
    model = TableModel.fit(
        ["a", "b"], y, ["x"], ["numeric"], [x], TableSettings(numeric_model="discretize", bins=5, alpha=1)
    )
    assert model.stats[0]["edges"].tolist() == [2, 4, 6, 8]
    # bins (..2] (2..4] (4..6] (6..8] (8..): a: 1,2 | 3 | 5 | - | 10 ; b: - | 4 | 6 | 7,8 | 9
    assert model.stats[0]["counts"].tolist() == [[2, 1, 1, 0, 1], [0, 1, 1, 2, 1]]
    X = np.array([[-5.0], [2.0], [2.5], [8.0], [99.0], [np.nan]])
    ll = np.exp(model.column_log_likelihood(X)[:, 0, :])
    assert ll[:, 0] == pytest.approx([3 / 10, 3 / 10, 2 / 10, 1 / 10, 2 / 10, 1.0])
    assert ll[:, 1] == pytest.approx([1 / 10, 1 / 10, 2 / 10, 3 / 10, 2 / 10, 1.0])
    summary = model.summary()["classes"]["b"]["x"]
    assert summary["edges"] == [2, 4, 6, 8] and summary["probabilities"] == pytest.approx([0.1, 0.2, 0.2, 0.3, 0.2])


def test_discretize_ties_go_to_the_lower_bin_and_no_bin_is_empty():
    x = np.array([0.0] * 8 + [1.0, 2.0])
    y = np.array([0, 1] * 5)
    model = TableModel.fit(["a", "b"], y, ["x"], ["numeric"], [x], TableSettings(numeric_model="discretize", bins=4))
    # quantiles 1/4, 2/4, 3/4 are all 0: one edge, the eight zeros in the lower bin
    assert model.stats[0]["edges"].tolist() == [0.0]
    assert model.stats[0]["counts"].tolist() == [[4, 1], [4, 1]]
    rng = np.random.default_rng(0)
    x = rng.integers(0, 6, 500).astype(float)
    model = TableModel.fit(["a", "b"], y.repeat(50), ["x"], ["numeric"], [x], TableSettings(numeric_model="discretize"))
    assert (model.stats[0]["counts"].sum(axis=0) > 0).all()


# -- missing cells -------------------------------------------------------------


def test_missing_cells_are_skipped_in_training_and_scoring():
    y = np.array([0, 0, 0, 1, 1, 1])
    x = np.array([1.0, 3.0, np.nan, 10.0, 12.0, np.nan])
    cat = np.array(["u", "?", "v", "", "u", "u"])
    model = TableModel.fit(["a", "b"], y, ["x", "k"], ["numeric", "categorical"], [x, cat], TableSettings(alpha=1))
    assert model.stats[0]["mean"].tolist() == [2.0, 11.0]
    assert model.stats[0]["var"].tolist() == [1.0, 1.0]
    assert model.stats[1]["counts"].tolist() == [[1, 1], [2, 0]]
    X = model.encode([np.array(["NA", "1.5"]), np.array(["u", "n/a"])])
    ll = model.column_log_likelihood(X)
    assert (ll[0, 0] == 0).all() and (ll[1, 1] == 0).all()
    everything_missing = model.encode([np.array([""]), np.array(["?"])])
    assert np.allclose(model.predict_log_proba(everything_missing)[0], model.log_prior)


def test_a_class_without_numbers_in_a_column_uses_the_pooled_numbers():
    y = np.array([0, 0, 1, 1])
    x = np.array([1.0, 3.0, np.nan, np.nan])
    for numeric_model in ("gaussian", "kde"):
        model = TableModel.fit(["a", "b"], y, ["x"], ["numeric"], [x], TableSettings(numeric_model=numeric_model))
        ll = model.column_log_likelihood(np.array([[2.5]]))[0, 0]
        assert ll[0] == pytest.approx(ll[1])
        assert model.summary()["classes"]["b"]["x"]["pooled"] is True
    with pytest.raises(NbcliError, match="no number"):
        TableModel.fit(["a", "b"], y, ["x"], ["numeric"], [np.full(4, np.nan)], TableSettings())


def test_a_categorical_column_never_present_in_training_contributes_nothing():
    y = np.array([0, 1])
    model = TableModel.fit(["a", "b"], y, ["k"], ["categorical"], [np.array(["?", ""])], TableSettings(alpha=1))
    assert model.categories == [[]]
    X = model.encode([np.array(["u", "?"])])
    assert X[0, 0] == 0 and np.isnan(X[1, 0])
    assert (model.column_log_likelihood(X) == 0).all()


def test_a_class_without_rows_is_an_error():
    with pytest.raises(NbcliError, match="'b' has no training rows"):
        TableModel.fit(["a", "b"], np.array([0, 0]), ["k"], ["categorical"], [np.array(["u", "v"])], TableSettings())


# -- model state ---------------------------------------------------------------


def mixed_model(numeric_model="gaussian"):
    rng = np.random.default_rng(5)
    n = 200
    y = rng.integers(0, 3, n)
    y[:3] = [0, 1, 2]
    cat = rng.choice(["red", "green", "blue", "?"], n)
    x = rng.normal(size=n) + y
    x[::17] = np.nan
    z = rng.gamma(2, 2, n)
    settings = TableSettings(alpha=0.5, prior={"a": 1, "b": 2, "c": 3}, numeric_model=numeric_model, bins=4)
    columns = [cat, x, z.astype(str)]
    kinds = ["categorical", "numeric", "numeric"]
    model = TableModel.fit(["a", "b", "c"], y, ["col", "x", "z"], kinds, columns, settings)
    test = [np.array(["red", "pink", ""]), np.array([0.5, np.nan, 2.0]), np.array(["1", "x", "7"])]
    return model, model.encode(test)


@pytest.mark.parametrize("numeric_model", ["gaussian", "kde", "discretize"])
def test_state_round_trip_predicts_the_same(numeric_model):
    import json

    model, X = mixed_model(numeric_model)
    spec, arrays = model.state()
    spec = json.loads(json.dumps(spec))
    assert all(a.dtype in (np.float64, np.int64) for a in arrays.values())
    again = TableModel.from_state(spec, {k: v.copy() for k, v in arrays.items()})
    assert np.array_equal(again.predict_log_proba(X), model.predict_log_proba(X))
    assert again.summary() == model.summary()
    assert json.loads(json.dumps(model.summary())) == model.summary()


def damage(spec, arrays, what):
    if what == "shape":
        arrays["col0_counts"] = arrays["col0_counts"][:, :-1]
    elif what == "nan":
        arrays["col1_mean"] = arrays["col1_mean"].copy()
        arrays["col1_mean"][0] = np.nan
    elif what == "variance":
        arrays["col1_var"] = -arrays["col1_var"]
    elif what == "kind":
        spec["kinds"][1] = "poisson"
    elif what == "unsorted":
        spec["categories"][0] = spec["categories"][0][::-1]
    elif what == "negative":
        arrays["col0_counts"] = -arrays["col0_counts"]
    elif what == "settings":
        spec["settings"]["alpha"] = -1
    elif what == "missing":
        del arrays["class_count"]


@pytest.mark.parametrize("what", ["shape", "nan", "variance", "kind", "unsorted", "negative", "settings", "missing"])
def test_damaged_states_are_refused(what):
    model, _ = mixed_model()
    spec, arrays = model.state()
    spec = {**spec, "kinds": list(spec["kinds"]), "categories": list(spec["categories"])}
    spec["settings"] = dict(spec["settings"])
    arrays = dict(arrays)
    damage(spec, arrays, what)
    with pytest.raises(NbcliError, match="table model") as error:
        TableModel.from_state(spec, arrays)
    assert "\n" not in str(error.value)


def test_bad_settings_name_the_option():
    y, cells = np.array([0, 1]), np.array(["u", "v"])
    for settings, option in [
        (TableSettings(numeric_model="poisson"), "numeric.model"),  # the parameter here, the flag on the command line
        (TableSettings(bandwidth="wide"), "^bandwidth"),
        (TableSettings(bins=1), "^bins"),
        (TableSettings(prior="uniform", prior_alpha=1), "prior.alpha"),  # the library names the parameter (issue 26)
        (TableSettings(alpha=float("nan")), "^alpha"),
    ]:
        with pytest.raises(NbcliError, match=option):
            TableModel.fit(["a", "b"], y, ["k"], ["categorical"], [cells], settings)


def test_setting_errors_name_the_parameter_and_the_command_line_its_flag():
    from nbcli.cli.options import in_flag_terms

    for settings, said in [
        (TableSettings(bins=1), "bins must be a whole number from 2 to 1000000, not 1"),
        (TableSettings(var_smoothing=2), "var_smoothing must be a number above 0 and at most 1, not 2"),
        (TableSettings(numeric_model="poisson"), "numeric_model 'poisson' is not one of gaussian, kde, discretize"),
        (
            TableSettings(estimate="map", alpha=0.5),
            "estimate='map' needs alpha of at least 1 on table columns, not 0.5",
        ),
    ]:
        with pytest.raises(ParameterError) as caught:
            check_settings(settings)
        assert caught.value.message == said
        flagged = in_flag_terms(caught.value).message
        assert flagged.startswith("--") and "_" not in flagged.split()[0]
    assert in_flag_terms(caught.value).message == "--estimate map needs --alpha of at least 1 on table columns, not 0.5"
