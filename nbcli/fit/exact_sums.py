"""Complement's transformed counts, summed exactly in any order.

A document's transformed counts (log(1 + x), x / ||x||) are floats; summed
per class they would depend on the order of the additions, and so on how
the corpus was split among workers. They are summed in fixed point
instead: each value rounded to a multiple of 1 / FIT_SCALE (integer sums
are the same in any order), and each document's norm computed in one fixed
order (`doc_norms`). Training's count table, its held-out groups and
`learn` all round alike, so learning a document gives the sums training
gives.
"""

from __future__ import annotations

import numpy as np

from nbcli.nb.smoothing import SUM_SCALE

FIT_SCALE = SUM_SCALE  # fixed-point unit of CountTable's transformed sums (a value <= 1 is exact to 1.5e-11)


def doc_norms(doc_of: np.ndarray, values: np.ndarray, n_docs: int) -> np.ndarray:
    """Each document's Euclidean norm sqrt(sum of its values squared), the
    squares added in increasing order within each document: the order of a
    document's terms (a worker's own term ids, a sample's, a learned
    batch's) does not change the last bit, so training, its held-out
    groups and `learn` round the same transformed values for any --jobs."""
    squares = values * values
    if n_docs == 1:  # one document (a TELL's): its squares in increasing order, added one by one as below
        return np.sqrt(np.bincount(doc_of, weights=np.sort(squares), minlength=1))
    order = np.lexsort((squares, doc_of))
    return np.sqrt(np.bincount(doc_of[order], weights=squares[order], minlength=n_docs))
