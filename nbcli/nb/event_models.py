"""The Naive Bayes math: counts to smoothed log tables, and scoring.

No I/O here. Notation (see docs/guide/math.md): N_c documents of class
c out of N; N_cj occurrences of term j in class c; N_c. = sum_j N_cj; |V|
terms; alpha > 0 a pseudo-count.

Multinomial event model:

    theta_cj = (N_cj + alpha) / (N_c. + alpha |V|)

This is the posterior mean of theta_c under a symmetric Dirichlet(alpha)
prior, which is the same as the MAP estimate under Dirichlet(alpha + 1);
alpha = 1 is Laplace smoothing.

Scoring is linear in the counts x of a document:

    jll_c(x) = log pi_c + sum_j x_j log theta_cj
    log P(c | x) = jll_c(x) - logsumexp_c'(jll_c'(x))

Every event model derives the same tables from its counts, so one scorer
serves them all: `log_prior` (C,), `weights` (V, C), `bias` (C,) and
`unknown_weight` (C,), with

    jll = transform(X) @ weights + bias + log_prior (+ unknown * unknown_weight)

where transform(X) is the identity (multinomial), presence (bernoulli) or
Rennie et al.'s tf-log / idf / length normalisation (complement).
`explain.py` relies on this contract.

Smoothing, priors and their checks are `smoothing`'s (shared with the
table models and EM), log_softmax is `logmath`'s.

This module imports nothing of `text`: a transform gives back its input's
own kind of CSR matrix (`vectorize.SparseCounts` or scipy's) with new
values (`_with_values`), so the event models sit below the analyzer and
every module of the package may build on them.
"""

from __future__ import annotations

import copy

import numpy as np

from nbcli.errors import NbcliError, ParameterError
from nbcli.nb.logmath import log_softmax
from nbcli.nb.smoothing import (
    ExactTotals,
    check_alpha,
    check_estimate,
    check_m_estimate,
    check_prior_alpha,
    dirichlet_log_estimate,
    log_estimate_columns,
    log_prior,
    pseudo_count,
)

UNKNOWN_TERMS = ("skip", "smooth")
# a ParameterError's hint template (see errors.ParameterError)
DOC_FREQ_HINT = (
    "train from the corpus (a model keeps document frequencies when trained with {kind:bernoulli}, {idf}, {select}, "
    "{min_df} or {max_df})"
)
EVENT_MODELS = ("multinomial", "bernoulli", "complement")


def check_unknown_terms(unknown: str | None, kind: str) -> None:
    """Counting a never-seen term as evidence ('smooth') is defined for the
    multinomial model only."""
    if unknown == "smooth" and kind != "multinomial":
        raise ParameterError(
            "unknown",
            "{unknown:smooth} is for the multinomial model, not {model}",
            hint="drop it, or use {unknown:skip}",
            model=kind,
        )


def sparse_dot(X, weights: np.ndarray) -> np.ndarray:
    """X @ weights for a CSR-like X (indptr, indices, data; data None = ones).

    X: (n_docs, n_terms) with attributes indptr, indices, data (scipy CSR
    or `vectorize.SparseCounts`); weights: (n_terms, n_classes).
    Returns (n_docs, n_classes).
    """
    n_docs = len(X.indptr) - 1
    rows = np.repeat(np.arange(n_docs), np.diff(X.indptr))
    w = np.take(weights, X.indices, axis=0)  # several times faster than weights[X.indices] for rows
    if X.data is not None:
        w = w * np.asarray(X.data, dtype=np.float64)[:, None]
    out = np.empty((n_docs, weights.shape[1]))
    for c in range(weights.shape[1]):
        out[:, c] = np.bincount(rows, weights=w[:, c], minlength=n_docs)
    return out


def _with_values(X, data: np.ndarray):
    """The canonical CSR-like X (as `canonical` gives it) with `data` as its
    values: a shallow copy of X's own type (`vectorize.SparseCounts` or a
    scipy CSR matrix) sharing X's indptr and indices."""
    out = copy.copy(X)
    out.data = data
    return out


def canonical(X):
    """X with one entry per (document, term), summed (scipy CSR or SparseCounts)."""
    if hasattr(X, "canonical"):
        return X.canonical() if X.data is None else X
    X = X.tocsr(copy=True)
    X.sum_duplicates()
    return X


class EventModel:
    """A Naive Bayes event model over stored counts.

    classes: the class names; class_count: (C,) documents per class.
    feature_count: (C, V) occurrences of each term in each class.
    doc_freq: (C, V) documents of each class containing each term, or None.
    alpha: the pseudo-count added to every cell (the prior Dirichlet's
        parameter); with estimate 'mean' the posterior mean, with 'map'
        the posterior mode (alpha - 1 added; needs alpha > 1 wherever a
        count is zero).
    m_estimate: (M, P or None): prior pseudo-counts M P per category, P
        uniform (1/K) by default; replaces alpha.
    prior: 'fit', 'uniform' or {class: weight}; prior_alpha: pseudo-count
        added to the class counts of a fitted prior.
    alpha_per_document: when given, alpha is this divided by the number of
        documents (at least 1), derived again whenever the counts change.
    unknown: what a term outside the vocabulary contributes when scoring
        ('skip', or 'smooth': the estimate of a term never seen; multinomial
        only).
    tables: (log_prior, weights, bias, unknown_weight) already derived,
        e.g. from a model file.
    """

    kind = "?"

    def __init__(
        self,
        classes,
        class_count,
        feature_count,
        alpha=1.0,
        prior="fit",
        doc_freq=None,
        unknown="skip",
        tables=None,
        estimate="mean",
        m_estimate=None,
        prior_alpha=None,
        alpha_per_document=None,
    ):
        self.classes = list(classes)
        self.class_count = np.asarray(class_count, dtype=np.float64)
        self.feature_count = feature_count
        self.doc_freq = doc_freq
        self.alpha_per_document = None if alpha_per_document is None else check_alpha(alpha_per_document)
        if self.alpha_per_document is not None:
            # the pseudo-count shrinks as documents are learned (the mail model's rule)
            alpha = self.alpha_per_document / max(float(self.class_count.sum()), 1.0)
        self.alpha = check_alpha(alpha)
        self.prior = prior
        self.prior_alpha = check_prior_alpha(prior_alpha)
        self.estimate = check_estimate(estimate)
        self.m_estimate = (
            None
            if m_estimate is None
            else (float(m_estimate[0]), None if m_estimate[1] is None else float(m_estimate[1]))
        )
        if unknown not in UNKNOWN_TERMS:
            raise NbcliError(f"unknown-term rule {unknown!r} is not one of {', '.join(UNKNOWN_TERMS)}")
        check_unknown_terms(unknown, self.kind)
        self.unknown = unknown
        if tables is None:
            tables = self.derive()
        self.log_prior, self.weights, self.bias, self.unknown_weight = tables

    def beta(self, n_categories: int):
        """The Dirichlet prior's parameters for a distribution over K
        categories: alpha in every cell, or M P (P = 1/K by default)."""
        if self.m_estimate is None:
            return self.alpha
        check_m_estimate(self.m_estimate, self.kind)
        return self.m_estimate[0] / max(n_categories, 1)

    def _log_prior(self) -> np.ndarray:
        return log_prior(self.class_count, self.classes, self.prior, self.prior_alpha)

    def derive(self):
        raise NotImplementedError

    def transform(self, X):
        """The feature values multiplied with `weights` (CSR-like)."""
        return X

    def class_sums(self, X, y: np.ndarray) -> np.ndarray:
        """Per-class sums (C, V) of transform(x) over the rows x of X
        (CSR-like, V columns), y[i] the class index of row i: with
        complement's document transforms, the fit_count its tables are
        derived from. Training adds these up batch by batch, cross-validation
        takes a fold's in one piece; both call this, so they agree."""
        X = self.transform(X)
        n_classes, n_terms = len(self.classes), X.shape[1]
        rows = np.repeat(np.arange(len(X.indptr) - 1), np.diff(X.indptr))
        sums = np.bincount(y[rows] * n_terms + X.indices, weights=X.data, minlength=n_classes * n_terms)
        return sums.reshape(n_classes, n_terms)

    def joint_log_likelihood(self, X) -> np.ndarray:
        """transform(X) @ weights + bias + log_prior (+ unknown tokens *
        unknown_weight for 'smooth'), shape (D, C); X may carry `unknown`,
        each document's number of tokens outside the vocabulary."""
        jll = sparse_dot(self.transform(X), self.weights) + (self.bias + self.log_prior)
        unknown = getattr(X, "unknown", None)
        if unknown is not None and self.unknown == "smooth":
            jll += np.asarray(unknown, dtype=np.float64)[:, None] * self.unknown_weight
        return jll

    def predict_log_proba(self, X) -> np.ndarray:
        return log_softmax(self.joint_log_likelihood(X))

    def term_log_odds(self) -> np.ndarray:
        """log theta_cj - log theta_(not c)j, shape (C, V): how strongly each
        term points to class c against all other classes pooled (each side
        smoothed with the model's alpha), from term counts."""
        counts = np.asarray(self.feature_count, dtype=np.float64) + 0.0
        total = counts.sum(axis=0)
        n_terms = counts.shape[1]
        out = np.empty_like(counts)
        for c in range(len(self.classes)):
            mine, rest = counts[c], total - counts[c]
            out[c] = np.log(mine + self.alpha) - np.log(mine.sum() + self.alpha * n_terms)
            out[c] -= np.log(rest + self.alpha) - np.log(rest.sum() + self.alpha * n_terms)
        return out

    def settings(self) -> dict:
        """The keyword arguments that rebuild this model from its counts."""
        return {
            "alpha": self.alpha,
            "prior": self.prior,
            "doc_freq": self.doc_freq,
            "unknown": self.unknown,
            "estimate": self.estimate,
            "m_estimate": self.m_estimate,
            "prior_alpha": self.prior_alpha,
            "alpha_per_document": self.alpha_per_document,
        }

    def rebuilt(self, **changes) -> EventModel:
        """The same model with some settings changed, tables derived again."""
        return type(self)(self.classes, self.class_count, self.feature_count, **{**self.settings(), **changes})

    def spec(self) -> dict:
        """The model's settings as plain values (for the model file)."""
        spec = {"kind": self.kind, **self.settings()}
        del spec["doc_freq"]
        spec["m_estimate"] = None if self.m_estimate is None else list(self.m_estimate)
        if spec["alpha_per_document"] is None:
            del spec["alpha_per_document"]  # files of models without it stay as they were
        return spec


class MultinomialNB(EventModel):
    """theta_cj = (N_cj + a) / (N_c. + a |V|) (posterior mean; see
    `dirichlet_log_estimate` for MAP and the m-estimate); jll_c = log pi_c
    + sum_j x_j log theta_cj."""

    kind = "multinomial"

    def derive(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(log_prior (C,), weights (V, C), bias (C,), unknown_weight (C,))
        from the counts."""
        totals = ExactTotals.of(self.feature_count)
        n_terms = np.shape(self.feature_count)[1]
        weights = self.column_weights(self.feature_count, totals, n_terms)
        return self._log_prior(), weights, np.zeros(len(self.classes)), self.unknown_of(totals.floats(), n_terms)

    def column_weights(self, counts: np.ndarray, totals: ExactTotals, n_terms: int) -> np.ndarray:
        """The weights (k, C) of k terms whose counts are `counts` (C, k), in
        a model of n_terms terms whose term totals are `totals`: derive's
        table, column for column (`nb.overlay` scores a few terms so)."""
        counts = np.asarray(counts, dtype=np.float64)
        log_theta = log_estimate_columns(counts, totals.floats(), n_terms, self.beta(n_terms), self.estimate)
        return np.ascontiguousarray(log_theta.T)

    def unknown_of(self, totals: np.ndarray, n_terms: int) -> np.ndarray:
        """What a term outside the vocabulary adds to each class's score:
        with unknown 'smooth', the estimate of a term seen 0 times in a
        vocabulary of n_terms terms (the classes' term totals `totals`);
        else nothing."""
        if self.unknown != "smooth":
            return np.zeros(len(self.classes))
        pseudo = pseudo_count(self.beta(n_terms), self.estimate)
        return np.log(pseudo) - np.log(np.asarray(totals, dtype=np.float64) + pseudo * n_terms)

    @property
    def log_theta(self) -> np.ndarray:
        """log theta_cj, shape (C, V)."""
        return self.weights.T


class BernoulliNB(EventModel):
    """theta_cj = (D_cj + a) / (N_c + 2a): the probability that a document
    of class c contains term j (D_cj documents of class c contain it).
    Absent terms count too, in linear form:
    jll_c = log pi_c + sum_j log(1 - theta_cj) + sum_{j in doc} (log theta_cj - log(1 - theta_cj))."""

    kind = "bernoulli"

    def derive(self):
        if self.doc_freq is None:
            raise ParameterError(
                "kind", "the Bernoulli model needs document frequencies, and these counts have none", hint=DOC_FREQ_HINT
            )
        df = np.asarray(self.doc_freq, dtype=np.float64)
        absent = self.class_count[:, None] - df
        m, p = self.m_estimate if self.m_estimate is not None else (None, None)
        beta = (
            self.alpha
            if m is None
            else np.array([m * (p if p is not None else 0.5), m * (1 - p if p is not None else 0.5)])
        )
        logs = dirichlet_log_estimate(np.stack([df, absent], axis=-1), beta, self.estimate)
        log_p, log_q = logs[..., 0], logs[..., 1]
        weights = np.ascontiguousarray((log_p - log_q).T)
        return self._log_prior(), weights, log_q.sum(axis=1), np.zeros(len(self.classes))

    def transform(self, X):
        """Presence: 1 for every term in the document (count > 0)."""
        X = canonical(X)
        return _with_values(X, np.ones(len(X.indices)))

    def term_log_odds(self) -> np.ndarray:
        """log theta_cj - log theta_(not c)j from document frequencies."""
        df = np.asarray(self.doc_freq, dtype=np.float64)
        total, n = df.sum(axis=0), self.class_count.sum()
        out = np.empty_like(df)
        for c in range(len(self.classes)):
            mine, rest = df[c], total - df[c]
            out[c] = np.log(mine + self.alpha) - np.log(self.class_count[c] + 2 * self.alpha)
            out[c] -= np.log(rest + self.alpha) - np.log(n - self.class_count[c] + 2 * self.alpha)
        return out


def smooth_idf(doc_freq_total: np.ndarray, n_docs: float) -> np.ndarray:
    """idf_j = ln((1 + N) / (1 + df_j)) + 1 (scikit-learn's smoothed idf)."""
    return np.log((1.0 + n_docs) / (1.0 + np.asarray(doc_freq_total, dtype=np.float64))) + 1.0


class ComplementNB(EventModel):
    """Complement Naive Bayes (Rennie et al. 2003).

    Each class is estimated from the counts of all other classes:
    theta~_cj = (sum_{c' != c} N_c'j + a) / (sum_{c' != c} N_c'. + a |V|);
    weights w_cj = -log theta~_cj, or with weight_norm
    log theta~_cj / sum_k log theta~_ck (scikit-learn's norm=True).
    Document transforms, in this order: tf_log (x -> log(1 + x)), idf
    (x_j -> x_j idf_j, idf_j = ln((1 + N) / (1 + df_j)) + 1) and
    length_norm (x -> x / ||x||_2). With transforms, fit_count holds the
    per-class sums of the transformed documents, which the tables are
    derived from; feature_count stays the raw counts. The default prior is
    uniform (as in the paper and scikit-learn).
    """

    kind = "complement"

    def __init__(self, *args, tf_log=False, idf=None, length_norm=False, weight_norm=False, fit_count=None, **kw):
        self.tf_log = bool(tf_log)
        self.idf = None if idf is None else np.asarray(idf, dtype=np.float64)
        self.length_norm = bool(length_norm)
        self.weight_norm = bool(weight_norm)
        self.fit_count = fit_count
        super().__init__(*args, **kw)

    @property
    def transforms(self) -> bool:
        return self.tf_log or self.idf is not None or self.length_norm

    def derive(self):
        raw = self.fit_count if self.fit_count is not None else self.feature_count
        n_terms = np.shape(raw)[1]
        logged = self._complement_logged(raw, ExactTotals.of(raw), n_terms)
        if self.weight_norm:
            # a one-term vocabulary has log theta~ = 0: no evidence, weight 0
            summed = logged.sum(axis=1, keepdims=True)
            weights = np.divide(logged, summed, out=np.zeros_like(logged), where=summed != 0)
        else:
            weights = -logged
        n_classes = len(self.classes)
        return self._log_prior(), np.ascontiguousarray(weights.T), np.zeros(n_classes), np.zeros(n_classes)

    def _complement_logged(self, counts: np.ndarray, totals: ExactTotals, n_terms: int) -> np.ndarray:
        """log theta~ (C, k) of k terms whose counts (or transformed sums) are
        `counts` (C, k), the classes' totals over all n_terms terms `totals`."""
        counts = np.asarray(counts, dtype=np.float64)
        complement = counts.sum(axis=0) - counts
        beta = self.beta(n_terms)
        return log_estimate_columns(complement, totals.complement().floats(), n_terms, beta, self.estimate)

    def column_weights(self, counts: np.ndarray, totals: ExactTotals, n_terms: int) -> np.ndarray:
        """derive's weights (k, C) of k terms (see `MultinomialNB.column_weights`);
        not with weight_norm, whose weights need every term."""
        if self.weight_norm:
            raise ValueError("weight_norm's weights are derived over the whole vocabulary")
        return np.ascontiguousarray(-self._complement_logged(counts, totals, n_terms).T)

    def transform(self, X):
        if not self.transforms:
            return X
        X = canonical(X)
        data = np.asarray(X.data, dtype=np.float64)
        if self.tf_log:
            data = np.log1p(data)
        if self.idf is not None:
            data = data * self.idf[X.indices]
        if self.length_norm:
            rows = np.repeat(np.arange(len(X.indptr) - 1), np.diff(X.indptr))
            norms = np.sqrt(np.bincount(rows, weights=data * data, minlength=len(X.indptr) - 1))
            norms[norms == 0] = 1.0
            data = data / norms[rows]
        return _with_values(X, data)

    def settings(self) -> dict:
        extra = {
            "tf_log": self.tf_log,
            "idf": self.idf,
            "length_norm": self.length_norm,
            "weight_norm": self.weight_norm,
            "fit_count": self.fit_count,
        }
        return {**super().settings(), **extra}

    def spec(self) -> dict:
        spec = super().spec()
        del spec["fit_count"]
        spec["idf"] = self.idf is not None
        return spec


# The event-model registry. Only `build_event_model` below looks a kind up in
# it (tests/nb/test_builder.py checks): every path to a fitted model (training,
# learning, the online protocol, EM, the model loader) goes through it.
MODELS = {cls.kind: cls for cls in (MultinomialNB, BernoulliNB, ComplementNB)}
assert tuple(MODELS) == EVENT_MODELS


def build_event_model(
    kind: str,
    classes,
    class_count,
    feature_count,
    *,
    doc_freq=None,
    idf=None,
    fit_count=None,
    **settings,
) -> EventModel:
    """The one way from counts to a fitted event model: training
    (`training._build`), learning (`learning.classifier_of`), the online
    protocol (`online._Rebuilt`), EM (`semi._counts_model`) and the model
    loader (`modelfile.from_payload`) all call it.

    kind: one of EVENT_MODELS; classes, class_count (C,), feature_count
    (C, V) and doc_freq (C, V or None) as `EventModel` takes them;
    settings: the other EventModel keyword arguments (alpha, prior, ...,
    tables; complement's tf_log, length_norm, weight_norm).
    Complement's idf and fit_count follow one rule, here: idf True derives
    the smoothed idf from doc_freq and the number of documents, and, unless
    the caller has the per-class sums of the transformed documents
    (fit_count: with tf_log or length_norm the counting pass adds them up),
    fit_count = feature_count * idf (idf scales each column, so those sums
    need no second pass); idf an array (a model file's) and fit_count are
    taken as they are; idf None or False: no idf."""
    cls = MODELS[kind]
    if kind == "complement":
        if idf is True:
            idf = smooth_idf(np.asarray(doc_freq).sum(axis=0), np.asarray(class_count).sum())
            if fit_count is None:
                fit_count = feature_count * idf
        elif idf is False:
            idf = None
        settings.update(idf=idf, fit_count=fit_count)
    elif (idf is not None and idf is not False) or fit_count is not None:
        raise NbcliError(f"idf and fit_count are for the complement model, not {kind}")
    return cls(classes, class_count, feature_count, doc_freq=doc_freq, **settings)
