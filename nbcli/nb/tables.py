"""Naive Bayes on tables: rows of categorical and numeric columns.

No I/O here: the readers turn CSV rows into columns, this module turns
columns into a model and a model into log posteriors. Notation: C classes,
N_c training rows of class c, J columns; for column j, N_cj rows of class c
whose cell is present (not missing), K_j the categories seen in training.

Naive Bayes: jll_c(x) = log pi_c + sum_j log P(x_j | c), the sum running
over the present cells of x only (a missing cell is skipped: it contributes
0, in training and in scoring alike); log P(c | x) = jll_c - logsumexp(jll).

Missing cells and column kinds (`infer_kind`): see `table_cells`, which
reads cells into columns (numbers, category codes, `Coded` columns).

Categorical columns (Mitchell's PlayTennis). Counts N_cjv of category v in
class c over present cells; categories are the stripped cell texts, sorted
by their string. With a pseudo-count b per category (b = alpha, the
Lidstone/Laplace rule; b = M P with the m-estimate (M, P), P = 1/K_j unless
given; b - 1 for the posterior mode, estimate 'map') and B = K_j b (M for
the m-estimate, M - K_j for its mode):

    P(v | c) = (N_cjv + b) / (N_cj + B)

smoothing over the K_j categories seen in training: the lecture's Laplace
rule, Mitchell's m-estimate (n_c + m p) / (n + m) with p = 1/k, and
scikit-learn's CategoricalNB alike. A category never seen in training (in
any class) scores b / (N_cj + B): the mass one more category with count 0
would get, not renormalised (adding the extra cell to the smoothing would
change every seen probability and break the textbook's numbers). It is
therefore never an error (a column with no present training cell at all
contributes 0); with alpha 0 (unsmoothed) it has probability 0
in every class, like a seen category absent from a class. alpha 0 with a
class that has no present cell in the column (0/0): uniform 1/K_j. With
an explicit P the m-estimate is Mitchell's formula as written, whose K_j
probabilities sum to 1 only when P = 1/K_j; it needs estimate 'mean'.

Gaussian columns: per class, the mean mu_cj and variance (ddof 0) of the
present values, plus epsilon = var_smoothing * (the largest variance, ddof
0, over all classes pooled, of any gaussian or kde column) — scikit-learn
GaussianNB's rule; when that largest variance is 0, epsilon = var_smoothing.
log P(x | c) = -0.5 log(2 pi var) - (x - mu)^2 / (2 var).

KDE columns: a Gaussian kernel density estimate per class and column,
P(x | c) = (1/n) sum_i phi((x - x_i) / h) / h over the class's n present
values x_i, with h = factor * std (ddof 1) and factor n^(-1/5) ('scott') or
(3n/4)^(-1/5) ('silverman'), as scipy.stats.gaussian_kde; or h = a given
number, in the column's units. h is floored at sqrt(epsilon) (so n = 1 or
all-equal values still give a density). Scoring costs O(n) per cell
(distinct values are scored once; chunks bound memory at about 32 MB).

Discretize columns: the pooled present training values are cut into at most
`bins` equal-frequency bins at their quantiles k/bins (k = 1..bins-1,
numpy's 'inverted_cdf': each edge is a training value); repeated edges and
an edge equal to the largest value are dropped, so every bin holds at least
one training value. Bin 0 is x <= e_0, bin k is e_(k-1) < x <= e_k, the
last bin x > e_last: a value equal to an edge, and so a tied block, goes to
the lower bin. The bins are then the categories of a categorical column
(values outside the training range fall into the first or last bin).

Far cells: a gaussian or kde cell whose log-density is beyond floats (1e200
in a column of unit variance) is scored as floating point with an unbounded
exponent would score it, not refused or read as missing: the class whose
Gaussian is widest wins as x grows, no NaN (`table_scoring`'s docstring).

A class with no present value in a gaussian or kde column uses the pooled
(all classes) values of that column instead (mean and variance, or the
kernel density); a numeric column with no present training value at all is
an error.

Prior: `smoothing.log_prior` (fit with an optional pseudo-count, uniform, or
given weights), counted once. A row in which every class has probability 0
(possible only unsmoothed: alpha 0 or a MAP estimate with b = 0) gets the
prior as its posterior.

Expected counts (soft memberships, EM's M step) and the recording
resolution that floors a cluster's variances: see `table_em`, which fits
them; a model keeps `expected` and `resolution` and scores with them.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from nbcli.errors import NbcliError, ParameterError
from nbcli.nb.logmath import log_softmax
from nbcli.nb.smoothing import ESTIMATES, MAX_PSEUDO_COUNT, check_prior_alpha, check_prior_smoothing, log_prior
from nbcli.nb.table_cells import category_codes, column_numbers, equal_frequency_edges, is_missing
from nbcli.nb.table_scoring import excess, far_sum, numeric_scores

NUMERIC_MODELS = ("gaussian", "kde", "discretize")
KINDS = ("categorical",) + NUMERIC_MODELS
BANDWIDTHS = ("scott", "silverman")
TOP_CATEGORIES = 5  # categories per class and column in `summary`


@dataclass
class TableSettings:
    """How a table model smooths and models its columns (see the module
    docstring for the formulas).

    alpha: pseudo-count per category (categorical and discretize columns),
        0 = unsmoothed. m_estimate: (M, P or None), replaces alpha.
    estimate: 'mean' (posterior mean) or 'map' (posterior mode, b - 1).
    prior: 'fit', 'uniform' or {class: weight}; prior_alpha: pseudo-count
        on the class counts of a fitted prior.
    numeric_model: what 'numeric' columns become: gaussian, kde, discretize.
    var_smoothing: epsilon = var_smoothing * the largest pooled variance.
    bandwidth: kde: 'scott', 'silverman' or the kernel's std (> 0).
    bins: discretize: the most equal-frequency bins (>= 2)."""

    alpha: float = 1.0
    m_estimate: tuple[float, float | None] | None = None
    estimate: str = "mean"
    prior: object = "fit"
    prior_alpha: float | None = None
    numeric_model: str = "gaussian"
    var_smoothing: float = 1e-9
    bandwidth: object = "scott"
    bins: int = 10


def check_settings(settings: TableSettings) -> TableSettings:
    """The settings with plain Python values, or a ParameterError naming
    the setting (the command line says its flag)."""
    alpha = _number(settings.alpha)
    if not (np.isfinite(alpha) and 0 <= alpha <= MAX_PSEUDO_COUNT):
        raise ParameterError(
            "alpha",
            "{alpha} must be a number from 0 to {most:g}, not {value}",
            most=MAX_PSEUDO_COUNT,
            value=settings.alpha,
        )
    m_estimate = settings.m_estimate
    if m_estimate is not None:
        try:
            m, p = m_estimate
            m, p = float(m), None if p is None else float(p)
        except (TypeError, ValueError):
            m, p = float("nan"), None
        if not (np.isfinite(m) and 0 < m <= MAX_PSEUDO_COUNT) or (p is not None and not (0 < p < 1)):
            raise ParameterError(
                "m_estimate",
                "{m_estimate} {value!r} is not valid",
                hint="give M > 0, or M,P with 0 < P < 1",
                value=m_estimate,
            )
        m_estimate = (m, p)
    if settings.estimate not in ESTIMATES:
        raise ParameterError(
            "estimate",
            "{estimate} {value!r} is not one of {choices}",
            value=settings.estimate,
            choices=", ".join(ESTIMATES),
        )
    if settings.estimate == "map":
        if m_estimate is not None and m_estimate[1] is not None:
            raise ParameterError(
                "estimate", "{estimate:map} with an m-estimate's P is not defined", hint="give only M, or use mean"
            )
        if m_estimate is None and alpha < 1:
            raise ParameterError(
                "estimate",
                "{estimate:map} needs {alpha} of at least 1 on table columns, not {value:g}",
                hint="alpha - 1 < 0 would give a category never seen in a class a probability below 0",
                value=alpha,
            )
    prior = settings.prior
    if isinstance(prior, dict):
        prior = {str(k): _number(v) for k, v in prior.items()}
        if not prior or not all(np.isfinite(w) and 0 < w <= MAX_PSEUDO_COUNT for w in prior.values()):
            raise ParameterError("prior", "{prior} weights must be positive numbers")
    elif prior not in ("fit", "uniform"):
        raise ParameterError(
            "prior", "{prior} {value!r} is not valid", hint="use 'fit', 'uniform' or CLASS=WEIGHT pairs", value=prior
        )
    prior_alpha = check_prior_alpha(None if settings.prior_alpha is None else _number(settings.prior_alpha))
    check_prior_smoothing(prior, prior_alpha)
    if settings.numeric_model not in NUMERIC_MODELS:
        raise ParameterError(
            "numeric_model",
            "{numeric_model} {value!r} is not one of {choices}",
            value=settings.numeric_model,
            choices=", ".join(NUMERIC_MODELS),
        )
    var_smoothing = _number(settings.var_smoothing)
    if not (np.isfinite(var_smoothing) and 0 < var_smoothing <= 1):
        raise ParameterError(
            "var_smoothing",
            "{var_smoothing} must be a number above 0 and at most 1, not {value}",
            value=settings.var_smoothing,
        )
    bandwidth = settings.bandwidth
    if bandwidth not in BANDWIDTHS:
        bandwidth = _number(bandwidth)
        if not (np.isfinite(bandwidth) and bandwidth > 0):
            raise ParameterError(
                "bandwidth",
                "{bandwidth} {value!r} is not valid",
                hint="use 'scott', 'silverman' or a positive number (the kernel's standard deviation)",
                value=settings.bandwidth,
            )
    bins = settings.bins
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or not 2 <= bins <= 1_000_000:
        raise ParameterError("bins", "{bins} must be a whole number from 2 to 1000000, not {value!r}", value=bins)
    return TableSettings(
        alpha=alpha,
        m_estimate=m_estimate,
        estimate=settings.estimate,
        prior=prior,
        prior_alpha=prior_alpha,
        numeric_model=settings.numeric_model,
        var_smoothing=var_smoothing,
        bandwidth=bandwidth,
        bins=int(bins),
    )


def _number(value) -> float:
    if isinstance(value, bool):
        return float("nan")
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _category_log_table(counts: np.ndarray, settings: TableSettings) -> np.ndarray:
    """(K + 1, C) log P(v | c) from counts (C, K): rows 0..K-1 the seen
    categories, row K a category never seen (see the module docstring)."""
    n_classes, k = counts.shape
    if k == 0:
        return np.zeros((1, n_classes))  # no category ever seen: no evidence either way
    mode = settings.estimate == "map"
    if settings.m_estimate is None:
        b = settings.alpha - mode
        total = k * b
    else:
        m, p = settings.m_estimate
        b = m * (p if p is not None else 1.0 / k) - mode
        total = m - k * mode
    if b < 0:
        raise ParameterError(
            "estimate",
            "{estimate:map} is undefined here: a pseudo-count of {pseudo:g} per category "
            "would give a category never seen in a class a probability below 0",
            hint="use an m-estimate M of at least the number of categories, or {estimate:mean}",
            pseudo=b + 1,
        )
    cells = np.concatenate([counts, np.zeros((n_classes, 1))], axis=1) + b
    denominator = counts.sum(axis=1, keepdims=True) + total
    with np.errstate(divide="ignore", invalid="ignore"):
        table = np.log(cells) - np.log(denominator)
    # 0/0: no present cell in the class and no pseudo-count: uniform
    table[(denominator <= 0).ravel()] = -np.log(k)
    return np.ascontiguousarray(table.T)


def column_kinds(names, kinds, columns, settings: TableSettings) -> list[str]:
    """The columns' kinds with 'numeric' resolved, or NbcliError if the
    names, kinds and columns do not match."""
    if not (len(names) == len(kinds) == len(columns)):
        raise NbcliError("a table needs one name and one kind per column")
    if len(set(names)) != len(names):
        raise NbcliError("two table columns have the same name")
    kinds = [settings.numeric_model if kind == "numeric" else kind for kind in kinds]
    for kind in kinds:
        if kind not in KINDS:
            known = ", ".join(("categorical", "numeric") + NUMERIC_MODELS)
            raise NbcliError(f"column kind {kind!r} is not one of {known}")
    return kinds


def _bad(what: str) -> NbcliError:
    return NbcliError(f"the table model is not valid: {what}", hint="train it again")


def _listed(spec: dict, key: str) -> list:
    """spec[key], which must be a list (a model file's), else `_bad`."""
    value = spec.get(key)
    if not isinstance(value, list):
        raise _bad(f"{key} is not a list")
    return value


class TableModel:
    """Naive Bayes over a table's columns (see the module docstring).

    classes: the class names; class_count: (C,) training rows per class;
    names, kinds: per column, kind 'categorical', 'gaussian', 'kde' or
    'discretize'; present: (C, J) present training cells per class and
    column; stats[j]: the column's statistics, as stored in a model file:
    categorical {'counts' (C, K_j)} with categories[j] its K_j sorted texts;
    discretize {'counts' (C, K_j), 'edges' (K_j - 1,)}; gaussian {'mean'
    (C,), 'var' (C,) ddof 0, without epsilon}; kde {'values' (sum,) each
    class's values sorted, class c's at offsets[c]:offsets[c + 1],
    'offsets' (C + 1,)}; a class with no present cell holds the pooled
    statistics. max_variance: the largest pooled variance of a gaussian
    or kde column (epsilon's scale). resolution: None, or per column None
    or the recording resolution r of a gaussian column (clustering: its
    variances are floored at r^2/12, see `table_em`'s module docstring). The
    scoring tables are derived from these and the settings. expected: the counts are expected counts of
    soft memberships (`table_em.fit_weighted`): class_count, present and the
    category counts may be fractional (present is then float64).
    """

    kind = "table"

    def __init__(
        self,
        classes,
        class_count,
        names,
        kinds,
        settings,
        present,
        stats,
        categories,
        max_variance,
        expected=False,
        resolution=None,
    ):
        self.classes = list(classes)
        self.class_count = np.asarray(class_count, dtype=np.float64)
        self.names = list(names)
        self.kinds = list(kinds)
        self.settings = check_settings(settings)
        self.expected = bool(expected)
        self.present = np.asarray(present, dtype=np.float64 if self.expected else np.int64)
        self.stats = stats
        self.categories = categories
        self.max_variance = float(max_variance)
        self.epsilon = self.settings.var_smoothing * (self.max_variance if self.max_variance > 0 else 1.0)
        self.resolution = None if resolution is None else [None if r is None else float(r) for r in resolution]
        self.log_prior = log_prior(self.class_count, self.classes, self.settings.prior, self.settings.prior_alpha)
        self.tables = [self._derive(j) for j in range(len(self.names))]

    # -- training ----------------------------------------------------------

    @classmethod
    def fit(
        cls,
        classes: list[str],
        y: np.ndarray,
        names: list[str],
        kinds: list[str],
        columns: list[np.ndarray],
        settings: TableSettings,
    ) -> TableModel:
        """Count and measure the training rows.

        y: (n,) class index of each row; kinds: per column 'categorical',
        'numeric' (-> settings.numeric_model) or a numeric model's name;
        columns[j]: categorical: the raw cells (str or object array) or a
        `Coded` column; numeric: float64 with NaN for missing (or the raw
        cells). columns may be any sequence: each column is taken once, in
        order, and let go before the next (`table_classifier` passes views
        that cut the rows of a fold out of one column at a time)."""
        settings = check_settings(settings)
        classes = list(classes)
        n_classes = len(classes)
        y = np.asarray(y)
        if y.ndim != 1 or (y.size and (y.dtype.kind not in "iu" or y.min() < 0 or y.max() >= n_classes)):
            raise NbcliError("table rows need class indices 0..C-1")
        class_count = np.bincount(y, minlength=n_classes).astype(np.float64)
        empty = [c for c, count in zip(classes, class_count) if count == 0]
        if empty:
            raise NbcliError(f"class {empty[0]!r} has no training rows", hint="give rows of every class, or drop it")
        kinds = column_kinds(names, kinds, columns, settings)
        present = np.zeros((n_classes, len(names)), dtype=np.int64)
        stats: list[dict] = []
        categories: list[list[str] | None] = []
        max_variance = 0.0
        for j, (name, kind, column) in enumerate(zip(names, kinds, columns)):
            if len(column) != len(y):
                raise NbcliError(f"table column {name!r} has {len(column)} cells for {len(y)} rows")
            if kind == "categorical":
                cats, codes = category_codes(column)
                ok = ~np.isnan(codes)
                counts = np.bincount(
                    y[ok] * len(cats) + codes[ok].astype(np.intp), minlength=n_classes * len(cats)
                ).reshape(n_classes, len(cats))
                present[:, j] = counts.sum(axis=1)
                stats.append({"counts": counts.astype(np.float64)})
                categories.append(cats)
                continue
            x = column_numbers(column)[0]
            ok = ~np.isnan(x)
            values, yc = (x, y) if ok.all() else (x[ok], y[ok])  # no copies of a column without a missing cell
            if values.size == 0:
                raise NbcliError(
                    f"numeric table column {name!r} has no number in the training rows",
                    hint="drop the column, or make it categorical",
                )
            n_c = np.bincount(yc, minlength=n_classes)
            present[:, j] = n_c
            categories.append(None)
            if kind == "discretize":
                edges = equal_frequency_edges(values, settings.bins)
                codes = np.searchsorted(edges, values, side="left")
                k = len(edges) + 1
                counts = np.bincount(yc * k + codes, minlength=n_classes * k).reshape(n_classes, k)
                stats.append({"counts": counts.astype(np.float64), "edges": edges})
                continue
            with np.errstate(over="ignore", invalid="ignore"):
                pooled_var = float(np.var(values))
            if not np.isfinite(pooled_var):
                raise NbcliError(f"numeric table column {name!r} has numbers too large to model")
            max_variance = max(max_variance, pooled_var)
            if kind == "gaussian":
                safe = np.maximum(n_c, 1)
                mean = np.bincount(yc, weights=values, minlength=n_classes) / safe
                dev = mean[yc]
                np.subtract(values, dev, out=dev)
                dev *= dev
                var = np.bincount(yc, weights=dev, minlength=n_classes) / safe
                pooled = n_c == 0
                mean[pooled], var[pooled] = float(np.mean(values)), pooled_var
                stats.append({"mean": mean, "var": var})
            else:
                order = np.lexsort((values, yc))
                parts = [values[order][yc[order] == c] for c in range(n_classes)]
                pooled_values = np.sort(values)
                parts = [part if part.size else pooled_values for part in parts]
                offsets = np.concatenate([[0], np.cumsum([len(part) for part in parts])]).astype(np.int64)
                stats.append({"values": np.concatenate(parts), "offsets": offsets})
        return cls(classes, class_count, names, kinds, settings, present, stats, categories, max_variance)

    def log_parameter_prior(self) -> float:
        """log p(theta) up to a constant, the prior whose posterior mode the
        counts' estimates are: sum over the categorical and discretize
        columns, classes and seen categories of b log P(v | c) (Dirichlet
        b + 1: b the pseudo-count of the module docstring, minus 1 for
        'map'), plus A sum_c log pi_c for a fitted prior with prior_alpha A.
        Gaussian columns' parameters have a flat prior."""
        total = 0.0
        if self.settings.prior == "fit" and self.settings.prior_alpha:
            total += self.settings.prior_alpha * float(self.log_prior.sum())
        mode = self.settings.estimate == "map"
        for j, kind in enumerate(self.kinds):
            if kind not in ("categorical", "discretize"):
                continue
            k = self.tables[j].shape[0] - 2
            if k == 0:
                continue
            if self.settings.m_estimate is None:
                b = self.settings.alpha - mode
            else:
                m, p = self.settings.m_estimate
                b = m * (p if p is not None else 1.0 / k) - mode
            if b > 0:
                total += b * float(self.tables[j][:k].sum())
        return total

    def _derive(self, j: int):
        """The scoring table of column j: categorical/discretize (K + 2, C)
        log probabilities (row K unseen, row K + 1 zeros for missing);
        gaussian (mean (C,), max(variance + epsilon, r^2/12) (C,), r the
        column's resolution if the model has one); kde a list per class
        of (distinct values, log of their multiplicity, n, h)."""
        kind, stat = self.kinds[j], self.stats[j]
        if kind in ("categorical", "discretize"):
            table = _category_log_table(stat["counts"], self.settings)
            return np.concatenate([table, np.zeros((1, len(self.classes)))])
        if kind == "gaussian":
            r = None if self.resolution is None else self.resolution[j]
            return stat["mean"], np.maximum(stat["var"] + self.epsilon, 0.0 if r is None else r * r / 12.0)
        floor = np.sqrt(self.epsilon)
        out = []
        offsets = stat["offsets"]
        for c in range(len(self.classes)):
            values = stat["values"][offsets[c] : offsets[c + 1]]
            n = len(values)
            if self.settings.bandwidth in BANDWIDTHS:
                std = float(np.std(values, ddof=1)) if n > 1 else 0.0
                factor = n ** (-0.2) if self.settings.bandwidth == "scott" else (0.75 * n) ** (-0.2)
                h = factor * std
            else:
                h = float(self.settings.bandwidth)
            points, multiplicity = np.unique(values, return_counts=True)
            out.append((points, np.log(multiplicity), n, max(h, floor)))
        return out

    # -- scoring -----------------------------------------------------------

    def encode(self, columns: list[np.ndarray]) -> np.ndarray:
        """Raw columns (as for `fit`; numeric ones may be given as text) ->
        X (n, J) float64: numeric and discretize columns their value (NaN
        missing, also a text that is not a number), categorical columns the
        category's code 0..K_j-1, K_j for a category never seen, NaN for
        missing."""
        return self.encode_reporting(columns)[0]

    def encode_reporting(self, columns: list[np.ndarray]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        """(`encode`'s X, {name of a numeric column: the rows (indices) of
        its present cells that are not finite numbers, read as missing}),
        the columns without such cells left out."""
        if len(columns) != len(self.names):
            raise NbcliError(f"the table model has {len(self.names)} columns, not {len(columns)}")
        n = len(columns[0]) if columns else 0
        X = np.empty((n, len(self.names)))
        unreadable = {}
        for j, column in enumerate(columns):
            if len(column) != n:
                raise NbcliError(f"table column {self.names[j]!r} has {len(column)} cells for {n} rows")
            if self.kinds[j] == "categorical":
                X[:, j] = category_codes(column, self.categories[j])[1]
                continue
            X[:, j], bad = column_numbers(column)
            if bad is not None and bad.any():
                unreadable[self.names[j]] = np.flatnonzero(bad)
        return X, unreadable

    def _column(self, j: int, x: np.ndarray, far: list) -> np.ndarray:
        """(n, C) log P(x | c) of column j's cells x, 0 where missing; a far
        cell's R, its far term in `far` (`table_scoring.numeric_scores`)."""
        kind, table = self.kinds[j], self.tables[j]
        if kind not in ("categorical", "discretize"):
            return numeric_scores(kind, table, x, len(self.classes), far, j)
        missing = np.isnan(x)
        k = table.shape[0] - 2
        if kind == "discretize":
            codes = np.searchsorted(self.stats[j]["edges"], np.where(missing, 0.0, x), side="left")
        else:
            if not missing.all() and not (np.nanmin(x) >= 0 and np.nanmax(x) <= k):
                raise NbcliError(f"table column {self.names[j]!r}: category codes out of range")
            codes = np.where(missing, 0, x).astype(np.intp)
        codes[missing] = k + 1
        return np.take(table, codes, axis=0)

    def _check_X(self, X) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != len(self.names):
            raise NbcliError(f"table rows need {len(self.names)} columns, not shape {X.shape}")
        return X

    def scored(self, X, per_column: bool = False) -> tuple[np.ndarray, list]:
        """(L, far): L (n, C) log pi_c + sum_j log P(x_j | c), or with
        per_column (n, J, C) log P(x_j | c), the far cells' R in them; far:
        their far terms [(column, rows, q, e)] (`table_scoring`)."""
        X = self._check_X(X)
        far: list[tuple] = []
        if per_column:
            return np.stack([self._column(j, X[:, j], far) for j in range(X.shape[1])], axis=1), far
        jll = np.tile(self.log_prior, (X.shape[0], 1))
        for j in range(X.shape[1]):
            jll += self._column(j, X[:, j], far)
        return jll, far

    def column_log_likelihood(self, X) -> np.ndarray:
        """(n, J, C): log P(x_j | c) of each present cell, 0 where missing
        (-inf where beyond floats)."""
        L, far = self.scored(X, per_column=True)
        with np.errstate(over="ignore"):
            for j, rows, q, e in far:
                L[rows, j] -= np.ldexp(q, e)
        return L

    def joint_log_likelihood(self, X, relative: bool = False) -> np.ndarray:
        """(n, C): log pi_c + sum_j log P(x_j | c) (prior counted once),
        -inf where beyond floats; relative: less a constant of each row
        with far cells, so that it is finite for its likeliest classes
        (`table_scoring.excess`)."""
        jll, far = self.scored(X)
        if far:
            rows, S, K = far_sum(far, len(self.classes))
            with np.errstate(over="ignore"):
                jll[rows] -= excess(S, K) if relative else np.ldexp(S, K)
        return jll

    def predict_log_proba(self, X) -> np.ndarray:
        """(n, C) log P(c | x); a row where every class has probability 0
        (unsmoothed counts only) gets the prior's posterior."""
        jll = self.joint_log_likelihood(X, relative=True)
        hopeless = ~np.isfinite(jll.max(axis=1))
        jll[hopeless] = self.log_prior
        return log_softmax(jll)

    # -- storage -----------------------------------------------------------

    def settings_dict(self) -> dict:
        """The settings as plain JSON values."""
        s = self.settings
        return {
            "alpha": s.alpha,
            "m_estimate": None if s.m_estimate is None else list(s.m_estimate),
            "estimate": s.estimate,
            "prior": dict(s.prior) if isinstance(s.prior, dict) else s.prior,
            "prior_alpha": s.prior_alpha,
            "numeric_model": s.numeric_model,
            "var_smoothing": s.var_smoothing,
            "bandwidth": s.bandwidth,
            "bins": s.bins,
        }

    def state(self) -> tuple[dict, dict[str, np.ndarray]]:
        """(spec, arrays): plain JSON values and named float64/int64 arrays
        from which `from_state` rebuilds this model."""
        spec = {
            "kind": self.kind,
            "classes": list(self.classes),
            "names": list(self.names),
            "kinds": list(self.kinds),
            "categories": [None if cats is None else list(cats) for cats in self.categories],
            "max_variance": self.max_variance,
            "settings": self.settings_dict(),
        }
        if self.expected:
            spec["expected"] = True
        if self.resolution is not None:
            spec["resolution"] = list(self.resolution)
        arrays = {"class_count": self.class_count, "present": self.present}
        for j, stat in enumerate(self.stats):
            for key, value in stat.items():
                arrays[f"col{j}_{key}"] = value
        return spec, arrays

    @classmethod
    def from_state(cls, spec: dict, arrays: dict) -> TableModel:
        """Rebuild a model from `state`'s output, checking every part:
        anything wrong is one NbcliError naming it. Counts must be whole
        numbers unless spec "expected" is true; then they may be fractional
        (sums checked to a relative 1e-9) and no column may be kde."""
        try:
            return cls._from_state(spec, arrays)
        except NbcliError as error:
            if error.message.startswith("the table model is not valid"):
                raise
            raise _bad(error.message) from None

    @classmethod
    def _from_state(cls, spec: dict, arrays: dict) -> TableModel:
        if not isinstance(spec, dict) or spec.get("kind") != cls.kind:
            raise _bad("it is not a table model")
        classes, names, kinds, categories = (_listed(spec, key) for key in ("classes", "names", "kinds", "categories"))
        settings = spec.get("settings")
        if not classes or not all(isinstance(c, str) and c for c in classes) or len(set(classes)) != len(classes):
            raise _bad("the classes are not distinct names")
        if not all(isinstance(n, str) for n in names) or len(set(names)) != len(names):
            raise _bad("the column names are not distinct names")
        if not (len(names) == len(kinds) == len(categories)):
            raise _bad("the columns' names, kinds and categories differ in number")
        unknown = [k for k in kinds if k not in KINDS]
        if unknown:
            raise _bad(f"unknown column kind {unknown[0]!r}")
        if not isinstance(settings, dict) or set(settings) - {f.name for f in fields(TableSettings)}:
            raise _bad("the settings are not the table settings")
        settings = dict(settings)
        if isinstance(settings.get("m_estimate"), list):
            settings["m_estimate"] = tuple(settings["m_estimate"])
        settings = TableSettings(**settings)
        max_variance = spec.get("max_variance")
        if isinstance(max_variance, bool) or not isinstance(max_variance, (int, float)):
            raise _bad("max_variance is not a number")
        if not (np.isfinite(max_variance) and max_variance >= 0):
            raise _bad("max_variance is not a finite number >= 0")
        expected = spec.get("expected", False)
        if not isinstance(expected, bool):
            raise _bad("expected is not true or false")
        if expected and "kde" in kinds:
            raise _bad("a model of expected counts has a kde column")
        resolution = spec.get("resolution")
        if resolution is not None:
            if not isinstance(resolution, list) or len(resolution) != len(kinds):
                raise _bad("resolution is not a list of one entry per column")
            for r, kind in zip(resolution, kinds):
                if r is None:
                    continue
                if kind != "gaussian":
                    raise _bad(f"a {kind} column has a resolution")
                if isinstance(r, bool) or not isinstance(r, (int, float)) or not (np.isfinite(r) and r > 0):
                    raise _bad("a resolution is not a finite number > 0")
        n_classes, n_columns = len(classes), len(names)

        def array(key: str, shape: tuple | None = None, integer: bool = False) -> np.ndarray:
            if key not in arrays:
                raise _bad(f"array {key} is missing")
            a = np.asarray(arrays[key])
            if a.dtype.kind not in ("iu" if integer else "fiu"):
                raise _bad(f"array {key} has type {a.dtype}")
            a = a.astype(np.int64 if integer else np.float64)
            if shape is not None and a.shape != shape:
                raise _bad(f"array {key} has shape {a.shape}, not {shape}")
            if a.ndim != 1 and shape is None:
                raise _bad(f"array {key} has shape {a.shape}, not one axis")
            if not integer and not np.isfinite(a).all():
                raise _bad(f"array {key} holds a non-finite number")
            return a

        def whole(counts: np.ndarray, what: str) -> None:
            if not expected and (counts != np.round(counts)).any():
                raise _bad(f"{what} are not whole numbers")

        def adds_up(total: np.ndarray, parts: np.ndarray) -> bool:
            if not expected:
                return bool((total == parts).all())
            return bool((np.abs(total - parts) <= 1e-9 * np.maximum(np.abs(parts), 1.0)).all())

        class_count = array("class_count", (n_classes,))
        whole(class_count, "the class counts")
        present = array("present", (n_classes, n_columns), integer=not expected)
        slack = 1e-9 * np.maximum(class_count, 1.0) if expected else 0.0
        if (class_count < 0).any() or (present < 0).any() or (present > (class_count + slack)[:, None]).any():
            raise _bad("negative counts, or more present cells than rows")
        stats: list[dict] = []
        for j, (name, kind, cats) in enumerate(zip(names, kinds, categories)):
            where = f"column {name!r} ({kind})"
            if kind == "categorical":
                if not isinstance(cats, list) or not all(isinstance(v, str) for v in cats):
                    raise _bad(f"{where}: its categories are not a list of texts")
                if any(a >= b for a, b in zip(cats, cats[1:])) or any(v != v.strip() or is_missing(v) for v in cats):
                    raise _bad(f"{where}: its categories are not distinct, sorted, stripped texts")
            elif cats is not None:
                raise _bad(f"{where}: has categories")
            if kind in ("categorical", "discretize"):
                stat = {}
                if kind == "discretize":
                    stat["edges"] = array(f"col{j}_edges")
                    if (np.diff(stat["edges"]) <= 0).any():
                        raise _bad(f"{where}: its bin edges are not increasing")
                k = len(cats) if kind == "categorical" else len(stat["edges"]) + 1
                counts = array(f"col{j}_counts", (n_classes, k))
                whole(counts, f"{where}: its counts")
                if (counts < 0).any() or not adds_up(counts.sum(axis=1), present[:, j]):
                    raise _bad(f"{where}: its counts are negative or do not add up to the present cells")
                stats.append({"counts": counts, **stat})
            elif kind == "gaussian":
                mean = array(f"col{j}_mean", (n_classes,))
                var = array(f"col{j}_var", (n_classes,))
                if (var < 0).any():
                    raise _bad(f"{where}: a variance is negative")
                stats.append({"mean": mean, "var": var})
            else:
                values = array(f"col{j}_values")
                offsets = array(f"col{j}_offsets", (n_classes + 1,), integer=True)
                sizes = np.diff(offsets)
                sizes_wanted = np.where(present[:, j] > 0, present[:, j], present[:, j].sum())
                if offsets[0] != 0 or offsets[-1] != len(values) or (sizes != sizes_wanted).any() or (sizes == 0).any():
                    raise _bad(f"{where}: its value offsets do not match the present cells")
                stats.append({"values": values, "offsets": offsets})
        return cls(
            classes, class_count, names, kinds, settings, present, stats, categories, max_variance, expected, resolution
        )

    # -- description -------------------------------------------------------

    def summary(self) -> dict:
        """JSON-ready description for `nbcli info`: the prior, each column's
        kind, and per class and column the fitted distribution:
        categorical the top categories' probabilities and an unseen one's;
        gaussian mean and std (with epsilon); kde the values' number n and
        bandwidth h; discretize the bin edges and each bin's probability.
        'pooled': true marks a class that had no present value."""
        prior = np.exp(self.log_prior)
        out: dict[str, Any] = {
            "kind": self.kind,
            "prior": {c: float(p) for c, p in zip(self.classes, prior)},
            "columns": dict(zip(self.names, self.kinds)),
            "classes": {c: {} for c in self.classes},
        }
        for j, (name, kind) in enumerate(zip(self.names, self.kinds)):
            table = self.tables[j]
            for c, cls_name in enumerate(self.classes):
                if kind == "categorical":
                    probs = np.exp(table[:-2, c])
                    top = np.argsort(-probs, kind="stable")[:TOP_CATEGORIES]
                    entry = {
                        "categories": {self.categories[j][i]: float(probs[i]) for i in top},
                        "unseen": float(np.exp(table[-2, c])),
                    }
                elif kind == "discretize":
                    entry = {
                        "edges": [float(e) for e in self.stats[j]["edges"]],
                        "probabilities": [float(p) for p in np.exp(table[:-2, c])],
                    }
                elif kind == "gaussian":
                    mean, var = table
                    entry = {"mean": float(mean[c]), "std": float(np.sqrt(var[c]))}
                else:
                    entry = {"n": int(table[c][2]), "bandwidth": float(table[c][3])}
                if kind in ("gaussian", "kde") and self.present[c, j] == 0:
                    entry["pooled"] = True
                out["classes"][cls_name][name] = entry
        return out
