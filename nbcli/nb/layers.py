"""The terms a run of journal updates touched, as one layer of a model
read through its journal (`nb.overlay.JournalView`): their values as the
last update touching each left them (`updates.last_images`), settled as a
model built from them would hold them (`Counts.settled`: none below zero,
document frequencies at most the class's documents), and which of them
are in the model (alive). No I/O.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from nbcli.nb.counts import Counts, Update

_Table = np.ndarray | None  # a table an image may not have (df, fit)


def clipped(values: np.ndarray, low, high=None) -> np.ndarray:
    """values within [low, high], the array itself where they all are: a
    checkpoint's tables (the bulk of a reader's journal, decoded in place)
    are not copied (never written to: a layer's tables are read only)."""
    if values.size == 0 or ((low is None or values.min() >= low) and (high is None or bool((values <= high).all()))):
        return values
    return np.clip(values, low, high)


@dataclasses.dataclass
class Layer:
    """The terms some updates touched (`updates.last_images`), their values
    as `Counts.settled` leaves them (none below zero, document frequencies
    at most the class's documents), and which are in the model (alive).
    texts: where `top` has no texts yet (`updates.last_images_texts_later`),
    the function that gathers them; `counts` gives `top` with them."""

    top: Counts
    tf: np.ndarray
    df: np.ndarray | None
    fit: np.ndarray | None
    alive: np.ndarray
    texts: Any = None

    @classmethod
    def of(cls, top: Counts, texts=None) -> Layer:
        if not top.hashes.flags.aligned:  # a checkpoint mapped from its journal (every search reads them)
            top = dataclasses.replace(top, hashes=top.hashes.copy())
        tf, df, fit, alive = _settled(top.tf, top.df, top.fit, top.class_count)
        return cls(top, tf, df, fit, alive, texts)

    @property
    def hashes(self) -> np.ndarray:
        return self.top.hashes

    def counts(self) -> Counts:
        """`top` with its terms' texts (gathered now, where they were not)."""
        if self.texts is not None:
            blob, offsets = self.texts()
            self.top, self.texts = dataclasses.replace(self.top, blob=blob, offsets=offsets), None
        return self.top

    def table(self, name: str):
        values = {"tf": self.tf, "df": self.df, "fit": self.fit}[name]
        if values is not None and not values.flags.aligned:
            # a checkpoint's, mapped from its journal where it does not start 8-aligned: copied once
            # read (a gather from an unaligned table took twice as long), the table scoring reads only
            values = values.copy()
            setattr(self, name, values)
        return values

    def as_update(self) -> Update:
        """The layer as one Update (its record changes are the view's)."""
        return Update(self.counts(), list(self.top.classes), {}, np.zeros((0, 2), np.uint64), np.zeros(0, np.int32))


def settled_columns(image: Counts, cols: np.ndarray, source: str) -> tuple[np.ndarray, np.ndarray]:
    """(the `source` table's values, which are in the model) of columns
    `cols` of an update's image, as a layer of it holds them (`Layer.of`)."""
    tf, _, fit, alive = _settled(
        image.tf[:, cols],
        None if image.df is None else image.df[:, cols],
        None if image.fit is None else image.fit[:, cols],
        image.class_count,
    )
    if source == "tf":
        return tf, alive
    if fit is None:  # (`viewable`: every update of a model with the table carries it)
        raise ValueError("an update has no fit table, which the model has")
    return fit, alive


def _settled(tf: np.ndarray, df, fit, class_count) -> tuple[np.ndarray, _Table, _Table, np.ndarray]:
    """(tf, df, fit, alive) of tables of an update's image: none below
    zero, document frequencies at most the class's documents (the table
    itself where nothing needs it: `clipped`), and which terms are in the
    model (a count or a document frequency not zero)."""
    count = np.asarray(class_count).astype(np.int64)
    tf = clipped(tf, 0)
    df = None if df is None else clipped(clipped(df, 0), None, count[:, None])
    alive = (tf != 0).any(axis=0)
    if df is not None:
        alive |= (df != 0).any(axis=0)
    return tf, df, None if fit is None else clipped(fit, 0.0), alive
