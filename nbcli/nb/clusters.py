"""Clustering documents: a Naive Bayes mixture fitted by tempered EM from a
spherical k-means start. No I/O here.

The model is `em`'s mixture with one component per cluster and no labelled
documents (an AutoClass-like Naive Bayes mixture); what makes it find topics
in long documents is how it is fitted (issue 27):

1. **Start.** Each restart seeds k centres by k-means++ (Arthur &
   Vassilvitskii 2007) on the documents' TF-IDF vectors scaled to unit
   length (tf the term count, idf = ln((1 + n) / (1 + df)) + 1, scikit-
   learn's smoothed idf), then runs spherical k-means (Dhillon & Modha
   2001: assign each document to the centre of highest cosine, a centre is
   its documents' normalised sum) until no document moves, at most
   `KMEANS_ITERATIONS` times. Its clusters are EM's starting
   responsibilities, one cluster per document.
2. **Tempered EM, then plain EM.** EM runs first with `em.posterior`'s
   evidence cap of L0 tokens per document (beta_d = min(1, L0 / L_d); L0 =
   `evidence_cap`: 4, or 2% of the median document's tokens if more):
   responsibilities from per-token rather than per-document
   log-likelihoods, so that a 300-token post does not assign itself with
   certainty in the first E step and EM can still move it. Its objective
   J_beta (see em.py) never decreases from one iteration to the next. From
   where it converges, plain EM (beta = 1) runs to convergence, so the
   model written is a fixed point of EM on the documents' own likelihood,
   the one `predict` uses; its J never decreases either.
3. **Restarts scored by the objective.** Every restart runs to
   convergence; the highest J_beta of the tempered stage (the objective the
   fit is designed around; comparable across restarts, which share L0) wins
   (ties: the earlier restart), and its plain stage is the model.
4. **No empty cluster, ever.** A cluster is empty when it is no document's
   most responsible cluster (and one that some documents prefer with less
   than half a document of responsibility in all is held by pinning the
   one that prefers it most to it, as below: the model written counts at least one document in
   every cluster's prior; found by the property test, seed 383, k = 6). After EM converges, each empty cluster is
   re-seeded with the document worst explained by its own cluster (the
   lowest log-likelihood per token, among clusters of two or more
   documents), and EM runs on (its objective history starts again: the move
   is not an EM step) with that document pinned to its new cluster, as a
   labelled document is held in its class by semi-supervised EM. Pinned,
   not just moved: smoothed over thousands of terms, a cluster of one
   document explains even that document worse than a large cluster of its
   topic does, so a moved document went straight back and the cluster
   emptied again (k = 7 on three planted topics, every restart). A pinned
   cluster never empties, so at most k - 1 re-seeds are needed; a restart
   that would need more than `MAX_RESEEDS` is dropped, and if every restart
   is, `cluster` raises instead of returning a clustering that cannot
   classify.

Measured (benchmarks/cluster.py; nbcli's analyser with English stop words,
terms in 2 documents to half of them; adjusted Rand index against the
labels, min and mean over 5 seeds): on 500 posts of 5 far-apart 20
Newsgroups groups, random starts (the previous fit) reached 0.18; spherical
k-means alone 0.61-0.82; tempered EM from it with L0 = 4 and alpha 1 min
0.62, mean 0.72; L0 = 6 min 0.68 mean 0.79; L0 = 4 and alpha 0.5 min 0.65
mean 0.76, and the best also on Reuters R8 (min 0.59 against 0.53) and
the topic sample (0.75 against 0.67 for L0 = 6); so L0 = 4 (as `train
--unlabeled`) and alpha 0.5 are the defaults. Without the plain stage, the
tempered fit was the model, and on weakly separated data (60 terms, topics
sharing 60% of their words) it had collapsed (ARI 0.52, where the k-means
start had 0.95): at L0 = 4 tokens the evidence of such a document is too
weak to keep clusters apart. Plain EM from the collapsed fit recovers the
topics (0.97, every restart). Scoring restarts by the plain stage's J
instead of J_beta lost the State of the Union eras on 8-sentence documents
(seed 0: 0.29 against 0.36; k-means on TF-IDF 0.31) and changed the other
corpora by at most 0.03. L0 = 0 (no tempering) or 2 was
worse on most corpora (0.31-0.66 on news), and an annealed schedule (L0 = 1,
2, then 4; or 2 then 4) was no better than L0 = 4 alone (min 0.62, mean
0.65). The Bernoulli mixture with alpha 1 put every document in one cluster
(a cluster of few documents smooths every absent term to about 1 / its size,
and the thousands of absent terms outvote the present ones); alpha 0.01
keeps all clusters (ARI 0.44 news, 0.64 topics, 0.46 R8, 0.57 books), so it
is the Bernoulli default. Twenty restarts instead of ten changed the
minimum on R8 only (0.53 to 0.58, alpha 1).

L0 for long documents: with L0 = 4 an address of the State of the Union
(median 1,643 tokens on the kept terms) weighs as 0.2% of itself, every
responsibility is nearly uniform, and EM slid from the k-means start to
one fit for every restart (ARI 0.51 against the eras, k-means on TF-IDF
0.72). L0 = 2% of the median document (33 tokens) gave 0.71, 0.77, 0.67,
0.70, 0.90 on seeds 0-4 (1%: 0.63-0.79; 3%: 0.65-0.92), and the 140 book
excerpts (median 316) 0.64 and 0.68 where L0 = 4 gave 0.57; the news, R8
and topic corpora (median 13 to 79 tokens) keep L0 = 4 and their figures.

Where k-means on TF-IDF still wins (`make bench-cluster`): the 233 whole
State of the Union addresses by era, seeds 0 and 3 (0.71 and 0.70 against
scikit-learn's 0.72 and 0.87; nbcli's mean over 5 seeds 0.75, theirs
0.70). It is the search, not the model: EM started from scikit-learn's
partition ends at a higher J_beta (-4,230,513 and -4,230,572) than the best
of nbcli's 10 restarts (-4,231,133 and -4,230,966), with ARI 0.75 and
0.82; 40 restarts reach 0.81 and 0.77. Tried and not better there: greedy
k-means++ (2 + ln k candidates a seed), 100 k-means rounds instead of 20,
Euclidean k-means with unnormalised centres. Also tried (2026-11-26,
seeds 0-4, scratch scripts over `cluster` and `_fit_restart`): each restart
starting from the most cohesive of 3, 5 or 10 k-means runs (sum of the
clusters' centre norms) gave 0.64-0.81 / 0.62-0.80 / 0.69-0.80 with no
seed-wise gain; a consensus start (the restarts' partitions matched to
the best one and voted) fell to 0.61-0.73 and a lower J_beta; L0 shares
of 1% to 5% never passed 0.75 on seed 3 (scikit-learn's 0.87 there). Over
30 restarts of seed 3, J_beta and ARI correlate (0.71), but the restarts
within 0.01% of the best J_beta span ARI 0.65-0.77: the objective cannot
tell those partitions apart, so no selection among them is reliably better.

It is the model, not only the search (2026-11-26, later; scratch scripts
calling `cluster` and `_fit_restart` on the matrix `cluster_docs` builds,
ARI by seed 0-4, the default 0.71 0.77 0.67 0.70 0.90). EM from the era
labels themselves converges (ARI 0.95) at J_beta -4,234,069, 3,700 below
the best of 300 restarts (-4,230,340, ARI 0.78); the top 15 of those 300
by J_beta have ARI 0.60-0.81, and the 6 that reach 0.87 are not among
them (J_beta and ARI correlate 0.67). The best partitions are eras too,
contiguous in time, with the first boundary after the 1860s addresses
(clusters 1794-1868, 1876-1929, 1935-1978, 1983-) instead of at 1860; so
the best any search can do here is about 0.78, and more restarts would
lose seeds 3 and 4 (KMeans 0.87 and 0.86) instead of 0 and 3. Measured
and not better (seeds 0-4): alpha 1 0.71 0.77 0.79 0.71 0.82, alpha 2
0.65 0.47 0.57 0.65 0.65, alpha 0.1 0.65 0.66 0.67 0.70 0.93; bernoulli
0.40-0.65; 20 restarts 0.71 0.77 0.67 0.70 0.85; the medoid of the 10
restarts by mutual ARI (a stability choice) 0.58 0.48 0.84 0.60 0.59, of
the better half by J_beta 0.58 0.76 0.81 0.60 0.79; vocabulary by
document frequency: at most 25% of documents 0.77 0.61 0.65 0.60 0.72,
at least 5 documents 0.63 0.82 0.80 0.71 0.83, at least 5% 0.69 0.77
0.78 0.80 0.74, at least 10% 0.68 0.78 0.75 0.75 0.65, the 2,000 most
frequent terms 0.75 0.75 0.75 0.75 0.77 (5,000: 0.64-0.79); the M step
counting a document longer than the median (or the 25th percentile, or
the shortest) as that many tokens 0.47-0.93 (seed 3 0.70, 0.68, 0.68);
annealed caps L0 = 4, 8, 16 then 33 (or 1, 2, 4, 8, 16, 33) 0.62 on
every seed (0.60-0.75); L0 x 3, x 10, / 2: 0.65-0.82, 0.50-0.67,
0.63-0.79; 1, 2, 3 or 5 spherical k-means rounds instead of up to 20:
seed 3 0.65, 0.70, 0.71, 0.70; sub-linear counts (1 + floor(log2 x),
rounded sqrt x, min(x, 3)) 0.63-0.79; counts times idf, rounded,
0.47-0.91 (seed 3 0.79). None reaches 0.87 on seed 3: meeting KMeans on
every seed there needs a model whose likelihood prefers the 1860 cut,
not a better search. Nor does a burstiness model prefer it (2026-11-27,
scratch script on the same matrix and the same 10 spherical k-means
starts a seed, restarts chosen by the model's own objective): the EDCM
mixture (Elkan 2006, the exponential-family approximation of the
Dirichlet compound multinomial: a term counts once per document, and
the cluster's sum of parameters against the document's length) gave
0.65 0.59 0.66 0.65 0.50 untempered (each start barely moved), 0.78
0.69 0.85 0.70 0.41 with its E step tempered to 20 distinct terms a
document, and 0.78 0.54 0.79 0.71 0.69 at 60: seed 3 at 0.70-0.71 again.

Choosing k (`choose_k`): cross-validated likelihood (Smyth 2000): for each
k, fit on four fifths of the documents and score the held-out fifth by its
untempered log-likelihood, log sum_m pi_m P(x | m), summed over five folds;
the k with the highest total wins. The held-out documents are scored with
each fold's expected counts smoothed by alpha = 1 (Laplace), not the
clustering's 0.5: the held-out likelihood under alpha 0.5 kept rising to
k = 10 on four corpora of five (R8 [8 topics], five close computer groups
[5], topics [4], books [2 labels]) and picked 6 on news [5]; under alpha 1
it picked 8, 5, 6, 9 and 6 (alpha 2: 7, 3, 4, 5, 6; 3 restarts per fold
fit, seed 0, L0 = 4). With the final fit (`make bench-cluster`, seed 0):
news 6 [5], close groups 6 [5], SOTU eras 3 [4] and 4 [4] (8-sentence
documents, whole addresses), R8 10 [8], topics 7 [4], books 9 [2],
SpamAssassin 9 [ham, spam]. BIC (the previous criterion) picked k = 1 on text: its
penalty, k |V| ln n, outweighs any likelihood gain with thousands of
terms. The book excerpts are labelled children or adult, but their
likelihood wants more clusters than two: any criterion of fit will.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

import numpy as np
import scipy.sparse

from nbcli.errors import NbcliError
from nbcli.nb import em

DEFAULT_ALPHA = {"multinomial": 0.5, "bernoulli": 0.01}
E_TOKENS = 4.0  # the tempered E step's evidence cap: L0 tokens per document, at least ...
E_TOKENS_SHARE = 0.02  # ... and at least this share of the median document's tokens (`evidence_cap`)
HELDOUT_ALPHA = 1.0  # choose_k scores held-out documents under Laplace smoothing of each fold's counts
KMEANS_ITERATIONS = 20
MAX_RESEEDS = 1000  # pinned documents per restart, at most (k - 1 are ever needed)
CV_FOLDS = 5


def unit_tfidf(X) -> scipy.sparse.csr_matrix:
    """(n, V) the rows of count matrix X as TF-IDF vectors of unit length
    (idf = ln((1 + n) / (1 + df)) + 1; an empty row stays zero)."""
    X = scipy.sparse.csr_matrix(X, dtype=np.float64)
    n = X.shape[0]
    df = np.bincount(X.indices, minlength=X.shape[1])
    idf = np.log((1.0 + n) / (1.0 + df)) + 1.0
    Z = scipy.sparse.csr_matrix(X @ scipy.sparse.diags(idf))
    norms = np.sqrt(np.asarray(Z.multiply(Z).sum(axis=1)).ravel())
    norms[norms == 0] = 1.0
    return scipy.sparse.csr_matrix(scipy.sparse.diags(1.0 / norms) @ Z)


def _cosines(Z: scipy.sparse.csr_matrix, row: int) -> np.ndarray:
    return np.asarray((Z @ Z[row].T).todense()).ravel()


def kmeanspp(Z: scipy.sparse.csr_matrix, k: int, rng: np.random.Generator) -> list[int]:
    """k rows of unit vectors Z as seeds, by k-means++: the first at random,
    each next with probability proportional to its squared distance 2 - 2 cos
    to the nearest seed so far (uniform among the rest when all are 0)."""
    n = Z.shape[0]
    seeds = [int(rng.integers(n))]
    far = np.maximum(2.0 - 2.0 * _cosines(Z, seeds[0]), 0.0)
    for _ in range(1, k):
        far[seeds] = 0.0
        total = far.sum()
        if total > 0:
            nxt = int(rng.choice(n, p=far / total))
        else:
            rest = np.setdiff1d(np.arange(n), seeds)
            nxt = int(rng.choice(rest)) if len(rest) else int(rng.integers(n))
        seeds.append(nxt)
        far = np.minimum(far, np.maximum(2.0 - 2.0 * _cosines(Z, nxt), 0.0))
    return seeds


def spherical_kmeans(Z: scipy.sparse.csr_matrix, k: int, rng: np.random.Generator) -> np.ndarray:
    """(n,) cluster of each row of unit vectors Z (k-means++ seeds, then at
    most KMEANS_ITERATIONS rounds of spherical k-means). A cluster left
    without rows takes the row least similar to its own centre, from a
    cluster of two or more rows: every cluster has a row (n >= k)."""
    centres = Z[kmeanspp(Z, k, rng)].toarray()
    labels = np.full(Z.shape[0], -1)
    for _ in range(KMEANS_ITERATIONS):
        similarity = np.asarray(Z @ centres.T)
        new = similarity.argmax(axis=1)
        new = _fill_empty(new, similarity[np.arange(len(new)), new], k)
        if np.array_equal(new, labels):
            break
        labels = new
        for j in range(k):
            centre = np.asarray(Z[labels == j].sum(axis=0)).ravel()
            norm = np.linalg.norm(centre)
            centres[j] = centre / norm if norm > 0 else centre
    return labels


def _fill_empty(labels: np.ndarray, fit: np.ndarray, k: int) -> np.ndarray:
    """labels with every empty cluster given the worst-fitting row (lowest
    `fit`) of a cluster that has two or more rows."""
    labels = labels.copy()
    for j in range(k):
        if (labels == j).any():
            continue
        sizes = np.bincount(labels, minlength=k)
        movable = np.flatnonzero(sizes[labels] >= 2)
        if not len(movable):
            break
        worst = movable[np.argmin(fit[movable])]
        labels[worst] = j
    return labels


def _hard(labels: np.ndarray, k: int) -> np.ndarray:
    resp = np.zeros((len(labels), k))
    resp[np.arange(len(labels)), labels] = 1.0
    return resp


def _em_run(X, resp, k, settings, max_iter, tol, log, pins) -> tuple[em.Mixture, np.ndarray, list[float]]:
    """EM from responsibilities resp: (mixture, its E step's responsibilities,
    J history). pins (rows, clusters): re-seeded documents, each held in its
    cluster as a labelled document is in semi-supervised EM (J counts it
    under its cluster only), so J never decreases here either."""
    none = (np.zeros((k, X.shape[1]), np.int64), np.zeros(k, np.int64))
    rows, pinned_to = pins
    history: list[float] = []
    for iteration in range(max_iter + 1):
        mixture = em.mixture_from_sums(none, em.m_step_sums(X, resp, settings[2]), 1.0, *settings)
        resp, ll = em.posterior(mixture, X)
        if len(rows):
            resp[rows], ll[rows] = em.posterior(mixture, X[rows], pinned_to)
        history.append(em.objective(mixture, ll[:0], ll, 1.0))
        if iteration and log is not None:
            log(iteration, history[-1])
        if len(history) > 1 and (abs(history[-1] - history[-2]) < tol * abs(history[-2]) or history[-1] == history[-2]):
            break
    return mixture, resp, history


def _fit_restart(X, Z, k, settings, rng, max_iter, tol, log):
    """One restart: (mixture, J history of the last plain EM stage, iterations,
    each document's cluster (a pinned one's: its pin), pinned documents, the
    tempered stage's final J_beta), or
    None when MAX_RESEEDS pins did not keep every cluster. settings: the
    tempered stage's (its last entry the evidence cap); the plain stage's
    cap is 0."""
    plain = (*settings[:-1], 0.0)
    resp = _hard(spherical_kmeans(Z, k, rng), k)
    rows, pinned_to = np.zeros(0, np.int64), np.zeros(0, np.int64)
    iterations = 0
    length = np.maximum(np.asarray(X.sum(axis=1)).ravel(), 1.0)
    while True:
        pins = (rows, pinned_to)
        _, resp, tempered = _em_run(X, resp, k, settings, max_iter, tol, log, pins)
        mixture, resp, history = _em_run(X, resp, k, plain, max_iter, tol, log, pins)
        iterations += len(tempered) + len(history) - 2
        labels = resp.argmax(axis=1)
        # a cluster some documents prefer with less than half a document expected in all (their
        # responsibilities spread over others) is held by the one that prefers it most: pinned to it
        weak = np.zeros(len(labels), dtype=bool)
        for m in np.flatnonzero(mixture.doc_count <= 0.5):
            mine = np.flatnonzero(labels == m)
            if len(mine) and not np.isin(mine, rows).any():
                weak[mine[resp[mine, m].argmax()]] = True
        if np.bincount(labels, minlength=k).all() and not weak.any():
            return mixture, history, iterations, labels, len(rows), tempered[-1]
        # each empty cluster takes the document worst explained by its own cluster, per token
        own = mixture.component_log_likelihood(X)[np.arange(X.shape[0]), labels]
        fit = own / length
        fit[rows] = np.inf  # a pinned document stays where it is
        moved = _fill_empty(labels, fit, k)
        changed = np.flatnonzero(((moved != labels) & np.isfinite(fit)) | weak)
        if not len(changed) or len(rows) >= MAX_RESEEDS:
            return None
        rows, pinned_to = np.concatenate([rows, changed]), np.concatenate([pinned_to, moved[changed]])
        resp[changed] = _hard(moved[changed], k)


def cluster(
    X,
    k: int,
    event_model: str = "multinomial",
    alpha: float | None = None,
    prior_alpha: float = 1.0,
    restarts: int = 10,
    seed: int = 0,
    max_iter: int = 50,
    tol: float = 1e-6,
    e_tokens: float | None = None,
    log: Callable[[int, float], None] | None = None,
) -> em.Fit:
    """The mixture of k clusters of count matrix X (cluster m = class m) fitted
    as the module docstring says; restart r draws from
    np.random.default_rng([seed, r]). alpha None: DEFAULT_ALPHA of the event
    model; e_tokens None: `evidence_cap` of the documents. log(iteration, J) after each EM iteration of every restart.
    Returns an em.Fit: labelled_* zeros, expected_* the clusters' counts,
    objective the winner's J history since its last re-seed, assignments
    each document's most responsible cluster (every cluster has one or
    more), pinned the documents re-seeding held in place."""
    alpha = DEFAULT_ALPHA.get(event_model, 1.0) if alpha is None else alpha
    em._check_settings(event_model, alpha, prior_alpha, max_iter, tol)
    if int(k) < 1 or int(restarts) < 1:
        raise NbcliError(f"clustering needs k >= 1 and at least one restart, not k = {k}, restarts = {restarts}")
    counts = em.prepare(X, "multinomial")
    if counts.shape[0] == 0:
        raise NbcliError("there are no documents to cluster")
    em._check_magnitude(counts)
    k = int(k)
    if k > counts.shape[0]:
        raise NbcliError(f"{k} clusters of {counts.shape[0]} documents: give at most {counts.shape[0]}")
    X = em.prepare(counts, event_model)
    e_tokens = evidence_cap(X) if e_tokens is None else e_tokens
    Z = unit_tfidf(counts)
    settings = (np.arange(k), k, event_model, float(alpha), float(prior_alpha), float(e_tokens))
    best = None
    for r in range(int(restarts)):
        got = _fit_restart(X, Z, k, settings, np.random.default_rng([seed, r]), int(max_iter), tol, log)
        if got is not None and (best is None or got[-1] > best[-1]):
            best = got
    if best is None:
        raise NbcliError(
            f"every restart left one of the {k} clusters without documents",
            hint="give fewer clusters, or more restarts",
        )
    mixture, history, iterations, labels, pinned, _ = best
    zeros = np.zeros((k, X.shape[1]), np.int64)
    counts_of = (mixture.word_count, mixture.doc_count)
    return em.Fit(mixture, history, iterations, True, zeros, np.zeros(k, np.int64), *counts_of, labels, pinned)


def evidence_cap(X) -> float:
    """The tempered E step's L0 for these documents (rows of `em.prepare`d
    counts, or presence for bernoulli): max(E_TOKENS, E_TOKENS_SHARE x the
    median document's tokens)."""
    X = scipy.sparse.csr_matrix(X)
    length = np.asarray(X.sum(axis=1)).ravel()
    return max(E_TOKENS, E_TOKENS_SHARE * float(np.median(length))) if len(length) else E_TOKENS


def assign(fit: em.Fit, X) -> np.ndarray:
    """(n,) each row's most likely cluster under the fitted mixture."""
    return fit.mixture.class_log_proba(X).argmax(axis=1)


def heldout_log_likelihood(X, k: int, folds: int = CV_FOLDS, seed: int = 0, **cluster_kwargs) -> np.ndarray:
    """(n,) each document's cross-validated log-likelihood under k clusters:
    rows dealt to `folds` folds by np.random.default_rng([seed, folds]);
    each fold scored by the untempered log sum_m pi_m P(x | m) of the
    mixture fitted on the others, its term distributions smoothed with
    HELDOUT_ALPHA from its counts."""
    counts = em.prepare(X, "multinomial")
    n = counts.shape[0]
    fold = np.random.default_rng([seed, folds]).permutation(n) % folds
    each = np.zeros(n)
    for f in range(folds):
        train, test = np.flatnonzero(fold != f), np.flatnonzero(fold == f)
        fit = cluster(counts[train], k, seed=seed, **cluster_kwargs)
        m = fit.mixture  # scored untempered: the held-out documents' own likelihood
        plain = em.Mixture(m.event_model, k, m.components, m.log_weight, m.word_count, m.doc_count, HELDOUT_ALPHA, 1.0)
        each[test] = em.posterior(plain, counts[test])[1]
    return each


def one_standard_error(ks: list[int], each: list[np.ndarray]) -> tuple[int, list[float]]:
    """The one-standard-error rule (Breiman et al. 1984; Hastie, Tibshirani
    and Friedman, The Elements of Statistical Learning, 7.10): the smallest
    k whose total held-out log-likelihood is within one standard error of
    the highest total's, and each k's standard error. each[i]: the
    documents' held-out log-likelihoods under ks[i]; the standard error of
    a k is that of its total's shortfall from the best k's, the documents
    paired (sd of the per-document differences x sqrt(n); 0 for the best).

    Why not the highest total (what -k auto took before): on text the
    held-out likelihood of a mixture keeps creeping up past the topics, as
    extra clusters pick up sub-topics worth a few nats a document; those
    gains are smaller than their own noise. Measured (benchmarks/cluster.py's
    corpora, seed 0, true k / highest total / one standard error): topics
    4/7/4, news5 5/6/6, news5-near 5/6/4, r8 8/10/8, books 2/9/8, sotu 4/3/3,
    sotu-addresses 4/4/4, spam 2/9/8; two standard errors changed only
    books (5)."""
    totals = [float(e.sum()) for e in each]
    best = max(range(len(ks)), key=lambda i: (totals[i], -i))

    def error(e: np.ndarray) -> float:
        shortfall = each[best] - e
        return float(np.std(shortfall, ddof=1) * np.sqrt(len(e))) if len(e) > 1 else 0.0

    errors = [error(e) for e in each]  # the best's own: 0
    chosen = next(i for i in range(len(ks)) if totals[best] - totals[i] <= errors[i])
    return int(ks[chosen]), errors


def choose_k(X, ks, seed: int = 0, **cluster_kwargs) -> tuple[int, list[dict[str, float]]]:
    """The k in ks chosen by cross-validated log-likelihood and the
    one-standard-error rule (`one_standard_error`), and a row {"k",
    "heldout_log_likelihood", "standard_error"} per k. Each fold is fitted
    as `cluster` fits (cluster_kwargs: its restarts too: a fold fit caught
    in a poor optimum, two topics merged and one split, costs its fold
    hundreds of nats and can move the choice); a k above the documents of
    the smallest training part (about 4/5 of them) is not tried."""
    counts = em.prepare(X, "multinomial")
    smallest = counts.shape[0] - -(-counts.shape[0] // CV_FOLDS)
    tried = [int(k) for k in ks if int(k) <= smallest]
    if not tried:
        raise NbcliError("no k to choose from")
    each = [heldout_log_likelihood(counts, k, seed=seed, **cluster_kwargs) for k in tried]
    k, errors = one_standard_error(tried, each)
    rows = [
        {"k": kk, "heldout_log_likelihood": float(e.sum()), "standard_error": se}
        for kk, e, se in zip(tried, each, errors)
    ]
    return k, rows


def distinct_rows(X) -> int:
    """How many different rows X has (a canonical CSR from `em.prepare`: the
    same document, as the model sees it, is the same row). One pass, a
    16-byte digest per row."""
    X = scipy.sparse.csr_matrix(X)
    indptr, indices, data = X.indptr.tolist(), X.indices, X.data
    seen = set()
    for i in range(X.shape[0]):
        a, b = indptr[i], indptr[i + 1]
        seen.add(hashlib.blake2b(indices[a:b].tobytes() + data[a:b].tobytes(), digest_size=16).digest())
    return len(seen)


# Peak bytes of `cluster` per cell of its (k, terms) and (documents, k)
# tables: measured peak RSS of `nbcli cluster` (restarts 1 and 5, k 50 to
# 200, 66k terms x 2k documents and 1k terms x 20k documents) grew by 48
# (multinomial) and 95 (bernoulli) bytes per (k, term) cell, and by 38 per
# (document, k) cell; rounded up. The spherical k-means start adds a dense
# (k, terms) table of centres and a (documents, k) table of cosines: 8
# bytes each, within the rounding.
CLUSTER_BYTES_PER_TERM_CELL = {"multinomial": 64, "bernoulli": 112}
CLUSTER_BYTES_PER_DOC_CELL = 56


def cluster_bytes(event_model: str, k: int, n_docs: int, n_terms: int) -> int:
    """About the peak memory `cluster` needs for k clusters (its dense
    (k, terms) tables and (documents, k) responsibilities)."""
    return int(k) * (CLUSTER_BYTES_PER_TERM_CELL[event_model] * int(n_terms) + CLUSTER_BYTES_PER_DOC_CELL * int(n_docs))
