"""A model read through its journal without building it: `JournalView`.

A learn, forget or TELL of a big model appends an Update to the model's
journal (`nb.updates`, `store.journal`). Building the model those updates
make (`updates.replay`, then deriving the event model's tables) costs the
model's size, in time and memory, once per reader and again in the daemon's
worker after every TELL. A view costs what the journal holds instead:

- the model file's classifier stays as it was read (its arrays mapped or
  read; its stored tables unused);
- the terms the updates touched lie over it in layers (`Layer`): each
  term with its values as the last update touching it left them
  (`updates.last_images`; a term that left the vocabulary has all zeros
  and is unknown here); a term's value is the newest layer's that has it,
  else the base's;
- the class totals the weights' normalisers depend on are kept exactly
  (`smoothing.ExactTotals`: integers, so sums taken apart and put together
  are the sums over the whole table), with the number of terms: the
  base's totals (one pass, when the view is made) less the old values of
  the terms each layer changes plus their new values;
- a batch of documents is scored by the event model over the batch's terms
  alone: the weights of just those columns (`column_weights`, which the
  multinomial and complement models derive their whole tables with), with
  the view's totals; the prior, from the documents per class.

Following more updates (`plus`: the daemon's worker after its own TELL, or
the journal's new records another writer appended: `store.modelfile.followed`)
adds a layer in O(the update): its terms' old values are looked up, the
totals moved by the difference. The layers are kept as a log-structured
merge: the newest layer is merged into the one below it while that one
has at most LAYER_RATIO times its terms (or there are over MAX_LAYERS),
so a view following n updates of m terms keeps about log_4(n) layers and
merges each term about that many times: O(m log n) per update, never the
whole journal's terms at once (which a merge of all layers cost, every
MAX_LAYERS updates, before).

A reader that scores many documents between updates (a daemon's worker)
can derive every term's weights once (`flatten`): then a batch is scored
as a model file's classifier scores it (one search per token in one array
of hashes, the weights read), at the cost of a model file's hashes and
weights in memory and O(model) time once per update (`spam.daemon` says
when a worker does it).

Exactness: every weight, prior, record entry and count is what the model
built by replaying the journal has, bit for bit (tests/store/test_journal_view.py:
predictions, explanations, the update a learn computes from the view,
model ids, for every event model a view covers).

What gets a view (`viewable`): a plain multinomial or complement model (not
EM's, not mixture components; complement without idf or weight_norm,
whose every weight moves with each document) with a positive pseudo-count,
whose journal's updates all kept its classes (and carry its tables).
Others are built by replaying (`store.modelfile.load`). Commands that
work on the whole model (info, dump, merge, prune, calibrate, compact,
eval --online) read it built; so does learning a model whose change must
be built (`whole`). A view's model id (`store.payload.model_id`) comes
from its term sum (`terms`): the model file's stored sum, moved by each
update as it is laid over the view (O(the update)), or carried by a
journal checkpoint; where the file has none, the base's sum is taken once
per process (O(model), as a built model's id) less the digests of the
base's terms the layers changed plus theirs as changed (`changed_terms`).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import numpy as np

from nbcli.nb.counts import Counts, Update, by_source, found_in, gather_texts, merged_distinct, sorted_distinct
from nbcli.nb.layers import Layer, settled_columns
from nbcli.nb.record import Record, record_after
from nbcli.nb.scoring import TextScoring
from nbcli.nb.smoothing import ExactTotals, pseudo_count
from nbcli.nb.term_digests import moved, term_sum
from nbcli.nb.updates import last_images, last_images_texts_later, replay
from nbcli.text.analyzer import Analyzer
from nbcli.text.sources import batches
from nbcli.text.vectorize import Vocabulary, distinct_inverse, known_counts

# A lookup searches each layer (a TELL's update, and each CHECK, looks up its terms in every one):
# fewer layers, faster lookups; a merge costs the two layers' terms, after the TELL's reply.
# With ratio 4, a daemon past 1,000 TELLs of ~200 terms keeps 3-5 layers (measured: docs/benchmarks.md).
MAX_LAYERS = 8
LAYER_RATIO = 4
_BASE, _UNKNOWN = -1, -2  # where a term's values are: the base, or nowhere (else a layer's index)
_NONE = np.zeros(0, dtype=np.uint64)


def source_of(model) -> str:
    """The table a view's totals (its weights' normalisers) are sums of:
    complement's transformed sums where it keeps them, else the term counts."""
    return "fit" if model.kind == "complement" and getattr(model, "fit_count", None) is not None else "tf"


def viewable(classifier, updates: list[Update]) -> bool:
    """Whether `classifier` (a model file's, as read, or a view) with
    `updates` laid over it can be a JournalView (see the module docstring)."""
    base: Any = classifier.base if isinstance(classifier, JournalView) else classifier
    model: Any = getattr(base, "model", None)
    kind = getattr(model, "kind", None)  # a table model's is "table"
    if kind not in ("multinomial", "complement") or base.meta.get("components"):
        return False
    if getattr(base, "expected", None) is not None or not len(base.vocabulary):
        return False
    if kind == "complement" and (model.idf is not None or model.weight_norm):
        return False  # every term's weight moves with each document
    if pseudo_count(model.beta(len(base.vocabulary)), model.estimate) <= 0:
        return False
    fit = kind == "complement" and model.fit_count is not None
    df = model.doc_freq is not None  # an update lacking a table the model has is a crafted one: replaying refuses it
    return all(
        list(u.image.classes) == list(model.classes)
        and (not fit or u.image.fit is not None)
        and (not df or u.image.df is not None)
        for u in updates
    )


def viewed(classifier, updates: list[Update], checkpoint: bool = False) -> JournalView | None:
    """`classifier` (a model file's, as read) with `updates` (its journal's)
    laid over it, or None where it cannot be a view (`viewable`).
    checkpoint: updates[0] is a journal's checkpoint, laid as a layer of
    its own, as it is (no copy of its terms gathered with the others'), with
    the totals it carries where it does (`JournalView.checkpointed`), and
    the records after it as one layer over it, not merged into it."""
    if not viewable(classifier, updates):
        return None
    if checkpoint and updates[0].totals is not None:  # its totals as the writer's view had them: no pass
        carried = JournalView.checkpointed(classifier, updates[0], updates[0].totals)
        return carried if len(updates) == 1 else carried.plus(updates[1:], merge=False)
    view = JournalView(classifier, [], _record_of(classifier), classifier.meta)
    view.carried_terms = getattr(classifier, "term_sum", None)  # the file's: moved along by each layer (`plus`)
    if checkpoint and len(updates) > 1:
        first = view.plus(updates[:1])
        return None if first is None else first.plus(updates[1:], merge=False)
    return view.plus(updates)


def _record_of(classifier) -> Record:
    return classifier.record if classifier.record is not None else Record.empty()


class JournalView(TextScoring):
    """The classifier of model file `base` with layers of updated terms over
    it (see the module docstring); record and meta, the model's after the
    updates; totals (ExactTotals of the weights' source table: complement's
    transformed sums where it has them, else the term counts) and n_terms,
    the model's. Its event model has the classes, documents per class and
    settings, and no table (weights None): `scoring` derives one over a
    batch's terms."""

    def __init__(self, base: Any, layers: list[Layer], record: Record, meta: dict, state=None):
        self.base, self.layers = base, layers
        model = base.model
        self.source = source_of(model)
        if state is None:  # no layers yet: the base's totals, one pass over its table
            state = (ExactTotals.of(self._base_table(self.source)), len(base.vocabulary))
        self.totals, self.n_terms = state
        class_count = np.asarray(layers[-1].top.class_count if layers else model.class_count, dtype=np.float64)
        settings = {**model.settings(), "doc_freq": None}
        if model.kind == "complement":
            settings["fit_count"] = None
        view_model = type(model)(model.classes, class_count, None, tables=(None, None, None, None), **settings)
        view_model.log_prior = view_model._log_prior()
        view_model.bias = np.zeros(len(model.classes))
        view_model.unknown_weight = (
            view_model.unknown_of(self.totals.floats(), self.n_terms)
            if model.kind == "multinomial"
            else np.zeros(len(model.classes))
        )
        super().__init__(view_model, meta, base.calibration)
        self.analyzer_options = base.analyzer_options
        self.vocabulary = range(self.n_terms)  # its len() is the model's; a batch's terms: `scoring`
        self.record, self.last_seen, self.expected = record, None, None
        self._analyzer: Analyzer | None = None
        self.mail_docs = int(layers[-1].top.mail_docs) if layers else int(base.meta.get("mail_documents", 0))
        self.known_id: str | None = None  # its model id, once `store.payload.model_id` computed it
        # its term sum (`terms`), once known: carried by a journal checkpoint, taken, or moved along
        self.carried_terms: tuple[int, int] | None = None
        # or, until asked (`terms`), the view below, the layer laid over it and where the layer's terms
        # are in the view below (`plus`)
        self.terms_from: tuple[JournalView, Layer, tuple | None] | None = None
        self.flat: _Flat | None = None  # every term's weights, once derived (`flatten`)
        self.scored_unflat = 0  # documents scored through the layers since the view was made

    batches = staticmethod(batches)

    @property
    def analyzer(self) -> Analyzer:
        if self._analyzer is None:
            self._analyzer = Analyzer(self.analyzer_options)
        return self._analyzer

    def _base_table(self, name: str):
        model = self.base.model
        return {"tf": model.feature_count, "df": model.doc_freq, "fit": getattr(model, "fit_count", None)}[name]

    # -- a copy with other options ----------------------------------------------------

    def _copy(self, **changes) -> JournalView:
        out = copy.copy(self)
        out._analyzer = None
        out.known_id = None  # the id covers the options and the calibration
        for name, value in changes.items():
            setattr(out, name, value)
        return out

    def with_message_cap(self, max_message_bytes: int | None) -> JournalView:
        if max_message_bytes is None:
            return self
        options = dataclasses.replace(self.analyzer_options, max_message_bytes=max_message_bytes)
        return self._copy(analyzer_options=options)

    def uncalibrated(self) -> JournalView:
        return self if self.calibration is None else self._copy(calibration=None)

    # -- where a term's values are ----------------------------------------------------

    def _where(self, hashes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For distinct `hashes`: which the model has (bool), and for those,
        where their values are (a layer's index, or _BASE) and the column
        there. The newest layer having a term decides."""
        n = len(hashes)
        src = np.full(n, _UNKNOWN - 1, dtype=np.int64)  # not found yet
        cols = np.zeros(n, dtype=np.int64)
        for k in range(len(self.layers) - 1, -1, -1):
            pending = np.flatnonzero(src == _UNKNOWN - 1)
            layer = self.layers[k]
            if not len(pending) or not len(layer.hashes):
                continue
            pos, hit = found_in(layer.hashes, hashes[pending])
            found, at = pending[hit], pos[hit]
            src[found] = np.where(layer.alive[at], k, _UNKNOWN)
            cols[found] = at
        pending = np.flatnonzero(src == _UNKNOWN - 1)
        if len(pending):
            # a binary search of the base's sorted hashes, never `Vocabulary.lookup`'s hash table,
            # which a view's many touched terms would have built over the whole vocabulary
            base = self.base.vocabulary.hashes
            col, found = found_in(base, hashes[pending])
            src[pending] = np.where(found, _BASE, _UNKNOWN)
            cols[pending] = col
        known = src != _UNKNOWN
        return known, src[known], cols[known]

    def _parts(self, src: np.ndarray) -> list[tuple[int, np.ndarray]]:
        """[(where: _BASE or a layer's index, the positions k of the terms
        whose src is it)], for the gathers of the same terms' tables."""
        return [(where - 1, mine) for where, mine in by_source(src + 1, len(self.layers) + 1)]

    def _gather(self, name: str, src: np.ndarray, cols: np.ndarray, parts=None) -> np.ndarray | None:
        """(C, k) values of table `name` ('tf', 'df' or 'fit') of the terms
        at (src, cols); parts: `_parts(src)`, if made already."""
        below = self._base_table(name)
        if below is None or any(layer.table(name) is None for layer in self.layers):
            return None
        below = np.asarray(below)
        dtype = np.result_type(below.dtype, *[layer.table(name).dtype for layer in self.layers])
        out = np.empty((len(self.classes), len(cols)), dtype=dtype)
        for where, mine in self._parts(src) if parts is None else parts:
            table = below if where == _BASE else self.layers[where].table(name)
            # np.take: a C-order copy; table[:, idx] makes an F-order one, and every pass over it is slower
            out[:, mine] = np.take(table, cols[mine], axis=1)
        return out

    def _counts(self, name: str, src: np.ndarray, cols: np.ndarray, parts=None) -> np.ndarray:
        """`_gather` of a table every view has (its term counts, and the
        weights' source table)."""
        values = self._gather(name, src, cols, parts)
        if values is None:
            raise ValueError(f"the model has no {name} table")
        return values

    def _texts(self, src: np.ndarray, cols: np.ndarray):
        base = self.base.vocabulary
        sources = [(np.asarray(base.blob, dtype=np.uint8), np.asarray(base.offsets, dtype=np.int64))]
        sources += [(layer.counts().blob, layer.counts().offsets) for layer in self.layers]
        return gather_texts(sources, src + 1, cols)

    # -- scoring and learning ---------------------------------------------------------

    def scoring(self, docs: list, kinds: list[str] | None = None):
        """The documents' counts over their own terms, and the model and
        vocabulary of those terms (`Classifier.scoring`); once flattened,
        over every term, as a model file's classifier scores."""
        batch = self.analyzer.analyze(docs, kinds)
        local = copy.copy(self.model)
        if self.flat is not None:
            local.weights = self.flat.weights
            return known_counts(batch, self.flat.lookup(batch.hashes), len(self.flat.hashes)), local, self.flat
        self.scored_unflat += batch.n_docs
        distinct, inverse = distinct_inverse(batch.hashes)
        known, src, cols = self._where(distinct)
        ids = np.full(len(distinct), -1, dtype=np.int64)
        ids[known] = np.arange(len(cols))
        X = known_counts(batch, ids[inverse], len(cols))
        local.weights = self.model.column_weights(self._counts(self.source, src, cols), self.totals, self.n_terms)
        vocabulary = _LazyVocabulary(distinct[known], lambda: self._texts(src, cols))
        return X, local, vocabulary

    def flatten(self, release=None) -> None:
        """Derive every term's weights once (`flat`), so that `scoring` is a
        model file's: one search per token in one array of hashes, and the
        weights read, not derived per batch from counts in layers. The
        scores are the same to the bit: each term's weight is computed as
        the layers' path computes it (`column_weights`, elementwise, from
        the same counts and totals), and a document's terms keep their
        order. Costs O(model) time and the memory of a model file's table
        (hashes and weights); the base is read a chunk at a time, and
        release(array) (`store.integrity.release_pages`) is called on each
        chunk of the base's hashes and table once read. A view made by an
        update (`plus`) starts without it. For a reader that scores many
        documents between updates (a daemon's worker: `spam.daemon`)."""
        if self.flat is not None:
            return
        base = np.asarray(self.base.vocabulary.hashes)
        touched = merged_distinct([layer.hashes for layer in self.layers])
        known, src, cols = self._where(touched)
        news = touched[known]  # the layers' terms the model has, ascending
        pos, in_base = found_in(base, touched)
        keep = np.ones(len(base), dtype=bool)
        keep[pos[in_base]] = False  # base columns a layer decides
        del touched, pos, in_base
        n = int(keep.sum()) + len(news)
        if n != self.n_terms:
            raise ValueError(f"a view of {self.n_terms} terms flattened to {n}")
        hashes = np.empty(n, dtype=np.uint64)
        weights = np.empty((n, len(self.classes)), dtype=np.float64)
        # the two ascending runs merged: a new term's row is its rank plus the base's kept terms below it
        is_new = np.zeros(n, dtype=bool)
        at = np.arange(len(news)) + _kept_below(keep, np.searchsorted(base, news))
        is_new[at] = True
        hashes[at] = news
        step = max(_FLAT_CHUNK, n // _FLAT_STEPS)
        for start in range(0, len(news), step):
            part = slice(start, start + step)
            counts = self._counts(self.source, src[part], cols[part])
            weights[at[part]] = self.model.column_weights(counts, self.totals, self.n_terms)
        del news, src, cols, at
        index = np.int32 if n < 1 << 31 else np.int64
        kept, rows = np.flatnonzero(keep).astype(index), np.flatnonzero(~is_new).astype(index)
        del keep, is_new
        table = np.asarray(self._base_table(self.source))
        for start in range(0, len(kept), step):
            mine, into = kept[start : start + step], rows[start : start + step]
            hashes[into] = base[mine]
            weights[into] = self.model.column_weights(table[:, mine], self.totals, self.n_terms)
            if release is not None:
                first, last = int(mine[0]), int(mine[-1]) + 1
                release(base[first:last])
                for row in table:
                    release(row[first:last])
        self.flat = _Flat(self, hashes, weights)

    def counts_of_terms(self, hashes: np.ndarray, texts: bool = True) -> Counts:
        """`Counts.of_terms` of the model the view is: the counts of the terms
        of `hashes` it has, with its classes, totals and record (texts
        False: every text empty)."""
        want = sorted_distinct(np.asarray(hashes, dtype=np.uint64))
        known, src, cols = self._where(want)
        base = self.base
        parts = self._parts(src)
        last_seen = np.empty(len(cols), dtype=np.int32)
        for where, mine in parts:
            if where != _BASE:
                last_seen[mine] = self.layers[where].top.last_seen[cols[mine]]
            elif base.last_seen is None:
                from nbcli.nb.counts import _creation_day

                last_seen[mine] = _creation_day(base)
            else:
                last_seen[mine] = np.asarray(base.last_seen, dtype=np.int32)[cols[mine]]
        blob, offsets = self._texts(src, cols) if texts else (np.zeros(0, np.uint8), np.zeros(len(cols) + 1, np.int64))
        model = base.model
        transformed = model.kind == "complement" and (model.tf_log or model.length_norm)
        tf, df = self._counts("tf", src, cols, parts), self._gather("df", src, cols, parts)
        fit = self._gather("fit", src, cols, parts) if transformed else None
        return Counts(
            list(self.classes),
            np.asarray(self.model.class_count, dtype=np.float64).copy(),
            want[known],
            blob,
            offsets,
            tf.astype(np.int64) if tf.dtype.kind in "iu" or np.array_equal(tf, np.round(tf)) else tf.astype(float),
            None if df is None else df.astype(np.float64).astype(np.int64),
            fit.astype(np.float64) if transformed and fit is not None else None,
            last_seen,
            _record_of(self),
            self.mail_docs,
        )

    # -- more updates -----------------------------------------------------------------

    def plus(self, updates: list[Update], merge: bool = True) -> JournalView | None:
        """This view with `updates` (made from it, in order) laid over it, in
        O(the updates' terms): one more layer, the totals moved by the
        difference between its terms' old and new values, and so is its term
        sum where it is known (`terms`). None when an update changes the
        classes (read the model again). The base is shared. merge False: no
        merge of layers by size (MAX_LAYERS still holds)."""
        if not viewable(self, updates):
            return None
        top, texts = last_images_texts_later(updates)  # the texts gathered when read (explanations)
        inherited = [u.image.hashes[u.inherited] for u in updates if u.inherited is not None and u.inherited.any()]
        if inherited:  # terms whose texts are this view's (`nb.deltas.resolved`, texts_later): taken from it then
            texts = self._lightened()._texts_with(top, texts, sorted_distinct(np.concatenate(inherited)))
        layer = Layer.of(top, texts)
        where = None  # where the layer's terms are in this view: searched only where something needs it
        state = self._carried(updates, layer)
        if state is None:
            where = self._where(layer.hashes)
            state = self._moved(layer, *where)
        layers = [*self.layers, layer]
        while len(layers) > 1 and (
            len(layers) > MAX_LAYERS or (merge and len(layers[-2].hashes) <= LAYER_RATIO * len(layers[-1].hashes))
        ):
            layers[-2:] = [Layer.of(last_images([layers[-2].as_update(), layers[-1].as_update()]))]
        view = JournalView._made(self, layers, updates, state)
        if view.carried_terms is None and (self.carried_terms is not None or self.terms_from is not None):
            # the sum moved by the update's terms, when something asks for it (`terms`): a bulk
            # predict prints no model id (15-20 ms of a fresh reader's load through the 195 records
            # after a checkpoint at 1.41M terms). At most one step is left pending: a view's own
            # pending step is taken before another is laid over it (a daemon's TELLs), so no chain of
            # views is kept alive; and what is kept of this one is what `terms` reads of it (its base,
            # layers, classes' counts and sum), not its flat table (39 MB at 1.41M terms) or record.
            self.terms()
            below = self._lightened()
            # and the search of the layer's terms in it, where made, kept small (0.5 MB for 129k terms),
            # not done again: `terms` took 20 ms of a filter's load through 195 records at 1.41M terms, now 6
            view.terms_from = (below, layer, None if where is None else _compact_where(*where))
        return view

    def _moved(self, layer: Layer, known: np.ndarray, src: np.ndarray, cols: np.ndarray) -> tuple:
        """(totals, number of terms) of this view with `layer` laid over it:
        this view's less the old values of the layer's terms it has (`known`,
        at src, cols: `_where`), plus their new values where they are alive."""
        integral = self.totals.integral  # the base table's units, which the model built from it keeps
        old = ExactTotals.of(self._counts(self.source, src, cols), integral)
        # np.compress, not [:, alive]: a mask's copy is in F order, and summing it took 5.7 ms, not 2.4
        new = ExactTotals.of(np.compress(layer.alive, layer.table(self.source), axis=1), integral)
        return self.totals.minus(old).plus(new), self.n_terms - len(cols) + int(layer.alive.sum())

    def totals_state(self) -> tuple:
        """(totals, number of terms) of this view: what an update made from
        it carries (`Update.before`; `fit.learning.learn_update`)."""
        return self.totals, self.n_terms

    def _carried(self, updates: list[Update], layer: Layer) -> tuple | None:
        """(totals, number of terms) of this view with a run of several
        `updates` laid over it (`layer`, their last images), from the ones
        the run's last update carries (`Update.before`: its writer's view's,
        which the run's updates before it made of this view: every writer
        appends under the model's lock to the journal as it read it), moved
        by that update's terms alone: their values in the state it was made
        from (the newest earlier update of the run holding each, else this
        view) out, their new values in: one search of the run's terms in the
        last update's few, and of those of its terms no earlier update holds
        in this view, not of the whole run's terms in this view (4 ms against
        14 in a bulk predict's load through 150 records after a checkpoint at
        1.41M terms, 2026-11-27). None where the run is one update (its step is the run's) or
        its last carries none (written from a model read whole, or before
        records carried it). ValueError where they cannot be this model's."""
        carried = updates[-1].before
        if carried is None or len(updates) < 2:
            return None
        totals, n_terms = carried
        if (
            len(totals.units) != len(self.classes)
            or totals.integral != self.totals.integral
            or not 0 <= n_terms <= self.n_terms + len(layer.hashes)
        ):
            raise ValueError("an update's totals are not this model's")
        integral, last = totals.integral, Layer.of(last_images(updates[-1:]))
        hashes, earlier = last.hashes, [u.image for u in updates[:-1]]
        # each of the last update's terms in the earlier updates: one search of their terms end to end in its
        # (few, ascending) terms, then the newest update holding each
        ends = np.cumsum([len(image.hashes) for image in earlier], dtype=np.int64)
        every = np.concatenate([image.hashes for image in earlier])
        term = np.minimum(np.searchsorted(hashes, every), max(len(hashes) - 1, 0))
        at = np.flatnonzero(hashes[term] == every) if len(hashes) else np.zeros(0, dtype=np.int64)
        del every
        owner = np.searchsorted(ends, at, side="right")
        term = term[at]
        newest = np.lexsort((owner, term))  # by term, then update: each term's run ends at its newest holder
        newest = newest[np.append(term[newest][1:] != term[newest][:-1], True)] if len(newest) else newest
        term, owner, at = term[newest], owner[newest], at[newest]
        col = at - np.concatenate([[0], ends[:-1]])[owner]
        parts, known = [], 0
        for which, mine in by_source(owner, len(earlier)):
            values, alive = settled_columns(earlier[which], col[mine], self.source)
            parts.append(np.compress(alive, values, axis=1))
            known += int(alive.sum())
        pending = np.ones(len(hashes), dtype=bool)
        pending[term] = False
        if pending.any():  # held by no earlier update: this view's
            _, src, cols = self._where(hashes[pending])
            parts.append(self._counts(self.source, src, cols))
            known += len(cols)
        old = ExactTotals([0] * len(self.classes), integral)
        if parts:
            old = ExactTotals.of(np.concatenate(parts, axis=1), integral)
        new = ExactTotals.of(np.compress(last.alive, last.table(self.source), axis=1), integral)
        n_after = n_terms - known + int(last.alive.sum())
        if not int(layer.alive.sum()) <= n_after <= self.n_terms + len(layer.hashes):
            raise ValueError("an update's totals are not this model's")
        return totals.minus(old).plus(new), n_after

    def _lightened(self) -> JournalView:
        """A copy of this view that a view laid over it keeps (for its term sum,
        or its inherited texts): its base, layers, classes' counts and sums,
        not its flat table (39 MB at 1.41M terms), record or analyzer."""
        below = copy.copy(self)
        below.flat, below.record, below._analyzer = None, Record.empty(), None
        return below

    def _texts_with(self, top: Counts, texts, inherited: np.ndarray):
        """A function giving (blob, offsets) of the terms of `top` (a layer to
        be laid over this view; `texts`: the function that gathers its texts,
        None where top has them): those of `inherited` (ascending, all in
        top) as this view has them, the others as top's."""

        def gather():
            blob, offsets = texts() if texts is not None else (top.blob, top.offsets)
            known, src, cols = self._where(inherited)
            which = np.zeros(len(top.hashes), dtype=np.int64)
            at = np.arange(len(top.hashes), dtype=np.int64)
            mine = np.searchsorted(top.hashes, inherited)[known]
            which[mine], at[mine] = 1, np.arange(len(mine))
            return gather_texts([(blob, offsets), self._texts(src, cols)], which, at)

        return gather

    @classmethod
    def checkpointed(cls, classifier, checkpoint: Update, carried: tuple) -> JournalView:
        """`classifier` (a model file's, as read) with a journal's checkpoint
        laid over it, the totals and number of terms taken as the checkpoint
        carries them (`carried`, its `Update.totals`: the writer's view's, exact integers,
        so the same as a pass over the base and the checkpoint's terms
        gives), not computed: no search of the base for the checkpoint's
        terms, no pass over the base's table. ValueError where they cannot
        be this model's."""
        totals, n_terms = carried
        layer = Layer.of(last_images([checkpoint]))
        model = classifier.model
        table = model.fit_count if source_of(model) == "fit" else model.feature_count
        alive = int(layer.alive.sum())
        if (
            len(totals.units) != len(model.classes)
            or totals.integral != (np.asarray(table).dtype.kind in "iub")
            or not alive <= n_terms <= len(classifier.vocabulary) + alive
        ):
            raise ValueError("a checkpoint's totals are not this model's")
        return cls._made(classifier, [layer], [checkpoint], (totals, n_terms))

    @staticmethod
    def _made(below, layers: list[Layer], updates: list[Update], state) -> JournalView:
        """The view of `layers` over the base of `below` (a view, or a model
        file's classifier), `updates` the ones just laid over `below`, with
        `state` (totals, number of terms)."""
        base = below.base if isinstance(below, JournalView) else below
        classes = list(below.classes)
        record = record_after(_record_of(below), classes, updates, classes)
        view = JournalView(base, layers, record, updates[-1].meta, state)
        view.carried_terms = updates[-1].terms
        view.calibration = below.calibration
        view.analyzer_options = below.analyzer_options
        return view

    def as_checkpoint(self) -> Update:
        """The view's layers and record changes as one Update over its base:
        replaying it alone (`updates.replay`, or a view of it) gives what
        replaying every update it stands for gives (a journal's
        checkpoint record: `store.journal`). Its record changes take out
        every base entry the updates changed and add each as it ended, so
        nothing is summed twice."""
        top = self._top()
        if top is None:
            raise ValueError("a view without updates has no checkpoint")
        base_record = _record_of(self.base)
        removed, added = base_record.changes_to(_record_of(self))
        return Update(
            dataclasses.replace(top.counts(), record=added),
            list(self.classes),
            dict(self.meta),
            np.ascontiguousarray(base_record.digest[removed], dtype=np.uint64).reshape(-1, 2),
            np.asarray(base_record.label[removed], dtype=np.int32),
            self.terms(),  # None where the base file has no stored sum (written before files kept it)
            (self.totals, self.n_terms),
        )

    # -- the whole model --------------------------------------------------------------

    def _top(self) -> Layer | None:
        """The layers as one."""
        if not self.layers:
            return None
        if len(self.layers) == 1:
            return self.layers[0]
        return Layer.of(last_images([layer.as_update() for layer in self.layers]))

    def whole_counts(self) -> Counts:
        """The counts of the model the view is, whole (`updates.replay` of its
        layers over the base's counts): what `Counts.of` gives of a view, for
        work on the whole model, such as learning a model that keeps no
        journal (`fit.learning.learn`)."""
        counts = replay(Counts.of(self.base), [layer.as_update() for layer in self.layers])
        counts.record = _record_of(self)
        return counts

    def terms(self) -> tuple[int, int] | None:
        """The view's term sum (`nb.term_digests.term_sum` of the model it
        is, which its model id covers), kept once known: as a journal
        checkpoint carried it, moved along by each update laid over a view
        that knew it (`plus`: O(the update)), or taken here from its base
        file's stored sum less the digests of the base's terms the layers
        changed plus theirs as changed (`changed_terms`: O(the layers'
        terms)). None where none is known (a base file written before files
        kept their sum)."""
        if self.carried_terms is None and self.terms_from is not None:
            (below, layer, where), self.terms_from = self.terms_from, None
            start = below.terms()
            if start is not None:
                known, src, cols = where if where is not None else below._where(layer.hashes)
                before = term_sum(*below._settled(layer.hashes, known, src.astype(np.int64), cols.astype(np.int64)))
                alive = layer.alive  # the update's terms now: the layer's values (newest), settled by `Layer.of`
                df = None if layer.df is None else np.compress(alive, layer.df, axis=1)
                tf = np.compress(alive, layer.tf, axis=1)
                self.carried_terms = moved(start, before, term_sum(layer.hashes[alive], tf, df))
        if self.carried_terms is None:
            start = getattr(self.base, "term_sum", None)
            if start is None:
                return None
            old, new = self.changed_terms()
            self.carried_terms = moved(start, term_sum(*old), term_sum(*new))
        return self.carried_terms

    def changed_terms(self) -> tuple[tuple, tuple]:
        """What the model the view is differs from its base by, in
        O(the layers' terms): ((hashes, tf, df) of the base's terms the layers
        hold, as the base has them), ((hashes, tf, df) of the terms the layers
        hold that are in the model, as the view has them). df None where the
        model keeps none. What its term sum is computed from (`terms`), with
        the base's."""
        touched = merged_distinct([layer.hashes for layer in self.layers]) if self.layers else _NONE
        base = np.asarray(self.base.vocabulary.hashes, dtype=np.uint64)
        pos, in_base = found_in(base, touched)
        cols = pos[in_base]
        below_df = self._base_table("df")
        old = (
            touched[in_base],
            np.asarray(self._base_table("tf"))[:, cols],
            None if below_df is None else np.asarray(below_df)[:, cols],
        )
        return old, self._settled(touched, *self._where(touched))

    def _settled(self, hashes: np.ndarray, known: np.ndarray, src: np.ndarray, at: np.ndarray) -> tuple:
        """(hashes, tf, df) of the terms of `hashes` the view has (`known`,
        found at `src`, `at`: `_where`), as a model built at this state has
        them (`Counts.settled`): a layer's document frequencies at most the
        class's documents now; a term the base holds as the base file has it."""
        df = self._gather("df", src, at)
        if df is not None:
            layered = src != _BASE
            df[:, layered] = np.minimum(df[:, layered], np.asarray(self.model.class_count, dtype=np.float64)[:, None])
        return hashes[known], self._counts("tf", src, at), df


_FLAT_STEPS = 64  # `flatten` derives the weights in about this many steps, of at least _FLAT_CHUNK terms:
_FLAT_CHUNK = 1 << 12  # its gathers and logs stay a small share of the table it builds


def _compact_where(known: np.ndarray, src: np.ndarray, cols: np.ndarray) -> tuple:
    """`_where`'s result in fewer bytes (src: a layer's index, at most
    MAX_LAYERS, or _BASE; cols: a column of the base or a layer)."""
    wide = np.int64 if len(cols) and int(cols.max()) >= 1 << 31 else np.int32
    return known, src.astype(np.int8), cols.astype(wide)


def _kept_below(keep: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """For each of ascending `ends`, how many of keep[:end] are true."""
    dropped = np.flatnonzero(~keep)
    return ends - np.searchsorted(dropped, ends)


class _Flat(Vocabulary):
    """A flattened view's terms (`JournalView.flatten`): its hashes (a
    Vocabulary's lookup) and weights; their texts gathered from the view
    only when asked for (explanations)."""

    def __init__(self, view: JournalView, hashes: np.ndarray, weights: np.ndarray):
        super().__init__(hashes, np.zeros(0, dtype=np.uint8), np.zeros(1, dtype=np.int64))
        self.weights = weights
        self._view = view

    def terms(self, ids) -> list[str]:
        hashes = self.hashes[np.asarray(ids, dtype=np.int64)]
        distinct, inverse = distinct_inverse(hashes)
        known, src, cols = self._view._where(distinct)
        return Vocabulary(distinct, *self._view._texts(src, cols)).terms(inverse)


class _LazyVocabulary:
    """The vocabulary of a batch's terms, texts gathered only when asked for
    (explanations)."""

    def __init__(self, hashes: np.ndarray, texts):
        self.hashes = hashes
        self._texts = texts
        self._vocabulary: Vocabulary | None = None

    def __len__(self) -> int:
        return len(self.hashes)

    def terms(self, ids) -> list[str]:
        if self._vocabulary is None:
            self._vocabulary = Vocabulary(self.hashes, *self._texts())
        return self._vocabulary.terms(ids)
