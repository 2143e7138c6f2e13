"""EM for Naive Bayes mixtures: semi-supervised training, and the mixture
and E and M steps that clustering (`clusters`) fits.

No I/O here. Semi-supervised EM follows Nigam, McCallum, Thrun & Mitchell
(2000), "Text classification from labeled and unlabeled documents using
EM"; clustering is the same model with no labelled documents (an
AutoClass-like Naive Bayes mixture), started and restarted as clusters.py
says.

Model. M mixture components; component m belongs to class components[m]
(each class has K >= 1 components, laid out class by class: m = c K + k;
clustering: one component per cluster). A document x is drawn by picking a
component with probability pi_m, then its terms:

    multinomial: P(x | m) = prod_j theta_mj^x_j        (x = term counts)
    bernoulli:   P(x | m) = prod_j p_mj^b_j (1 - p_mj)^(1 - b_j)
                                                      (b = presence, absent terms count too)

(the multinomial coefficient of a document is a constant and is dropped).
P(class c | x) = sum over c's components of P(m | x).

Objective (maximised; Dempster et al. 1977, Nigam et al. section 4.3):

    J = log P(params)
        + sum_{labelled d}   log sum_{m of class y_d} pi_m P(x_d | m)
        + lambda sum_{unlabelled d} log sum_m pi_m P(x_d | m)

    log P(params) = alpha sum_mj log theta_mj                     (multinomial)
                  = alpha sum_mj (log p_mj + log(1 - p_mj))       (bernoulli)
                    + prior_alpha sum_m log pi_m

i.e. Dirichlet(alpha + 1) priors on each theta_m, Beta(alpha + 1,
alpha + 1) on each p_mj and Dirichlet(prior_alpha + 1) on pi, constants
dropped. The M step is the MAP estimate from expected counts:

    theta_mj = (N_mj + alpha) / (N_m + alpha V)
    p_mj     = (D_mj + alpha) / (D_m + 2 alpha)
    pi_m     = (W_m + prior_alpha) / (W + prior_alpha M)

with N_mj = sum_d w_d r_dm x_dj (token counts), D_mj = sum_d w_d r_dm b_dj
(document frequencies), W_m = D_m = sum_d w_d r_dm; w_d = 1 for a labelled
document and lambda for an unlabelled one; r_dm the E step's
responsibilities P(m | x_d), restricted to the components of y_d for a
labelled document (K = 1: responsibility 1 for its class). Each EM
iteration is an E step then an M step, so J never decreases.

Few labels, long documents (`em(..., e_tokens=L0)`; `nbcli train` gives
L0 = 4). Two changes keep EM from running into one class when a handful
of labelled documents meet thousands of long unlabelled ones:

- the start (`labelled_start`) ties the terms no labelled document has
  across the components, so they carry no evidence in the first E step, as
  in the labelled-only model;
- the E step is tempered per document (deterministic-annealing EM, Ueda
  & Nakano 1998, with a temperature per document): with a_dm = log pi_m +
  log P(x_d | m) and beta_d = min(1, L0 / L_d) (L_d its tokens, or distinct
  terms for bernoulli), r_dm = softmax_m(beta_d a_dm), and J's document
  terms are (w_d / beta_d) log sum_m exp(beta_d a_dm). Naive Bayes counts
  every token of a message as independent evidence, so the posterior of
  a 200-token message is 0 or 1 and EM is hard EM; beta_d weighs a long
  document's evidence as L0 tokens'. J_beta = max_r F(r, params) with F =
  log P(params) + sum_d w_d (sum_m r_dm a_dm + H(r_d) / beta_d), and the M
  step maximises F over the parameters, so J_beta never decreases either;
  with L0 = 0 (or short documents) it is J. The M step and the model are
  unchanged: the tempering only softens the responsibilities.

  Measured (benchmarks/em.py's SpamAssassin split, 5 labelled per class,
  its 5 draws, `--model multinomial`, test ham called spam at P >= 0.98;
  no EM: 8.75% +- 1.66% SE): plain EM 41.9% +- 23.3% (2 draws near 100%);
  the tied start alone 13.7% +- 4.4%; the start and L0 = 4 (alpha 1) 7.6%
  +- 0.5%, with the mail alpha 0.0001 (`semi.train_em`) 6.4% +- 0.1%
  (accuracy 93.6%; no EM 83.5%). The topic corpus at 5 per class: 80.9%
  accuracy with plain EM, 91.0% with both (48.3% without EM). L0 from 3
  to 6 kept both (mail alpha: SpamAssassin 6.9% to 7.9%, and 7.8% to
  11.2% on 5 other draws where no EM gives 18.3%; topics 83.8% to 91.9%);
  L0 = 2 lost topics (67%, at tol 1e-4) and the other draws (21%); L0 = 8
  and 12 gave 8.4% and 10.1% (14.2% and 16.1% on the others). Tempered, J's relative
  change is small early: with `--em-tol` 1e-4 EM stopped after 2-9
  iterations (L0 = 4, alpha 1: 11.2%), so the default tolerance is 1e-6.
  With alpha 1 a smaller lambda (0.3, 0.1) made SpamAssassin worse (the
  smoothing then outweighs the expected counts; with the mail alpha 0.1
  and 0.3 are as good as 1, see docs/benchmarks.md); fixing pi to the labelled prior or
  keeping only confident documents in the M step changed little.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.sparse

from nbcli.errors import NbcliError
from nbcli.nb.logmath import log_softmax
from nbcli.nb.smoothing import check_alpha

EVENT_MODELS = ("multinomial", "bernoulli")
UNIT_BITS = 32
UNIT = 2.0**-UNIT_BITS  # the M step's sums count in units of 2^-32 of a document
_ONE = 1 << UNIT_BITS
_MAX_CELL = 2**31 - 1  # tokens of one term: beyond this an int64 sum of units could overflow


def _logsumexp(a: np.ndarray) -> np.ndarray:
    """logsumexp over axis 1; rows of -inf give -inf."""
    top = a.max(axis=1)
    safe = np.where(np.isfinite(top), top, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.exp(a - safe[:, None]).sum(axis=1))


def _check_event_model(event_model: str) -> None:
    if event_model not in EVENT_MODELS:
        raise NbcliError(f"EM is defined for the {' and '.join(EVENT_MODELS)} models, not {event_model!r}")


def prepare(X, event_model: str) -> scipy.sparse.csr_matrix:
    """X (scipy CSR or `SparseCounts`, data None = one per entry, duplicates
    allowed; or a dense array) as a canonical int64 scipy CSR: whole counts (multinomial) or
    presence, 1 per term in a document (bernoulli). Idempotent and cheap on
    its own output."""
    _check_event_model(event_model)
    if isinstance(X, scipy.sparse.csr_matrix) and X.dtype == np.int64 and X.has_canonical_format:
        C = X
    else:
        if scipy.sparse.issparse(X) or not hasattr(X, "indptr"):  # dense arrays too
            C = scipy.sparse.csr_matrix(X if scipy.sparse.issparse(X) else np.asarray(X), copy=True)
        else:
            data = np.ones(len(X.indices)) if X.data is None else np.asarray(X.data)
            C = scipy.sparse.csr_matrix((data, X.indices, X.indptr), shape=tuple(X.shape), copy=True)
        C.sum_duplicates()
        data = np.asarray(C.data, dtype=np.float64)
        if len(data) and not (np.all(data >= 0) and np.all(data == np.rint(data))):
            raise NbcliError("EM needs whole term counts", hint="give the documents' token counts, not weights")
        C = scipy.sparse.csr_matrix((data.astype(np.int64), C.indices, C.indptr), shape=C.shape)
        C.has_canonical_format = True
    if event_model == "bernoulli":
        C = scipy.sparse.csr_matrix((np.ones(len(C.data), np.int64), C.indices, C.indptr), shape=C.shape)
        C.has_canonical_format = True
    return C


def _check_magnitude(X: scipy.sparse.csr_matrix) -> None:
    if X.nnz and np.bincount(X.indices, weights=X.data, minlength=X.shape[1]).max() > _MAX_CELL:
        raise NbcliError("a term occurs more than 2^31 times: too many for EM's exact sums", hint="use fewer documents")


@dataclass
class Mixture:
    """A Naive Bayes mixture: its expected counts, from which the tables derive.

    components: (M,) int, the class of each component; log_weight: (M,)
    log pi_m; word_count: (M, V) expected N_mj (multinomial) or D_mj
    (bernoulli), the labelled and lambda times the unlabelled documents'
    parts together; doc_count: (M,) expected documents W_m, likewise.
    tables: when given, the log tables themselves (as `log_tables` returns
    them) in place of the smoothed counts: `labelled_start`'s tied start.
    e_tokens: the E step's evidence cap L0 (see `posterior`; 0: none).
    """

    event_model: str
    n_classes: int
    components: np.ndarray
    log_weight: np.ndarray
    word_count: np.ndarray
    doc_count: np.ndarray
    alpha: float
    prior_alpha: float
    tables: tuple[np.ndarray, np.ndarray | None] | None = None
    e_tokens: float = 0.0

    def log_tables(self) -> tuple[np.ndarray, np.ndarray | None]:
        """(log theta, None) (multinomial) or (log p, log(1 - p)) (bernoulli), each (M, V)."""
        if self.tables is not None:
            return self.tables
        counts = np.asarray(self.word_count, dtype=np.float64)
        a = self.alpha
        if self.event_model == "multinomial":
            total = counts.sum(axis=1, keepdims=True) + a * counts.shape[1]
            return np.log(counts + a) - np.log(total), None
        docs = np.asarray(self.doc_count, dtype=np.float64)[:, None]
        denominator = np.log(docs + 2 * a)
        return np.log(counts + a) - denominator, np.log(np.maximum(docs - counts, 0.0) + a) - denominator

    def log_theta(self) -> np.ndarray:
        """(M, V): log theta_mj (multinomial) or log p_mj (bernoulli)."""
        return self.log_tables()[0]

    def component_log_likelihood(self, X) -> np.ndarray:
        """(n, M): log pi_m + log P(x | m), multinomial coefficient dropped;
        bernoulli: sum_j log(1 - p_mj) + sum_{j present} log(p_mj / (1 - p_mj))."""
        X = prepare(X, self.event_model)
        log_p, log_q = self.log_tables()
        if log_q is None:
            return X @ log_p.T + self.log_weight
        return X @ (log_p - log_q).T + (log_q.sum(axis=1) + self.log_weight)

    def class_log_proba(self, X) -> np.ndarray:
        """(n, C): log P(class | x), its components' posteriors summed."""
        return _class_sums_log(log_softmax(self.component_log_likelihood(X)), self.components, self.n_classes)

    def log_prior(self) -> float:
        """log P(params) up to constants (see the module docstring)."""
        log_p, log_q = self.log_tables()
        total = self.alpha * float(log_p.sum())
        if log_q is not None:
            total += self.alpha * float(log_q.sum())
        if self.prior_alpha:
            total += self.prior_alpha * float(self.log_weight.sum())
        return total


def _class_sums_log(log_resp: np.ndarray, components: np.ndarray, n_classes: int) -> np.ndarray:
    out = np.full((log_resp.shape[0], n_classes), -np.inf)
    for c in range(n_classes):
        cols = np.flatnonzero(components == c)
        if len(cols):
            out[:, c] = _logsumexp(log_resp[:, cols])
    return out


def evidence_scale(X, e_tokens: float, event_model: str) -> np.ndarray:
    """(n,) beta_d = min(1, e_tokens / L_d), L_d the document's tokens
    (multinomial) or distinct terms (bernoulli); 1 for every document when
    e_tokens is 0 (and for empty documents)."""
    X = prepare(X, event_model)
    if not e_tokens:
        return np.ones(X.shape[0])
    length = np.asarray(X.sum(axis=1), dtype=np.float64).ravel()
    return np.minimum(1.0, e_tokens / np.maximum(length, 1.0))


def posterior(mixture: Mixture, X, y: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """E step: (responsibilities (n, M), log-likelihoods (n,)).

    Unlabelled (y None): with a_dm = log pi_m + log P(x_d | m),
    r_dm = softmax_m(beta_d a_dm) and log-likelihood
    (1 / beta_d) log sum_m exp(beta_d a_dm); labelled (y (n,) class
    indices): the same over the components of class y_d only. beta_d =
    `evidence_scale` (mixture.e_tokens); with beta_d = 1 (e_tokens 0, or a
    document of at most e_tokens tokens) these are P(m | x_d) and
    log sum_m pi_m P(x_d | m). Row by row: the same for a row however X
    is split."""
    X = prepare(X, mixture.event_model)
    jll = mixture.component_log_likelihood(X)
    if y is not None:
        y = np.asarray(y, dtype=np.int64)
        jll = np.where(mixture.components[None, :] == y[:, None], jll, -np.inf)
    beta = evidence_scale(X, mixture.e_tokens, mixture.event_model)
    if mixture.e_tokens:
        jll = jll * beta[:, None]
    ll = _logsumexp(jll)
    with np.errstate(invalid="ignore"):
        resp = np.exp(jll - ll[:, None])
    return np.nan_to_num(resp, nan=0.0), ll / beta if mixture.e_tokens else ll


def e_step(mixture: Mixture, X, y: np.ndarray | None = None) -> np.ndarray:
    """Responsibilities (n, M); see `posterior`."""
    return posterior(mixture, X, y)[0]


def _units(resp: np.ndarray) -> np.ndarray:
    """Responsibilities as int64 units of 2^-32, each row summing to exactly 2^32."""
    units = np.rint(np.asarray(resp, dtype=np.float64) * _ONE).astype(np.int64)
    if units.shape[0] and units.shape[1]:
        top = units.argmax(axis=1)
        units[np.arange(len(units)), top] += _ONE - units.sum(axis=1)
    return units


def m_step_sums(X, resp: np.ndarray, event_model: str) -> tuple[np.ndarray, np.ndarray]:
    """(word (M, V), docs (M,)), int64 in units of 2^-32 (see `UNIT`):
    sum_d r_dm x_dj (x counts for multinomial, presence for bernoulli) and
    sum_d r_dm, with r rounded to units. Integer sums: adding the sums of
    row blocks, in any order, gives the one-block sums to the last bit."""
    X = prepare(X, event_model)
    units = _units(resp)
    word = np.ascontiguousarray((X.T @ units).T, dtype=np.int64)
    return word, units.sum(axis=0)


def block_stats(mixture: Mixture, X, event_model: str) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """One block of unlabelled rows' E step and M-step sums: ((word, docs)
    as `m_step_sums`, the rows' log-likelihoods). Blocks' sums add up
    exactly (int64) and their log-likelihoods concatenate in row order, so
    any split gives the one-block result to the last bit."""
    resp, ll = posterior(mixture, X)
    return m_step_sums(X, resp, event_model), ll


def mixture_from_sums(
    labelled: tuple[np.ndarray, np.ndarray],
    unlabelled: tuple[np.ndarray, np.ndarray] | None,
    weight: float,
    components: np.ndarray,
    n_classes: int,
    event_model: str,
    alpha: float,
    prior_alpha: float,
    e_tokens: float = 0.0,
) -> Mixture:
    """M step: the MAP mixture from the labelled and unlabelled `m_step_sums`
    (unlabelled weighted by lambda = weight); its E step capped at e_tokens."""
    word = labelled[0].astype(np.float64)
    docs = labelled[1].astype(np.float64)
    if unlabelled is not None and weight:
        word = word + weight * unlabelled[0].astype(np.float64)
        docs = docs + weight * unlabelled[1].astype(np.float64)
    word, docs = word * UNIT, docs * UNIT
    smoothed = docs + prior_alpha
    with np.errstate(divide="ignore"):
        log_weight = np.log(smoothed) - np.log(smoothed.sum())
    return Mixture(event_model, n_classes, components, log_weight, word, docs, alpha, prior_alpha, None, e_tokens)


def objective(mixture: Mixture, labelled_ll: np.ndarray, unlabelled_ll: np.ndarray, weight: float) -> float:
    """J from the per-document log-likelihoods of `posterior` (math.fsum:
    correctly rounded, so independent of the documents' order)."""
    data = math.fsum(np.asarray(labelled_ll, dtype=np.float64).tolist())
    if weight:
        data += weight * math.fsum(np.asarray(unlabelled_ll, dtype=np.float64).tolist())
    return mixture.log_prior() + data


@dataclass
class Fit:
    """An EM run's outcome. objective: J at the start, then after each
    iteration. labelled_count (C, V) int64 / labelled_docs (C,): the labelled
    documents' own counts (token counts, or document frequencies for
    bernoulli); expected_count (C, V) / expected_docs (C,): the unlabelled
    documents' expected counts times lambda, summed over each class's
    components."""

    mixture: Mixture
    objective: list[float]
    iterations: int
    converged: bool
    labelled_count: np.ndarray
    labelled_docs: np.ndarray
    expected_count: np.ndarray
    expected_docs: np.ndarray
    assignments: np.ndarray | None = None  # clustering: each document's cluster (clusters.py)
    pinned: int = 0  # clustering: documents re-seeded into emptied clusters and held there


def _by_class(values: np.ndarray, components: np.ndarray, n_classes: int) -> np.ndarray:
    out = np.zeros((n_classes, *values.shape[1:]), dtype=values.dtype)
    for c in range(n_classes):
        out[c] = values[components == c].sum(axis=0)
    return out


def _check_settings(event_model, alpha, prior_alpha, max_iter, tol) -> None:
    _check_event_model(event_model)
    check_alpha(alpha)
    if not (np.isfinite(prior_alpha) and prior_alpha >= 0):
        raise NbcliError(f"the prior pseudo-count must be a number >= 0, not {prior_alpha}")
    if int(max_iter) < 0 or not (np.isfinite(tol) and tol >= 0):
        raise NbcliError(f"EM needs max_iter >= 0 and tol >= 0, not {max_iter} and {tol}")


def em(
    XL,
    yL,
    XU,
    n_classes: int,
    event_model: str = "multinomial",
    alpha: float = 1.0,
    prior_alpha: float = 1.0,
    weight: float = 0.1,
    components: int = 1,
    max_iter: int = 20,
    tol: float = 1e-4,
    seed: int = 0,
    log: Callable[[int, float], None] | None = None,
    stats: Callable[[Mixture], tuple[tuple[np.ndarray, np.ndarray], np.ndarray]] | None = None,
    e_tokens: float = 0.0,
) -> Fit:
    """Semi-supervised EM from the labelled-only model.

    XL (nL, V) labelled counts with classes yL (nL,) in 0..n_classes-1; XU
    (nU, V) unlabelled (may have 0 rows); weight = lambda >= 0. With
    components K > 1 the labelled documents of each class are dealt at
    random (np.random.default_rng(seed)) to its K components for the start.
    Stops after max_iter iterations or when |J_t - J_{t-1}| / |J_{t-1}| < tol;
    log(iteration, J) after each iteration. With nothing for EM to learn
    (K = 1 and weight 0 or no unlabelled rows) it stops at once and returns
    exactly the labelled-only model; with K > 1 and weight 0 it fits the
    components to the labelled documents alone. stats(mixture): the
    unlabelled rows' `block_stats`, all of them (a caller computing them on
    several workers, block by block); by default computed here."""
    _check_settings(event_model, alpha, prior_alpha, max_iter, tol)
    if not (np.isfinite(weight) and weight >= 0):
        raise NbcliError(f"the unlabelled documents' weight must be a number >= 0, not {weight}")
    if not (np.isfinite(e_tokens) and e_tokens >= 0):
        raise NbcliError(f"the E step's evidence cap must be a number of tokens >= 0, not {e_tokens}")
    if int(components) < 1 or int(n_classes) < 1:
        raise NbcliError(f"EM needs at least one class and one component per class, not {n_classes} and {components}")
    n_classes, K = int(n_classes), int(components)
    XL, XU = prepare(XL, event_model), prepare(XU, event_model)
    if XL.shape[1] != XU.shape[1]:
        raise NbcliError(f"labelled and unlabelled documents have {XL.shape[1]} and {XU.shape[1]} terms")
    yL = np.asarray(yL, dtype=np.int64)
    if len(yL) != XL.shape[0] or (len(yL) and (yL.min() < 0 or yL.max() >= n_classes)):
        raise NbcliError("each labelled document needs a class index from 0 to n_classes - 1")
    _check_magnitude(XL)
    _check_magnitude(XU)
    comps = np.repeat(np.arange(n_classes), K)
    n_comp = len(comps)

    # the start: each labelled document in one component of its class
    start = yL * K
    if K > 1:
        rng = np.random.default_rng(seed)
        for c in range(n_classes):
            mine = np.flatnonzero(yL == c)
            start[rng.permutation(mine)] = c * K + np.arange(len(mine)) % K
    resp_l = np.zeros((len(yL), n_comp))
    resp_l[np.arange(len(yL)), start] = 1.0
    labelled = m_step_sums(XL, resp_l, event_model)
    empty = (np.zeros((n_comp, XU.shape[1]), np.int64), np.zeros(n_comp, np.int64))
    unlabelled = empty
    settings = (comps, n_classes, event_model, float(alpha), float(prior_alpha), float(e_tokens))
    mixture = mixture_from_sums(labelled, None, weight, *settings)

    use_unlabelled = bool(weight) and XU.shape[0] > 0
    fixed = K == 1 and not use_unlabelled
    if not fixed:
        mixture = labelled_start(mixture, labelled[0])

    def e(mixture):
        """E step, and the unlabelled rows' M-step sums under its responsibilities."""
        resp_l, ll_l = posterior(mixture, XL, yL)
        sums_u, ll_u = empty, np.zeros(0)
        if use_unlabelled:
            sums_u, ll_u = stats(mixture) if stats is not None else block_stats(mixture, XU, event_model)
        return resp_l, sums_u, objective(mixture, ll_l, ll_u, weight)

    resp_l, sums_u, J = e(mixture)
    history = [J]
    converged, iteration = fixed, 0
    while not converged and iteration < max_iter:
        iteration += 1
        if K > 1:
            labelled = m_step_sums(XL, resp_l, event_model)
        if use_unlabelled:
            unlabelled = sums_u
        mixture = mixture_from_sums(labelled, unlabelled, weight, *settings)
        resp_l, sums_u, J = e(mixture)
        history.append(J)
        if log is not None:
            log(iteration, J)
        converged = abs(J - history[-2]) < tol * abs(history[-2]) or J == history[-2]

    one_hot = np.zeros((len(yL), n_classes), np.int64)
    one_hot[np.arange(len(yL)), yL] = 1
    labelled_count = np.ascontiguousarray((XL.T @ one_hot).T, dtype=np.int64)
    expected = (weight * unlabelled[0].astype(np.float64) * UNIT, weight * unlabelled[1].astype(np.float64) * UNIT)
    if not use_unlabelled:
        expected = (np.zeros((n_comp, XU.shape[1])), np.zeros(n_comp))
    return Fit(
        mixture,
        history,
        iteration,
        converged,
        labelled_count,
        np.bincount(yL, minlength=n_classes).astype(np.int64),
        _by_class(expected[0], comps, n_classes),
        _by_class(expected[1], comps, n_classes),
    )


def labelled_start(mixture: Mixture, labelled_word: np.ndarray) -> Mixture:
    """The start of semi-supervised EM: `mixture` (the labelled documents'
    MAP mixture) with the terms no labelled document has tied across the
    components, so that the start's posteriors are those of the
    labelled-only model of the labelled documents' terms, as `nbcli train`
    fits it on them:

        multinomial: theta_mj = (V_L / V) (N_mj + alpha) / (N_m + alpha V_L)  for the V_L seen terms j,
                     theta_mj = 1 / V                                         for the others;
        bernoulli:   p_mj = (D_mj + alpha) / (D_m + 2 alpha) for seen terms, alpha / (n_L + 2 alpha) for the others

    (n_L the labelled documents). Why: smoothed over all V terms, a term
    seen in no labelled document gets alpha / (N_m + alpha V), more in the
    component of fewer labelled tokens, so every unseen token of an
    unlabelled document votes for that component. On the SpamAssassin split
    (5 labelled messages per class, 107,793 terms, a few thousand seen)
    that start called 92% of the test ham spam on 2 draws of 5, and EM ran
    on into one class; tied, unseen terms carry no evidence, as they carry
    none in the labelled-only model. The tied start is a point of the
    parameter space, so J never decreases from it."""
    seen = np.asarray(labelled_word, dtype=np.float64).sum(axis=0) > 0
    n_seen, V = int(seen.sum()), len(seen)
    if n_seen in (0, V):
        return mixture
    counts = np.asarray(mixture.word_count, dtype=np.float64)
    docs = np.asarray(mixture.doc_count, dtype=np.float64)
    a = mixture.alpha
    if mixture.event_model == "multinomial":
        log_p = np.full(counts.shape, -math.log(V))
        own = counts[:, seen]
        log_p[:, seen] = np.log(own + a) - np.log(own.sum(axis=1, keepdims=True) + a * n_seen) + math.log(n_seen / V)
        tables = (log_p, None)
    else:
        shared = a / (docs.sum() + 2 * a)
        p = np.full(counts.shape, shared)
        p[:, seen] = (counts[:, seen] + a) / (docs[:, None] + 2 * a)
        tables = (np.log(p), np.log1p(-p))
    return Mixture(
        mixture.event_model,
        mixture.n_classes,
        mixture.components,
        mixture.log_weight,
        mixture.word_count,
        mixture.doc_count,
        a,
        mixture.prior_alpha,
        tables,
        mixture.e_tokens,
    )
