"""Learning from unlabelled documents: semi-supervised EM and clustering.

The math is in `em` (no I/O); this module reads and analyses the documents
on one vocabulary and turns an EM fit into an ordinary nbcli model:

- `train --unlabeled PATH`: Nigam et al. (2000). The model's counts are the
  labelled documents' counts plus lambda times the unlabelled documents'
  expected counts (their class responsibilities times their counts), so
  the classifier is the usual multinomial or Bernoulli model of those
  counts, scored by the usual scorer. The model's meta records the EM run
  (unlabelled documents, lambda, iterations, the objective).
- `nbcli cluster`: an unsupervised Naive Bayes mixture; its "classes" are
  the clusters `cluster1`..`clusterK`, their counts the expected counts, so
  `predict` assigns clusters and `info` shows each cluster's top terms.

Decisions (issue 25): `train --unlabeled` skips an unlabelled document
whose content digest (the record's identity, `identity.digests`) is among
the labelled documents' (the labelled corpus given again would count
twice); the model's meta counts them (`em.unlabelled_skipped_as_labelled`)
and the command warns. `cluster` refuses, in one line and before EM:
documents without a term, documents that are all the same, a k above the
number of distinct documents (identical documents always share a cluster,
so more clusters would be empty or split copies), and a k whose dense
(k, terms) tables would need more memory than is available
(`clusters.cluster_bytes`, `check_cluster_memory`).

Expected counts are not counts of documents: a model fitted by EM cannot
learn or forget one document exactly (the responsibilities of every
unlabelled document would change), so `learn`, `forget`, `merge` and `train
--from-model` refuse such models; train again instead.
"""

from __future__ import annotations

import datetime

import numpy as np

from nbcli.errors import NbcliError, ParameterError
from nbcli.nb.classifier import ComponentClassifier

EM_KINDS = ("multinomial", "bernoulli")
AUTO_MAX_K = 10  # --k auto tries 1..10 clusters
# The vocabulary a clustering keeps by default: terms in at least 2
# documents and at most half of them (nb/clusters.py has the measurements).
CLUSTER_MIN_DF = 2
CLUSTER_MAX_DF = 0.5


def _counts_model(kind, classes, doc_count, word_count, vocab, analyzer_options, alpha, prior_alpha, meta):
    """A Classifier whose event model is fitted to (expected) counts."""
    from nbcli.nb.classifier import Classifier
    from nbcli.nb.event_models import build_event_model

    class_count = np.asarray(doc_count, dtype=np.float64)
    word_count = np.asarray(word_count, dtype=np.float64)
    if kind == "bernoulli":
        # a document frequency never exceeds its class's documents (rounding of expected counts aside)
        doc_freq = np.minimum(word_count, class_count[:, None])
        model = build_event_model(
            kind, classes, class_count, doc_freq, doc_freq=doc_freq, alpha=alpha, prior_alpha=prior_alpha
        )
    else:
        model = build_event_model(kind, classes, class_count, word_count, alpha=alpha, prior_alpha=prior_alpha)
    return Classifier(analyzer_options, vocab, model, meta)


def _meta(n_documents: int, options: dict, extra: dict) -> dict:
    from nbcli import __version__

    return {
        "n_documents": n_documents,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "nbcli_version": __version__,
        "options": options,
        **extra,
    }


def train_em(
    labelled,
    unlabelled,
    analyzer_options,
    kind: str,
    alpha: float | None,
    weight: float,
    max_iter: int,
    tol: float,
    log=None,
    jobs=1,
    components: int = 1,
    e_tokens: float = 0.0,
):
    """A Classifier trained by semi-supervised EM on labelled and
    unlabelled documents (see the module docstring); log(iteration,
    objective) after each EM iteration; the unlabelled documents' E and M
    steps, and the analysis, on `jobs` workers (`parallel.em_stats`,
    `parallel.analysed_batches`: the same fit for any).
    e_tokens: the E step's evidence cap (`em.posterior`; 0: the plain E
    step; `nbcli train` gives 4). alpha None: `nbcli train`'s default for
    the documents read (labelled and unlabelled): training.MAIL_ALPHA
    (0.0001) when most are mail, else TEXT_ALPHA (1), so that on mail EM
    smooths as the labelled-only mail model does. Measured on the
    SpamAssassin split at 5 labelled per class (benchmarks/em.py's draws,
    e_tokens 4): alpha 1 gave ham FPR 7.6% +- 0.5% on the bench's draws and
    13.5% +- 2.6% on 5 other draws (no EM there: 18.3%), alpha 0.0001 6.4%
    +- 0.1% and 8.9% +- 0.5% (accuracy 93.6% and 91.2%)."""
    import functools

    from nbcli.fit.crossval import analyse_streams
    from nbcli.nb import em
    from nbcli.run.parallel import analysed_batches, em_stats
    from nbcli.text.analyzer import Analyzer

    if kind not in EM_KINDS:
        raise ParameterError(
            "kind",
            "{unlabeled} works with {kind:multinomial} or bernoulli, not {value}",
            hint="add {kind:multinomial} (the mail default, complement, has no mixture EM)",
            value=kind,
        )
    analyzer = Analyzer(analyzer_options)
    # the analysis too on the workers (term ids assigned here, in order: the same for any jobs)
    on_workers = functools.partial(analysed_batches, analyzer, jobs=jobs)
    digests: list = []
    parts, vocab, mail_docs = analyse_streams(
        [labelled, unlabelled], analyzer, analysed_batches=_digesting(on_workers, digests)
    )
    (XL, labels), (XU, _) = parts
    labelled_again = _among(digests[1], digests[0])
    skipped = int(labelled_again.sum())
    if skipped:
        XU = XU[~labelled_again]
    if len(labels) == 0:
        raise NbcliError("the corpus has no labelled documents", hint="check the paths")
    classes = sorted(set(labels))
    if len(classes) < 2:
        raise NbcliError(
            f"the corpus has only one class ({classes[0]})", hint="EM needs labelled documents of two classes"
        )
    index = {c: i for i, c in enumerate(classes)}
    y = np.array([index[label] for label in labels], dtype=np.int64)
    if alpha is None:
        from nbcli.fit.settings import MAIL_ALPHA, TEXT_ALPHA

        alpha = MAIL_ALPHA if 2 * mail_docs > XL.shape[0] + XU.shape[0] else TEXT_ALPHA
    # the class prior unsmoothed (prior_alpha 0), as `nbcli train` fits it: with weight 0 the model is the
    # labelled-only one, on the vocabulary of all the documents
    fit = em.em(
        XL,
        y,
        XU,
        len(classes),
        event_model=kind,
        alpha=alpha,
        prior_alpha=0.0,
        weight=weight,
        max_iter=max_iter,
        tol=tol,
        log=log,
        stats=em_stats(XU, kind, jobs),
        components=components,
        e_tokens=e_tokens,
    )
    doc_count = fit.labelled_docs + fit.expected_docs
    word_count = fit.labelled_count + fit.expected_count
    meta = _meta(
        int(XL.shape[0]),
        {"model": kind, "alpha": alpha},
        {
            "em": {
                "unlabelled_documents": int(XU.shape[0]),
                "unlabelled_skipped_as_labelled": skipped,
                "weight": weight,
                "e_tokens": e_tokens,
                "iterations": fit.iterations,
                "converged": bool(fit.converged),
                "objective": [float(j) for j in fit.objective],
            },
            "mail_documents": int(mail_docs),
        },
    )
    if components == 1:
        model = _counts_model(kind, classes, doc_count, word_count, vocab, analyzer_options, alpha, None, meta)
        model.expected = (np.asarray(fit.expected_count, dtype=np.float64), np.asarray(fit.expected_docs, np.float64))
        return model, fit
    # several components per class: the component-level model, answering for the classes
    mixture = fit.mixture
    names = [f"{classes[c]}~{k + 1:02d}" for c in range(len(classes)) for k in range(components)]
    meta["components"] = {"classes": classes, "of": mixture.components.tolist(), "per_class": components}
    inner = _counts_model(
        kind, names, mixture.doc_count, mixture.word_count, vocab, analyzer_options, alpha, None, meta
    )
    return ComponentClassifier(inner), fit


def _digesting(analysed_batches, digests: list):
    """`analysed_batches` that also keeps, per stream, each document's
    content digest (the record's identity, `identity.digests`) in `digests`:
    one (n, 2) uint64 array per stream, in order."""
    from nbcli.text.identity import digests as content_digests

    def analysed(docs):
        mine: list = []
        for batch, tokens in analysed_batches(docs):
            mine.append(content_digests(tokens.hashes, tokens.doc_ptr))
            yield batch, tokens
        digests.append(np.concatenate(mine) if mine else np.zeros((0, 2), np.uint64))

    return analysed


def _among(these: np.ndarray, those: np.ndarray) -> np.ndarray:
    """(len(these),) bool: which of the (n, 2) digests `these` are among `those`."""
    as_bytes = np.dtype((np.void, 16))
    a = np.ascontiguousarray(these, dtype=np.uint64).view(as_bytes).ravel()
    b = np.ascontiguousarray(those, dtype=np.uint64).view(as_bytes).ravel()
    return np.isin(a, b)


def cluster_docs(
    docs,
    analyzer_options,
    kind: str,
    k,
    alpha: float | None,
    restarts: int,
    seed: int,
    log=None,
    min_df: int | float = CLUSTER_MIN_DF,
    max_df: int | float = CLUSTER_MAX_DF,
    max_features: int | None = None,
):
    """(Classifier of the clusters, the em.Fit, the table of k = 'auto' (else
    None)) of unlabelled documents, on the terms that pass min_df, max_df
    and max_features (`vectorize.prune_mask`, as `train` prunes). alpha None:
    the event model's `clusters.DEFAULT_ALPHA`."""
    from nbcli.fit.crossval import analyse_streams
    from nbcli.nb import clusters, em
    from nbcli.text.analyzer import Analyzer
    from nbcli.text.vectorize import prune_mask

    if kind not in EM_KINDS:
        raise ParameterError("kind", "{kind} {value}: clusters are multinomial or bernoulli mixtures", value=kind)
    alpha = clusters.DEFAULT_ALPHA[kind] if alpha is None else alpha
    parts, vocab, mail_docs = analyse_streams([docs], Analyzer(analyzer_options))
    X = em.prepare(parts[0][0], "multinomial")
    n = X.shape[0]
    if n < 2:
        raise NbcliError(f"{n} document(s): nothing to cluster", hint="give more documents")
    if X.nnz == 0:
        raise NbcliError(
            f"none of the {n} documents has a term: nothing to cluster",
            hint="check the inputs (empty files?) and the analyzer options",
        )
    distinct = clusters.distinct_rows(X)
    if distinct < 2:
        raise NbcliError(f"the {n} documents are all the same: nothing to cluster", hint="give different documents")
    keep = prune_mask(
        np.asarray(X.sum(axis=0)).ravel(), np.bincount(X.indices, minlength=X.shape[1]), n, min_df, max_df, max_features
    )
    if not keep.all():
        cols = np.flatnonzero(keep)
        vocab, X = vocab.subset(cols), em.prepare(X[:, cols], "multinomial")
        distinct = clusters.distinct_rows(X)  # fewer terms can make more documents the same
    if distinct < 2:
        raise ParameterError(
            "min_df",
            "the {n} documents are all the same on the terms kept: nothing to cluster",
            hint="give different documents, or keep more terms ({min_df}, {max_df}, {stop_words})",
            n=n,
        )
    table = None
    if k == "auto":
        ks = [kk for kk in range(1, AUTO_MAX_K + 1) if kk <= distinct]
        check_cluster_memory(kind, ks[-1], n, len(vocab))
        k, table = clusters.choose_k(X, ks, event_model=kind, alpha=alpha, restarts=restarts, seed=seed)
        if k == 1:
            raise ParameterError(
                "k",
                "the documents look like one cluster (held-out likelihood at k = 1 is within one standard error of the "
                "highest)",
                hint="give {k} 2 or more to split them",
            )
    if not 2 <= k <= distinct:
        same = "" if distinct == n else f" ({n} documents, {distinct} distinct: identical ones go to one cluster)"
        raise ParameterError(
            "k", "{k} {value}: give 2 to {distinct} clusters{same}", value=k, distinct=distinct, same=same
        )
    check_cluster_memory(kind, k, n, len(vocab))
    fit = clusters.cluster(X, k, event_model=kind, alpha=alpha, restarts=restarts, seed=seed, log=log)
    classes = [f"cluster{i + 1}" for i in range(k)]
    vocabulary = {"min_df": min_df, "max_df": max_df, "max_features": max_features}
    meta = _meta(
        int(n),
        {"model": kind, "alpha": alpha, **vocabulary},
        {
            "clusters": {
                "k": int(k),
                "restarts": restarts,
                "seed": seed,
                "iterations": fit.iterations,
                "objective": float(fit.objective[-1]),
                "e_tokens": clusters.evidence_cap(em.prepare(X, kind)),
                "sizes": np.bincount(fit.assignments, minlength=k).tolist(),
                "pinned": int(fit.pinned),
                "start": "spherical k-means (k-means++ seeds on unit TF-IDF vectors)",
                "heldout_log_likelihood": None if table is None else table,
            },
            "mail_documents": int(mail_docs),
        },
    )
    model = _counts_model(
        kind, classes, fit.expected_docs, fit.expected_count, vocab, analyzer_options, alpha, 1.0, meta
    )
    # every count of a clustering is expected: documents learned into a cluster later are counted exactly
    model.expected = (np.asarray(fit.expected_count, dtype=np.float64), np.asarray(fit.expected_docs, np.float64))
    return model, fit, table


def check_cluster_memory(kind: str, k: int, n_docs: int, n_terms: int) -> None:
    """An error, before anything is allocated, when k clusters of these
    documents would need more memory than this machine has available
    (`clusters.cluster_bytes`; the available memory is unknown off Linux: no check)."""
    from nbcli.nb import clusters

    need, have = clusters.cluster_bytes(kind, k, n_docs, n_terms), available_memory()
    if have is not None and need > have:
        raise ParameterError(
            "k",
            "{k} {value}: {value} clusters of {n_docs} documents and {n_terms} terms need about {need} of memory, "
            "and {have} is available",
            hint="give a smaller {k} (at most about {most} here)",
            value=k,
            n_docs=n_docs,
            n_terms=n_terms,
            need=_gb(need),
            have=_gb(have),
            most=max(1, k * have // need),
        )


def _gb(n: int) -> str:
    return f"{n / 2**30:.1f} GiB" if n >= 2**30 else f"{n / 2**20:.0f} MiB"


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation (Linux: MemAvailable
    in /proc/meminfo), or None when unknown."""
    try:
        with open("/proc/meminfo", "rb") as f:
            for line in f:
                if line.startswith(b"MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None
