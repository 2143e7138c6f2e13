"""The Naive Bayes math: counts to smoothed log tables, and scoring.

No I/O here. Notation (see the README's "The math"): N_c documents of class
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

Every event model derives the same three tables from its counts, so one
scorer serves them all: `log_prior` (C,), `weights` (V, C) and `bias` (C,),
with jll = transform(X) @ weights + bias + log_prior (+ each document's
number of unknown tokens times `unknown_weight` (C,) when unknown ==
'smooth'). `explain.py` relies on this contract.
"""

from __future__ import annotations

import numpy as np

from nbcli.errors import NbcliError


UNKNOWN_TERMS = ("skip", "smooth")


def parse_prior(spec: str) -> str | dict[str, float]:
    """'fit', 'uniform' or 'CLASS=WEIGHT,...' (weights are normalised)."""
    spec = spec.strip()
    if spec in ("fit", "uniform"):
        return spec
    weights: dict[str, float] = {}
    for part in spec.split(","):
        name, eq, value = part.partition("=")
        name = name.strip()
        try:
            w = float(value)
        except ValueError:
            w = float("nan")
        if not eq or not name or not (w > 0 and np.isfinite(w)):
            raise NbcliError(
                f"--prior {spec!r} is not valid",
                hint="use 'fit', 'uniform' or CLASS=WEIGHT pairs such as 'spam=0.4,ham=0.6'",
            )
        if name in weights:
            raise NbcliError(f"--prior names class {name!r} twice")
        weights[name] = w
    return weights


def log_prior(class_count: np.ndarray, classes: list[str], prior) -> np.ndarray:
    """log pi_c for prior 'fit' (N_c / N), 'uniform' or {class: weight}."""
    n = len(classes)
    if prior == "fit":
        with np.errstate(divide="ignore"):
            return np.log(class_count) - np.log(class_count.sum())
    if prior == "uniform":
        return np.full(n, -np.log(n))
    missing = [c for c in classes if c not in prior]
    unknown = [c for c in prior if c not in classes]
    if missing or unknown:
        what = f"has no weight for {', '.join(missing)}" if missing else f"names unknown class {', '.join(unknown)}"
        raise NbcliError(
            f"--prior {what}",
            hint=f"give a weight for each of the classes: {', '.join(classes)}",
        )
    w = np.array([prior[c] for c in classes], dtype=np.float64)
    return np.log(w) - np.log(w.sum())


def check_alpha(alpha: float) -> float:
    if not (np.isfinite(alpha) and alpha > 0):
        raise NbcliError(
            f"--alpha must be a positive number, not {alpha}",
            hint="alpha = 0 would give unseen terms probability zero; use a small value such as 0.01",
        )
    return float(alpha)


def log_softmax(jll: np.ndarray) -> np.ndarray:
    """Rows of jll normalised in log space: jll - logsumexp(jll, axis=1)."""
    top = jll.max(axis=1, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    shifted = jll - top
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def sparse_dot(X, weights: np.ndarray) -> np.ndarray:
    """X @ weights for a CSR-like X (indptr, indices, data; data None = ones).

    X: (n_docs, n_terms) with attributes indptr, indices, data (scipy CSR
    or `vectorize.SparseCounts`); weights: (n_terms, n_classes).
    Returns (n_docs, n_classes).
    """
    n_docs = len(X.indptr) - 1
    rows = np.repeat(np.arange(n_docs), np.diff(X.indptr))
    w = weights[X.indices]
    if X.data is not None:
        w = w * np.asarray(X.data, dtype=np.float64)[:, None]
    out = np.empty((n_docs, weights.shape[1]))
    for c in range(weights.shape[1]):
        out[:, c] = np.bincount(rows, weights=w[:, c], minlength=n_docs)
    return out


class MultinomialNB:
    """Multinomial Naive Bayes over stored counts.

    class_count: (C,) documents per class.
    feature_count: (C, V) occurrences of each term in each class.
    alpha: the pseudo-count added to every cell (posterior mean under a
        symmetric Dirichlet(alpha) prior).
    prior: 'fit', 'uniform' or {class: weight}.
    doc_freq: (C, V) documents of each class containing each term, or None
        (kept with the counts; not used by this event model).
    unknown: what a term outside the vocabulary contributes when scoring:
        'skip' (nothing, as scikit-learn does) or 'smooth' (the smoothed
        probability of a term never seen in class c, alpha / (N_c + alpha
        |V|), as if the vocabulary were open).
    tables: (log_prior, weights, bias, unknown_weight) already derived,
        e.g. from a model file.
    """

    kind = "multinomial"

    def __init__(self, classes, class_count, feature_count, alpha=1.0, prior="fit", doc_freq=None, unknown="skip", tables=None):
        self.classes = list(classes)
        self.class_count = np.asarray(class_count, dtype=np.float64)
        self.feature_count = feature_count
        self.doc_freq = doc_freq
        self.alpha = check_alpha(alpha)
        self.prior = prior
        if unknown not in UNKNOWN_TERMS:
            raise NbcliError(f"unknown-term rule {unknown!r} is not one of {', '.join(UNKNOWN_TERMS)}")
        self.unknown = unknown
        if tables is None:
            tables = self.derive()
        self.log_prior, self.weights, self.bias, self.unknown_weight = tables

    def derive(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(log_prior (C,), weights (V, C), bias (C,), unknown_weight (C,))
        from the counts."""
        smoothed = np.asarray(self.feature_count, dtype=np.float64) + self.alpha
        log_total = np.log(smoothed.sum(axis=1))
        log_theta = np.log(smoothed) - log_total[:, None]
        lp = log_prior(self.class_count, self.classes, self.prior)
        unknown = np.log(self.alpha) - log_total if self.unknown == "smooth" else np.zeros(len(self.classes))
        return lp, np.ascontiguousarray(log_theta.T), np.zeros(len(self.classes)), unknown

    def transform(self, X):
        """The feature values this model scores: the counts themselves
        (another event model may binarise or reweight them, keeping the
        sparsity pattern)."""
        return X

    @property
    def log_theta(self) -> np.ndarray:
        """log theta_cj, shape (C, V)."""
        return self.weights.T

    def joint_log_likelihood(self, X) -> np.ndarray:
        """log P(c) + log P(x | c) up to a per-document constant, (D, C).
        X may carry `unknown`, each document's number of tokens outside the
        vocabulary."""
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
        smoothed with the model's alpha)."""
        counts = np.asarray(self.feature_count, dtype=np.float64) + 0.0
        total = counts.sum(axis=0)
        n_terms = counts.shape[1]
        out = np.empty_like(counts)
        for c in range(len(self.classes)):
            mine, rest = counts[c], total - counts[c]
            out[c] = np.log(mine + self.alpha) - np.log(mine.sum() + self.alpha * n_terms)
            out[c] -= np.log(rest + self.alpha) - np.log(rest.sum() + self.alpha * n_terms)
        return out
