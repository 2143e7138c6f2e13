"""A clustering against true labels: the contingency table, the adjusted
Rand index, normalised mutual information and purity (`nbcli eval
--clusters`).

No I/O, numpy only (scikit-learn is the tests' oracle, not a dependency).
The figures are defined as scikit-learn defines them, edge cases included
(tests/evaluate/test_clustering.py checks them against
`adjusted_rand_score` and `normalized_mutual_info_score`):

- **ARI** from the pair counts of the n documents (ordered pairs, as
  scikit-learn's `pair_confusion_matrix`): tp pairs together in both, fp
  together in the clustering only, fn together in the labels only, tn
  apart in both. When no pair is split differently (fp = fn = 0: identical
  partitions, both one group, both all singletons, one document) it is 1;
  else 2(tp·tn − fn·fp) / ((tp + fn)(fn + tn) + (tp + fp)(fp + tn)),
  with the products in Python integers (they overflow int64 beyond some
  50,000 documents). 0 is what chance gives; it can be negative.
- **NMI** with the arithmetic mean: I(L; C) / ((H(L) + H(C)) / 2), in nats
  (the base cancels). 1 when labels and clusters are each a single group
  (nothing is split: a perfect match); 0 when the mutual information is
  0 (so whenever exactly one of them is a single group). The mutual
  information is summed cell by cell as scikit-learn sums it, cells under
  machine epsilon dropped and the sum clipped at 0.
- **Purity**: Σ over clusters of its most common label's documents, over
  n: the share of documents that carry their cluster's majority label. It
  rewards many clusters (all singletons have purity 1), which is why ARI
  and NMI stand beside it.

No documents is a ValueError (the command refuses an empty corpus first).

Linear in the documents (up to numpy's sort): labels and clusters become
codes by `np.unique`, the non-empty cells of the contingency table come
from one `np.unique` of the pair codes, and the metrics use those cells
and the margins only, never the dense table, which for all-singletons
would be n × n. The dense table is built for reports only
(`clustering_report`), over the labels and clusters that occur.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Cells:
    """The non-empty cells of a contingency table (labels × clusters) and
    its margins."""

    labels: list  # the distinct true labels, sorted (row i is labels[i])
    clusters: list  # the distinct clusters, sorted (column j is clusters[j])
    rows: np.ndarray  # each non-empty cell's row
    cols: np.ndarray  # ... its column
    counts: np.ndarray  # ... and its documents (int64, all > 0)
    label_sizes: np.ndarray  # documents per label (row sums)
    cluster_sizes: np.ndarray  # documents per cluster (column sums)

    @property
    def documents(self) -> int:
        return int(self.counts.sum())


def cells(true_labels: Sequence, clusters: Sequence) -> Cells:
    """The contingency table's non-empty cells of these parallel sequences."""
    if len(true_labels) != len(clusters):
        raise ValueError(f"{len(true_labels)} labels for {len(clusters)} cluster assignments")
    if not len(true_labels):
        raise ValueError("a clustering of no documents has no figures")
    label_names, t = np.unique(np.asarray(true_labels), return_inverse=True)
    cluster_names, c = np.unique(np.asarray(clusters), return_inverse=True)
    width = len(cluster_names)
    pairs, counts = np.unique(t.ravel().astype(np.int64) * width + c.ravel(), return_counts=True)
    return Cells(
        labels=label_names.tolist(),
        clusters=cluster_names.tolist(),
        rows=pairs // width,
        cols=pairs % width,
        counts=counts.astype(np.int64),
        label_sizes=np.bincount(t.ravel(), minlength=len(label_names)).astype(np.int64),
        cluster_sizes=np.bincount(c.ravel(), minlength=width).astype(np.int64),
    )


def ari_of(table: Cells) -> float:
    """The adjusted Rand index of a contingency table (see the module)."""
    n = table.documents
    together = int(np.dot(table.counts, table.counts))  # ordered pairs together in both, plus the n self-pairs
    same_label = int(np.dot(table.label_sizes, table.label_sizes))
    same_cluster = int(np.dot(table.cluster_sizes, table.cluster_sizes))
    tp = together - n
    fp = same_cluster - together
    fn = same_label - together
    tn = n * n - fp - fn - together
    if fn == 0 and fp == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


def mutual_info_of(table: Cells) -> float:
    """I(labels; clusters) in nats, summed over the non-empty cells."""
    if len(table.label_sizes) == 1 or len(table.cluster_sizes) == 1:
        return 0.0
    n = float(table.documents)
    share = table.counts / n
    outer = table.label_sizes[table.rows] * table.cluster_sizes[table.cols]
    terms = share * (np.log(table.counts) - math.log(n)) + share * (2 * math.log(n) - np.log(outer))
    terms = np.where(np.abs(terms) < np.finfo(np.float64).eps, 0.0, terms)
    return float(max(terms.sum(), 0.0))


def _entropy(sizes: np.ndarray) -> float:
    sizes = sizes[sizes > 0].astype(np.float64)
    total = sizes.sum()
    return float(-np.sum(sizes / total * (np.log(sizes) - math.log(total))))


def nmi_of(table: Cells) -> float:
    """Normalised mutual information, arithmetic mean (see the module)."""
    if len(table.label_sizes) == len(table.cluster_sizes) == 1:
        return 1.0
    mi = mutual_info_of(table)
    if mi == 0:
        return 0.0
    return mi / ((_entropy(table.label_sizes) + _entropy(table.cluster_sizes)) / 2)


def purity_of(table: Cells) -> float:
    """The share of documents carrying their cluster's majority label."""
    best = np.zeros(len(table.cluster_sizes), dtype=np.int64)
    np.maximum.at(best, table.cols, table.counts)
    return float(best.sum() / table.documents)


def adjusted_rand_index(true_labels: Sequence, clusters: Sequence) -> float:
    return ari_of(cells(true_labels, clusters))


def normalized_mutual_info(true_labels: Sequence, clusters: Sequence) -> float:
    return nmi_of(cells(true_labels, clusters))


def purity(true_labels: Sequence, clusters: Sequence) -> float:
    return purity_of(cells(true_labels, clusters))


def dense(table: Cells) -> np.ndarray:
    """The contingency table itself: (labels, clusters) document counts."""
    out = np.zeros((len(table.labels), len(table.clusters)), dtype=np.int64)
    out[table.rows, table.cols] = table.counts
    return out


def clustering_report(true_labels: Sequence[str], clusters: Sequence[str], model_clusters: Sequence[str] = ()) -> dict:
    """The `nbcli eval --clusters` report as a JSON-ready dict: "documents",
    "labels" and "clusters" (how many occur), "adjusted_rand_index",
    "normalized_mutual_info", "purity", "contingency" ({"labels": sorted,
    "clusters", "matrix": rows are labels}) and "empty_clusters": the
    clusters of `model_clusters` no document fell in. The contingency's
    columns are the clusters that occur, in `model_clusters`' order (then
    any others, sorted)."""
    table = cells(true_labels, clusters)
    order = {c: i for i, c in enumerate(model_clusters)}
    columns = sorted(range(len(table.clusters)), key=lambda j: (order.get(table.clusters[j], len(order)), j))
    matrix = dense(table)[:, columns]
    occur = set(table.clusters)
    return {
        "documents": table.documents,
        "labels": len(table.labels),
        "clusters": len(table.clusters),
        "adjusted_rand_index": ari_of(table),
        "normalized_mutual_info": nmi_of(table),
        "purity": purity_of(table),
        "contingency": {
            "labels": table.labels,
            "clusters": [table.clusters[j] for j in columns],
            "matrix": matrix.tolist(),
        },
        "empty_clusters": [c for c in model_clusters if c not in occur],
    }
