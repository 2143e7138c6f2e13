"""Soft EM for table clustering: the expected-count fit
(`table_em.WeightedColumns`, `table_em.fit_weighted`) and the EM loop
(`fit.table_training.cluster_rows`, `em_rows`, `e_step`)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn.metrics import adjusted_rand_score

from nbcli.errors import NbcliError
from nbcli.fit.table_training import cluster_rows
from nbcli.nb.table_cells import recording_resolution
from nbcli.nb.table_classifier import TableColumns
from nbcli.nb.table_em import WeightedColumns, e_step, em_rows, fit_weighted, free_parameters
from nbcli.nb.tables import TableModel, TableSettings
from nbcli.text.sources import Document

from conftest import run

# -- one iteration against a hand-written reference -------------------------------------


def test_one_soft_em_iteration_matches_a_numpy_reference():
    colour = np.array(["a", "b", "a", "", "c", "b", "a"], dtype=object)
    size = np.array([1.0, 2.5, np.nan, 4.0, 0.5, 3.0, 1.5])
    R0 = np.array([[0.9, 0.1], [0.2, 0.8], [0.7, 0.3], [0.4, 0.6], [0.5, 0.5], [0.1, 0.9], [1.0, 0.0]])
    alpha, A, smoothing = 0.7, 0.5, 1e-3
    table_settings = TableSettings(alpha=alpha, prior_alpha=A, var_smoothing=smoothing)
    prepared = WeightedColumns(["colour", "size"], ["categorical", "numeric"], [colour, size], table_settings)
    model = prepared.fit(["cluster1", "cluster2"], R0)
    R1, objective = e_step(model, prepared.X)

    # the reference: rows one by one, the formulas as written
    n, k = R0.shape
    cats = ["a", "b", "c"]
    W = R0.sum(axis=0)
    pi = (W + A) / (n + A * k)
    counts = np.zeros((k, 3))
    for i in range(n):
        if colour[i]:
            counts[:, cats.index(colour[i])] += R0[i]
    P = (counts + alpha) / (counts.sum(axis=1, keepdims=True) + 3 * alpha)
    ok = ~np.isnan(size)
    weight = R0[ok].sum(axis=0)
    mu = np.array([sum(R0[i, c] * size[i] for i in range(n) if ok[i]) / weight[c] for c in range(k)])
    var = np.array([sum(R0[i, c] * (size[i] - mu[c]) ** 2 for i in range(n) if ok[i]) / weight[c] for c in range(k)])
    s2 = var + smoothing * np.var(size[ok])
    jll = np.zeros((n, k))
    for i in range(n):
        for c in range(k):
            jll[i, c] = np.log(pi[c])
            if colour[i]:
                jll[i, c] += np.log(P[c, cats.index(colour[i])])
            if ok[i]:
                jll[i, c] += -0.5 * np.log(2 * np.pi * s2[c]) - (size[i] - mu[c]) ** 2 / (2 * s2[c])
    lse = np.log(np.exp(jll).sum(axis=1))
    want_R = np.exp(jll - lse[:, None])
    want_objective = lse.sum() + alpha * np.log(P).sum() + A * np.log(pi).sum()

    assert np.allclose(model.class_count, W, rtol=0, atol=1e-12)
    assert np.allclose(np.exp(model.log_prior), pi, rtol=0, atol=1e-12)
    assert np.allclose(model.stats[1]["mean"], mu, rtol=0, atol=1e-12)
    assert np.allclose(model.stats[1]["var"] + model.epsilon, s2, rtol=0, atol=1e-12)
    assert np.allclose(R1, want_R, rtol=0, atol=1e-9)
    assert objective == pytest.approx(want_objective, abs=1e-9)
    # the E step's memberships are predict_log_proba's posteriors
    assert np.allclose(R1, np.exp(model.predict_log_proba(prepared.X)), rtol=0, atol=1e-12)


def test_one_hot_memberships_give_the_counted_model():
    rng = np.random.default_rng(3)
    y = rng.integers(0, 3, 40)
    colour = rng.choice(["red", "green", "blue", ""], 40).astype(object)
    x = rng.normal(y * 2.0, 1.0)
    x[::9] = np.nan
    z = rng.gamma(2, 2, 40)
    for numeric_model in ("gaussian", "discretize"):
        s = TableSettings(alpha=0.5, numeric_model=numeric_model, bins=4)
        columns, kinds = [colour, x, z], ["categorical", "numeric", "numeric"]
        counted = TableModel.fit(["a", "b", "c"], y, ["colour", "x", "z"], kinds, columns, s)
        weighted = fit_weighted(["a", "b", "c"], np.eye(3)[y], ["colour", "x", "z"], kinds, columns, s)
        assert weighted.expected and not counted.expected
        X = counted.encode(columns)
        assert np.array_equal(weighted.encode(columns), X, equal_nan=True)
        assert np.allclose(weighted.predict_log_proba(X), counted.predict_log_proba(X), rtol=0, atol=1e-12)
        assert np.array_equal(weighted.class_count, counted.class_count)
        assert np.array_equal(weighted.present, counted.present)


# -- the objective never decreases ------------------------------------------------------


@st.composite
def small_tables(draw):
    n = draw(st.integers(4, 24))
    k = draw(st.integers(2, 3))
    cats = draw(st.lists(st.sampled_from(["u", "v", "w", "x", ""]), min_size=n, max_size=n))
    numbers = draw(
        st.lists(
            st.one_of(st.floats(-50, 50, allow_nan=False), st.just(float("nan"))),
            min_size=n,
            max_size=n,
        )
    )
    decimals = draw(st.sampled_from([None, 0, 1]))  # recorded to 1 or 0.1: the resolution floor bites
    if decimals is not None:
        numbers = [round(v, decimals) for v in numbers]
    # a column of (almost) equal values has an epsilon under the variances' rounding: see em_rows
    assume(np.nanmax(numbers + [-np.inf]) - np.nanmin(numbers + [np.inf]) >= 0.01)
    floor = draw(st.booleans())
    smoothing = draw(
        st.sampled_from(
            [{"alpha": 0.1}, {"alpha": 3.0}, {"alpha": 2.0, "estimate": "map"}, {"m_estimate": (2.0, None)}]
        )
    )
    prior_alpha = draw(st.sampled_from([None, 0.0, 1.0]))
    seed = draw(st.integers(0, 2**16))
    return n, k, np.array(cats, dtype=object), np.array(numbers), smoothing, prior_alpha, seed, floor


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_tables())
def test_the_objective_never_decreases(case):
    n, k, cats, numbers, smoothing, prior_alpha, seed, floor = case
    table_settings = TableSettings(**smoothing, prior_alpha=prior_alpha)
    prepared = WeightedColumns(
        ["c", "x"], ["categorical", "gaussian"], [cats, numbers], table_settings, resolution_floor=floor
    )
    R = np.random.default_rng(seed).dirichlet(np.ones(k), n)
    _, _, objectives = em_rows(prepared, R, max_iter=25, tol=0.0)
    assert all(np.isfinite(objectives))
    # GaussianNB's epsilon on the variances (em_rows' docstring) lets J fall by a little where a cluster
    # collapses on near-equal values: 1.1e-9 of J once (a column of zeros and a 26), at most 6.5e-10 in
    # 2,000 other random cases (2026-11-27); an EM step that is wrong falls by far more
    for before, after in zip(objectives, objectives[1:]):
        assert after >= before - 1e-7 * abs(before)


# -- planted clusters -------------------------------------------------------------------


def planted_rows(n_per: int = 80, k: int = 3, seed: int = 5) -> tuple[list[dict], np.ndarray]:
    """Rows of k planted clusters: a categorical colour (80% the cluster's),
    two Gaussian columns, a 0/1 flag, a few missing cells."""
    rng = np.random.default_rng(seed)
    colours = np.array(["red", "green", "blue", "grey"])
    truth = np.repeat(np.arange(k), n_per)
    rows = []
    for t in truth:
        colour = colours[t] if rng.random() < 0.8 else colours[rng.integers(len(colours))]
        size = "" if rng.random() < 0.05 else f"{rng.normal(6.0 * t, 1.5):.4f}"
        rows.append(
            {
                "size": size,
                "colour": colour,
                "weight": f"{rng.normal(40 - 5.0 * t, 2.0):.4f}",
                "flag": str(int(rng.random() < (0.2 if t % 2 else 0.8))),
            }
        )
    return rows, truth


def as_docs(rows: list[dict]) -> list[Document]:
    return [Document(id=f"r{i}", label=None, data=row) for i, row in enumerate(rows)]


def assign(classifier, rows) -> np.ndarray:
    return classifier.model.predict_log_proba(classifier.counts(rows)).argmax(axis=1)


def test_planted_clusters_are_recovered_and_reproducible():
    rows, truth = planted_rows()
    docs = as_docs(rows)
    first, _ = cluster_rows(docs, TableColumns(), TableSettings(), 3, restarts=3, seed=4)
    assert first.model.expected and first.model.kinds == ["gaussian", "categorical", "gaussian", "categorical"]
    assert adjusted_rand_score(truth, assign(first, rows)) >= 0.9
    assert first.model.class_count.sum() == pytest.approx(len(rows))
    again, _ = cluster_rows(docs, TableColumns(), TableSettings(), 3, restarts=3, seed=4)
    spec, arrays = first.model.state()
    spec2, arrays2 = again.model.state()
    assert spec == spec2 and arrays.keys() == arrays2.keys()
    assert all(np.array_equal(arrays[key], arrays2[key]) for key in arrays)  # the same seed, the same model
    assert first.meta["clusters"]["objective"] == again.meta["clusters"]["objective"]


def test_k_auto_picks_the_planted_number_by_bic():
    rows, _ = planted_rows(n_per=60, k=3, seed=8)
    classifier, table = cluster_rows(as_docs(rows), TableColumns(), TableSettings(), "auto", restarts=2, seed=0)
    bics = {row["k"]: row["bic"] for row in table}
    assert min(bics, key=bics.get) == 3 and len(classifier.classes) == 3
    # BIC's parameters: 2 gaussian columns (2 each), colour (4 - 1), flag (2 - 1), and k - 1 weights
    assert free_parameters(classifier.model) == 3 * (2 + 3 + 2 + 1) + 2


# -- the recording-resolution floor -----------------------------------------------------


def tenth_rows(k: int, seed: int, n_per: int = 50) -> tuple[list[dict], np.ndarray]:
    """Rows of k planted clusters in two Gaussian columns recorded to 0.1
    (sd 0.3: each cluster repeats a handful of values)."""
    rng = np.random.default_rng(seed)
    truth = np.repeat(np.arange(k), n_per)
    return [{"x": f"{rng.normal(3.0 * t, 0.3):.1f}", "y": f"{rng.normal(10 - 2.0 * t, 0.3):.1f}"} for t in truth], truth


@pytest.mark.parametrize("k", [2, 3])
def test_k_auto_on_columns_recorded_to_a_tenth_picks_the_planted_number(k, monkeypatch):
    rows, truth = tenth_rows(k, seed=1)
    classifier, _ = cluster_rows(as_docs(rows), TableColumns(), TableSettings(), "auto", restarts=2, seed=0)
    assert len(classifier.classes) == k and classifier.model.resolution == [0.1, 0.1]
    assert adjusted_rand_score(truth, assign(classifier, rows)) >= 0.95
    spec, arrays = classifier.model.state()  # the saved model keeps the floor
    again = TableModel.from_state(json.loads(json.dumps(spec)), arrays)
    X = classifier.counts(rows)
    assert again.resolution == [0.1, 0.1]
    assert np.array_equal(again.predict_log_proba(X), classifier.model.predict_log_proba(X))

    # without the floor, clusters collapse onto repeated values and BIC asks for many more
    original = WeightedColumns.__init__
    monkeypatch.setattr(
        WeightedColumns, "__init__", lambda self, *a, resolution_floor=False: original(self, *a, resolution_floor=False)
    )
    unfloored, _ = cluster_rows(as_docs(rows), TableColumns(), TableSettings(), "auto", restarts=2, seed=0)
    assert len(unfloored.classes) > k + 2


def test_the_resolution_floor_against_a_hand_computed_example():
    assert recording_resolution(np.array([5.3, 5.0, 5.1, 5.1])) == 0.1  # 5.1 - 5.0 = 0.0999999999999996
    assert recording_resolution(np.array([0.3, 0.1 + 0.2, 0.7])) == 0.4  # 0.3 vs 0.30000000000000004: float noise
    assert recording_resolution(np.array([2.0, 2.0])) is None
    # cluster 1: three rows at 1.0 (variance 0); cluster 2: 1.25, 2, 2 (variance 0.125); r = 0.25
    x = np.array([1.0, 1.0, 1.0, 1.25, 2.0, 2.0])
    R = np.eye(2)[[0, 0, 0, 1, 1, 1]]
    floored = WeightedColumns(["x"], ["gaussian"], [x], TableSettings(), resolution_floor=True)
    model = floored.fit(["cluster1", "cluster2"], R)
    epsilon = 1e-9 * np.var(x)
    assert model.resolution == [0.25] and model.epsilon == pytest.approx(epsilon, rel=1e-12)
    mean, variance = model.tables[0]
    assert np.allclose(mean, [1.0, 1.75], rtol=0, atol=1e-12)
    assert np.allclose(variance, [0.25**2 / 12, 0.125 + epsilon], rtol=1e-12, atol=0)  # 0.0052083..., 0.125
    # without the floor (and in supervised training): GaussianNB's variance + epsilon
    plain = WeightedColumns(["x"], ["gaussian"], [x], TableSettings()).fit(["cluster1", "cluster2"], R)
    assert plain.resolution is None and np.allclose(plain.tables[0][1], [epsilon, 0.125 + epsilon], rtol=1e-12, atol=0)
    counted = TableModel.fit(["a", "b"], np.array([0, 0, 0, 1, 1, 1]), ["x"], ["numeric"], [x], TableSettings())
    assert counted.resolution is None and "resolution" not in counted.state()[0]


@pytest.mark.parametrize(
    "resolution, reason",
    [([0.1], "one entry per column"), ([-1.0, None], "finite number > 0"), ([0.1, 0.1], "categorical column has")],
)
def test_a_damaged_resolution_is_refused(resolution, reason):
    x, c = np.array([1.0, 1.1, 1.3]), np.array(["u", "v", "u"], dtype=object)
    prepared = WeightedColumns(["x", "c"], ["gaussian", "categorical"], [x, c], TableSettings(), resolution_floor=True)
    spec, arrays = prepared.fit(["cluster1", "cluster2"], np.eye(2)[[0, 1, 1]]).state()
    assert spec["resolution"] == [0.1, None]
    with pytest.raises(NbcliError, match=reason):
        TableModel.from_state({**spec, "resolution": resolution}, arrays)


def test_clustering_refuses_what_em_cannot_fit():
    rows, _ = planted_rows(n_per=10)
    with pytest.raises(NbcliError, match="kde columns cannot be fitted"):
        cluster_rows(as_docs(rows), TableColumns(), TableSettings(numeric_model="kde"), 2, restarts=1, seed=0)
    with pytest.raises(NbcliError, match="m-estimate with P"):
        cluster_rows(as_docs(rows), TableColumns(), TableSettings(m_estimate=(2.0, 0.3)), 2, restarts=1, seed=0)
    prepared = WeightedColumns(["c"], ["categorical"], [np.array(["a", "b"], dtype=object)], TableSettings())
    with pytest.raises(NbcliError, match="sum to 1"):
        prepared.fit(["x", "y"], np.array([[0.5, 0.4], [1.0, 0.0]]))


# -- no cluster that no row prefers ---------------------------------------------------


def iris_rows() -> list[dict]:
    from sklearn.datasets import load_iris

    iris = load_iris()
    return [
        {**{f"m{j}": f"{v:.1f}" for j, v in enumerate(row)}, "species": iris.target_names[t]}
        for row, t in zip(iris.data, iris.target)
    ]


def test_a_cluster_no_row_prefers_is_dropped():
    """Iris (its species a column too), k = 15, seed 1: EM left a cluster of expected
    rows above 0 that no row had as its most probable, and it was written
    (predict never answered it). It is dropped, and EM runs on."""
    rows = iris_rows()
    classifier, _ = cluster_rows(as_docs(rows), TableColumns(), TableSettings(), 15, restarts=3, seed=1)
    k = len(classifier.classes)
    assert 2 <= k < 15 and classifier.meta["clusters"]["k"] == k
    assert np.bincount(assign(classifier, rows), minlength=k).min() >= 1


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10**6), st.integers(2, 12), st.sampled_from([0.05, 1.0]))
def test_no_table_clustering_has_a_cluster_no_row_prefers(seed, k, alpha):
    """Beside the documents' property (tests/nb/test_clusters.py): any
    seed, any k up to the distinct rows: every cluster written is some
    row's most probable, or clustering refuses in one error."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 40))
    rows = [
        {"c": str(rng.choice(["u", "v", "w", ""])), "x": f"{rng.normal(rng.integers(0, 3) * 3.0, 1.0):.1f}"}
        for _ in range(n)
    ]
    rows += rows[: int(rng.integers(0, n))]  # some rows twice
    try:
        classifier, _ = cluster_rows(as_docs(rows), TableColumns(), TableSettings(alpha=alpha), k, 2, seed)
    except NbcliError as error:
        # too few distinct rows for k, or for two clusters; or k past what the rows allow ("give 2 to N clusters")
        assert any(s in error.message for s in ("distinct", "one cluster", "give 2 to")), error.message
        return
    chosen = len(classifier.classes)
    assert 2 <= chosen <= k
    assert np.bincount(assign(classifier, rows), minlength=chosen).min() >= 1


def test_k_is_at_most_the_distinct_rows_and_a_table_needs_a_present_cell():
    same = [{"a": "1", "b": "x"}] * 3
    with pytest.raises(NbcliError, match=r"^the 3 rows are all the same: nothing to cluster"):
        cluster_rows(as_docs(same), TableColumns(), TableSettings(), 2, restarts=1, seed=0)
    two = [{"a": "1", "b": "x"}, {"a": "1", "b": "x"}, {"a": "2", "b": "y"}]
    with pytest.raises(NbcliError, match=r"give 2 to 2 clusters \(3 rows, 2 distinct: identical ones go to one"):
        cluster_rows(as_docs(two), TableColumns(), TableSettings(), 3, restarts=1, seed=0)
    missing = [{"a": "?", "b": "NA"}, {"a": "", "b": "?"}, {"a": "NA", "b": ""}]
    with pytest.raises(NbcliError, match="none of the 3 rows has a cell that is not missing: nothing to cluster"):
        cluster_rows(as_docs(missing), TableColumns(), TableSettings(), 2, restarts=1, seed=0)


# -- the stored model: expected counts said so, and checked -----------------------------


def expected_model():
    rows, _ = planted_rows(n_per=15)
    classifier, _ = cluster_rows(as_docs(rows), TableColumns(), TableSettings(), 2, restarts=1, seed=0)
    return classifier.model, classifier.counts(rows)


def test_an_expected_count_model_round_trips():
    model, X = expected_model()
    spec, arrays = model.state()
    assert spec["expected"] is True and arrays["present"].dtype == np.float64
    assert (arrays["class_count"] != np.round(arrays["class_count"])).any()  # fractional counts
    again = TableModel.from_state(json.loads(json.dumps(spec)), {key: a.copy() for key, a in arrays.items()})
    assert again.expected and np.array_equal(again.predict_log_proba(X), model.predict_log_proba(X))


@pytest.mark.parametrize("what", ["not expected", "expected text", "nan", "negative", "sums", "kde", "over rows"])
def test_damaged_expected_states_are_refused(what):
    model, _ = expected_model()
    spec, arrays = model.state()
    spec, arrays = dict(spec), {key: a.copy() for key, a in arrays.items()}
    if what == "not expected":  # fractional counts in a model that does not say so
        del spec["expected"]
        arrays["present"] = np.round(arrays["present"]).astype(np.int64)
    elif what == "expected text":
        spec["expected"] = "yes"
    elif what == "nan":
        arrays["class_count"][0] = np.nan
    elif what == "negative":
        arrays["col1_counts"][0, 0] = -1.0
    elif what == "sums":
        arrays["col1_counts"][0, 0] += 0.5
    elif what == "kde":
        spec["kinds"] = ["kde" if kind == "gaussian" else kind for kind in spec["kinds"]]
    elif what == "over rows":
        arrays["present"][0, 0] = arrays["class_count"][0] + 1.0
    with pytest.raises(NbcliError, match="the table model is not valid") as error:
        TableModel.from_state(spec, arrays)
    assert "\n" not in str(error.value)


def test_a_counted_model_with_fractional_counts_is_refused():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 20)
    model = TableModel.fit(["a", "b"], y, ["c"], ["categorical"], [rng.choice(["u", "v"], 20)], TableSettings())
    spec, arrays = model.state()
    assert "expected" not in spec
    arrays = dict(arrays, class_count=arrays["class_count"] + 0.25)
    with pytest.raises(NbcliError, match="class counts are not whole numbers"):
        TableModel.from_state(spec, arrays)


# -- through the commands ---------------------------------------------------------------


def write_csv(path, rows, truth):
    names = list(rows[0])
    lines = [",".join([*names, "hidden"])] + [",".join([*(r[n] for n in names), f"k{t}"]) for r, t in zip(rows, truth)]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_saved_cluster_model_predicts_through_the_cli(tmp_path):
    rows, truth = planted_rows(n_per=50, seed=12)
    table = write_csv(tmp_path / "rows.csv", rows, truth)
    model = tmp_path / "clusters.nb"
    args = ["cluster", table, "--features", "all", "--ignore-fields", "hidden", "-k", "3", "--seed", "3"]
    result = run([*args, "-o", model])
    assert result.exit_code == 0, result.stderr
    assert "150 rows in 3 clusters" in result.stderr
    predicted = [line.split("\t")[1] for line in run(["predict", model, table]).stdout.splitlines()]
    assert set(predicted) <= {"cluster1", "cluster2", "cluster3"}
    assert adjusted_rand_score(truth, predicted) >= 0.9
    records = [json.loads(line) for line in run(["predict", model, table, "--json"]).stdout.splitlines()]
    assert all(sum(r["probabilities"].values()) == pytest.approx(1.0) for r in records)
    info = json.loads(run(["info", model, "--json"]).stdout)
    assert info["clusters"]["k"] == 3 and info["clusters"]["objective"] < 0
    assert run(["info", model]).exit_code == 0
    kde = run([*args, "--numeric-model", "kde", "-o", tmp_path / "kde.nb"])
    assert kde.exit_code == 1 and "kde columns cannot be fitted" in kde.stderr
