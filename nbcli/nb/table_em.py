"""EM for mixtures of table models: clustering table rows (`nbcli cluster
--features`) and fitting to soft memberships.

`WeightedColumns` parses a table's columns once for repeated fits to
memberships (the M step: expected counts, weighted means and variances, as
below; the other formulas are `tables`' module docstring's);
`fit_weighted` is one such fit; `e_step`, `em_rows` and `best_clustering`
run EM from seeded random memberships (`start_memberships`);
`free_parameters` counts a mixture's parameters for BIC. Reading the rows,
choosing k and naming the clusters is `fit.table_training.cluster_rows`'s.

Expected counts (`fit_weighted`, EM's M step): each row i
belongs to class c with a weight r_ic >= 0 (sum_c r_ic = 1) instead of one
class. N_c = sum_i r_ic, N_cjv = the sum of r_ic over the rows whose cell j
is v, N_cj the sum over the rows whose cell j is present; a Gaussian column
takes the weighted mean and variance (ddof 0) mu_c = sum_i r_ic x_i / N_cj,
var_c = sum_i r_ic (x_i - mu_c)^2 / N_cj, plus the same epsilon (the pooled
variances do not depend on the weights); discretize columns cut the pooled
values as `tables` says and count bins like categories. With one-hot weights this
is `TableModel.fit`. KDE columns are refused: a kernel density is not a maximum-
likelihood estimate (its likelihood grows without bound as h -> 0 and each
row's own kernel scores it), so no M step of EM fits it, and a weighted
KDE would keep n x C weights in the model. A model of expected counts says
so (`expected`, spec "expected": true) and may hold fractional counts; any
other model's counts are whole numbers, and a model file's are checked so.

No cluster that no row prefers (`best_clustering`; the promise `clusters`
makes for documents). A cluster no row has as its most probable one under
the model written (`predict_log_proba`'s argmax: what `nbcli predict`
answers for those rows) cannot classify; EM can leave one so with expected
rows above 0 (iris, its four measurements, k = 15, seed 1). Such clusters
are dropped and EM runs on to convergence from the other clusters'
memberships (each row's posterior renormalised over them), again until
every cluster is some row's most probable; so the model written may have
fewer clusters than asked (`nbcli cluster` says so) and is still a fixed
point of EM on the rows' own likelihood. Dropped, not re-seeded with a
pinned row as documents' clusters are: dropping keeps that fixed point and
always ends (each round drops a cluster). k is at most the distinct rows
(`distinct_rows`): identical rows always share a cluster.

Recording resolution (clustering only: `WeightedColumns(...,
resolution_floor=True)`, which `fit.table_training.cluster_rows` asks for).
A gaussian column's resolution r is the smallest positive difference
between its distinct training values (`recording_resolution`): values
recorded to r differ by multiples of r. The rounding error of a value
recorded to r is uniform on [-r/2, r/2], of variance r^2/12, so no
cluster can know a column's spread more finely than that; the variance
scored is max(var_c + epsilon, r^2/12), i.e. floored at max(epsilon,
r^2/12). Why: epsilon is var_smoothing (1e-9) x the largest column
variance, far below a recording precision such as 0.1, so without the
floor a cluster that collapses onto a repeated value (iris, recorded to
0.1) gets a variance near epsilon and a likelihood that grows without
bound, and BIC prefers ever more such clusters. r is a constant of the
data (not of the memberships), so the M step stays the maximiser of the
weighted Gaussian likelihood over variances >= r^2/12 (that maximiser is
max(var_c, r^2/12); epsilon is kept, as above). The model keeps r
(`resolution`, spec "resolution": per column null or r) so a saved
cluster model scores with the same floor. Supervised training (`fit`,
`fit_weighted`) has no such floor: GaussianNB's rule exactly.
"""

from __future__ import annotations

import numpy as np

from nbcli.errors import NbcliError, ParameterError
from nbcli.nb.logmath import log_softmax
from nbcli.nb.table_cells import category_codes, column_numbers, equal_frequency_edges, recording_resolution
from nbcli.nb.tables import TableModel, TableSettings, check_settings, column_kinds


class WeightedColumns:
    """A table's columns parsed once, for repeated fits to soft memberships
    (`fit`: EM's M step; the formulas are `tables`' module docstring's).

    names, kinds, columns, settings: as for `TableModel.fit`. X (n, J): the
    rows encoded as `TableModel.encode` encodes them for every model fitted
    here (categorical codes, numbers, NaN missing). resolution_floor: floor
    each gaussian column's variances at r^2/12, r its recording resolution
    (`recording_resolution`; clustering, see the module docstring); then
    `resolution` holds r per column (None: not gaussian, or no r), and
    every model fitted here keeps it."""

    def __init__(self, names, kinds, columns, settings: TableSettings, resolution_floor: bool = False):
        self.settings = check_settings(settings)
        self.names = list(names)
        self.kinds = column_kinds(names, kinds, columns, self.settings)
        if "kde" in self.kinds:
            raise ParameterError(
                "numeric_model",
                "kde columns cannot be fitted to soft memberships (a kernel density has no maximum-likelihood M step)",
                hint="use {numeric_model:gaussian} or discretize",
            )
        n = len(columns[0]) if columns else 0
        self.X = np.empty((n, len(self.names)))
        self.categories: list[list[str] | None] = []
        self.edges: list[np.ndarray | None] = []
        self.max_variance = 0.0
        resolution: list[float | None] = []
        for j, (name, kind, column) in enumerate(zip(self.names, self.kinds, columns)):
            if len(column) != n:
                raise NbcliError(f"table column {name!r} has {len(column)} cells for {n} rows")
            edges = None
            if kind == "categorical":
                cats, self.X[:, j] = category_codes(column)
                self.categories.append(cats)
                self.edges.append(None)
                resolution.append(None)
                continue
            x = column_numbers(column)[0]
            values = x[~np.isnan(x)]
            if values.size == 0:
                raise NbcliError(
                    f"numeric table column {name!r} has no number in the training rows",
                    hint="drop the column, or make it categorical",
                )
            if kind == "discretize":
                edges = equal_frequency_edges(values, self.settings.bins)
            else:
                with np.errstate(over="ignore", invalid="ignore"):
                    pooled_var = float(np.var(values))
                if not np.isfinite(pooled_var):
                    raise NbcliError(f"numeric table column {name!r} has numbers too large to model")
                self.max_variance = max(self.max_variance, pooled_var)
            resolution.append(recording_resolution(values) if kind == "gaussian" else None)
            self.X[:, j] = x
            self.categories.append(None)
            self.edges.append(edges)
        self.resolution = resolution if resolution_floor else None

    def fit(self, classes: list[str], R: np.ndarray) -> TableModel:
        """The model of expected counts of memberships R (n, C): finite,
        >= 0, rows summing to 1 (within 1e-9). A class whose weight in a
        gaussian column is 0 takes the pooled mean and variance, as in
        `TableModel.fit`; a class of weight 0 is allowed (prior 0 when
        fitted without a pseudo-count)."""
        classes = list(classes)
        R = np.asarray(R, dtype=np.float64)
        n, n_classes = self.X.shape[0], len(classes)
        if n == 0:
            raise NbcliError("the table has no rows", hint="check the path")
        if R.shape != (n, n_classes) or not np.isfinite(R).all() or (R < 0).any():
            raise NbcliError(f"memberships must be {n} x {n_classes} finite numbers >= 0, not shape {R.shape}")
        if (np.abs(R.sum(axis=1) - 1.0) > 1e-9).any():
            raise NbcliError("each row's memberships must sum to 1")
        class_count = R.sum(axis=0)
        present = np.zeros((n_classes, len(self.names)))
        stats: list[dict] = []
        for j, kind in enumerate(self.kinds):
            x = self.X[:, j]
            ok = ~np.isnan(x)
            w = R[ok]
            if kind in ("categorical", "discretize"):
                categories, edges = self.categories[j], self.edges[j]
                if categories is not None:  # categorical
                    k, codes = len(categories), x[ok].astype(np.intp)
                else:
                    assert edges is not None  # a discretize column has its bin edges
                    k, codes = len(edges) + 1, np.searchsorted(edges, x[ok], side="left")
                counts = np.stack([np.bincount(codes, weights=w[:, c], minlength=k) for c in range(n_classes)])
                present[:, j] = counts.sum(axis=1)
                stats.append({"counts": counts.reshape(n_classes, k)})
                if kind == "discretize":
                    stats[-1]["edges"] = self.edges[j]
                continue
            values = x[ok]
            weight = w.sum(axis=0)
            present[:, j] = weight
            pooled = weight == 0
            safe = np.where(pooled, 1.0, weight)
            mean = (values @ w) / safe
            dev = values[:, None] - mean
            var = np.einsum("ic,ic->c", w, dev * dev) / safe
            mean[pooled], var[pooled] = float(np.mean(values)), float(np.var(values))
            stats.append({"mean": mean, "var": var})
        return TableModel(
            classes,
            class_count,
            self.names,
            self.kinds,
            self.settings,
            present,
            stats,
            list(self.categories),
            self.max_variance,
            expected=True,
            resolution=self.resolution,
        )


def fit_weighted(
    classes: list[str],
    R: np.ndarray,
    names: list[str],
    kinds: list[str],
    columns: list[np.ndarray],
    settings: TableSettings,
) -> TableModel:
    """`TableModel.fit` to soft memberships: R (n, C), row i's weight in
    each class (>= 0, each row summing to 1); the expected counts, weighted
    means and variances of the module docstring. A model with
    `expected` set. Refuses kde columns. For repeated fits to the same rows
    (EM), parse them once: `WeightedColumns(...).fit(classes, R)`."""
    return WeightedColumns(names, kinds, columns, settings).fit(classes, R)


def free_parameters(model) -> int:
    """The free parameters of a mixture of table models (see `fit.table_training.cluster_rows`).
    The variance floors (epsilon, r^2/12) are constants of the data, not
    parameters: a gaussian column counts its mean and variance."""
    k = len(model.classes)
    per_cluster = sum(
        model.stats[j]["counts"].shape[1] - 1 if kind in ("categorical", "discretize") else 2
        for j, kind in enumerate(model.kinds)
    )
    return k * per_cluster + (k - 1 if model.settings.prior == "fit" else 0)


def e_step(model, X: np.ndarray) -> tuple[np.ndarray, float]:
    """(R (n, C) posterior memberships P(c | x_i), as `predict_log_proba`
    gives them; objective J = log p(theta) + sum_i log sum_c pi_c P(x_i | c))
    of the mixture `model` on the encoded rows X. log p(theta) is
    `TableModel.log_parameter_prior`; J is -inf when a row has probability
    0 in every cluster (unsmoothed counts only)."""
    jll = model.joint_log_likelihood(X)
    top = jll.max(axis=1)
    finite = np.isfinite(top)
    with np.errstate(divide="ignore"):
        lse = np.where(finite, top, -np.inf) + np.log(np.exp(jll - np.where(finite, top, 0.0)[:, None]).sum(axis=1))
    jll[~finite] = model.log_prior
    objective = model.log_parameter_prior() + float(lse.sum())
    return np.exp(log_softmax(jll)), objective


def start_memberships(rng: np.random.Generator, n: int, k: int) -> np.ndarray:
    """Random starting memberships (n, k): each row wholly in a random
    cluster, rows 0..k-1 in clusters 0..k-1 so that none starts empty."""
    assign = rng.integers(0, k, n)
    assign[:k] = np.arange(min(k, n))
    return np.eye(k)[assign]


def em_rows(prepared, R: np.ndarray, max_iter: int, tol: float):
    """EM for a mixture of table models from memberships R (n, k):
    (model, its memberships R, objectives). Each iteration is an M step
    (the expected-count fit, `WeightedColumns.fit`) and an E step
    (`e_step`: the memberships and the objective J of the model just
    fitted); it stops after max_iter iterations, or when J rose by at most
    tol x |J| (relative).

    J never decreases: the E step makes the memberships the posterior, and
    the M step maximises sum_i sum_c r_ic log(pi_c P(x_i | c)) + log p(theta)
    for categorical and discretize columns (the smoothed counts are the
    Dirichlet posterior mode) and the prior. A gaussian column's resolution
    floor f = r^2/12 (`WeightedColumns(..., resolution_floor=True)`)
    depends on the data only, never on the memberships, so every M step
    maximises over the same set s_c >= f: the maximiser of -N_c/2 log s -
    N_c var_c / (2 s) there is max(var_c, f), scored as max(var_c +
    epsilon, f). Above the floor the maximiser is var_c, not var_c +
    epsilon (GaussianNB's floor, kept): a
    step in which var_c grows by less than epsilon can lower J, by at most
    about N_c epsilon^2 / (4 var_c^2) per cluster and column: far below the
    float resolution of J at the default var_smoothing while var_c is well
    above epsilon, but not where a cluster collapses on near-equal values
    and var_c nears epsilon (a fall of 1.1e-9 of J seen in a column of
    zeros and a 26: tests/nb/test_table_em.py). And J
    is computed in floats: in a column whose values are all equal up to
    rounding, epsilon falls under the rounding error of the variances and
    J can wobble by more.
    """
    classes = [f"cluster{c + 1}" for c in range(R.shape[1])]
    model, objectives = None, []
    for _ in range(max_iter):
        model = prepared.fit(classes, R)
        R, objective = e_step(model, prepared.X)
        objectives.append(objective)
        if len(objectives) > 1 and objectives[-1] - objectives[-2] <= tol * abs(objectives[-2]):
            break
    return model, R, objectives


def distinct_rows(X: np.ndarray) -> int:
    """How many different rows the encoded rows X (n, J) hold, as a model
    sees them (missing cells alike, -0.0 as 0.0). Identical rows have the
    same memberships in every E step, so they always share a cluster."""
    X = np.ascontiguousarray(np.where(np.isnan(X), np.nan, X + 0.0))
    return len(np.unique(X.view(np.dtype((np.void, X.dtype.itemsize * X.shape[1]))))) if X.shape[1] else min(len(X), 1)


def best_clustering(prepared, k: int, restarts: int, seed: int, max_iter: int, tol: float):
    """The highest objective of `restarts` EM runs: (model, objective, its
    iterations), with no cluster that no row prefers (see the module
    docstring: such clusters are dropped, EM runs on from the others'
    memberships, until every cluster is some row's most probable one), the
    clusters named 1..k'."""
    n = prepared.X.shape[0]
    best = None
    for r in range(restarts):
        rng = np.random.default_rng([seed, r])
        model, R, objectives = em_rows(prepared, start_memberships(rng, n, k), max_iter, tol)
        if best is None or objectives[-1] > best[2]:
            best = (model, R, objectives[-1], len(objectives))
    assert best is not None, "restarts must be at least 1"
    model, R, objective, iterations = best
    while True:
        log_proba = model.predict_log_proba(prepared.X)  # what predict says of the rows
        keep = np.bincount(log_proba.argmax(axis=1), minlength=len(model.classes)) > 0
        if keep.all():
            return model, objective, iterations
        R = np.exp(log_proba[:, keep])  # each row keeps its most probable cluster: no row sums to 0
        model, R, objectives = em_rows(prepared, R / R.sum(axis=1, keepdims=True), max_iter, tol)
        objective, iterations = objectives[-1], iterations + len(objectives)
