"""Log-space arithmetic shared by the event models, the table models, EM and
the calibration maps (a leaf: numpy only, so each of them can import it
without importing another)."""

from __future__ import annotations

import numpy as np


def log_softmax(jll: np.ndarray) -> np.ndarray:
    """Rows of jll normalised in log space: jll - logsumexp(jll, axis=1)."""
    top = jll.max(axis=1, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    shifted = jll - top
    return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
