"""Saving and loading model files: a Classifier from a model file's payload
(`from_payload`), every invariant checked; `load` and `save` (a dump's
text becomes a model in `store.dumped`).

The file itself is the lower modules' business: its bytes `codec`, the
checked read and the atomic, locked write `integrity`, the payload of a
Classifier `payload` (see the package docstring for why the store is cut
so). This module builds the models, so it sits at the top of the store
package, and it is the model file as the rest of nbcli sees it: it also
offers the lower modules' names they use (`__all__`: `read_payload`,
`write_payload`, `locked`, `check_writable`, `to_payload`, `model_id`,
`payload_bytes`, `FORMAT_VERSION`), so `modelfile.load`,
`modelfile.locked` and `modelfile.write_payload` stay one import.

Damage and crafted files: `read_payload` refuses a file whose checksum or
structure is wrong; a checksum is no defence against a crafted file, so
every load also checks the model's invariants (`from_payload`): shapes,
finite and bounded tables, non-negative counts, an ascending vocabulary,
valid analyzer settings and class names. All of them are one vectorised
pass over each array; see docs/guide/model-file.md for what they
cost.
"""

from __future__ import annotations

import math
import os

import numpy as np

from nbcli.errors import ModelFileError, NbcliError
from nbcli.store import journal
from nbcli.store.checks import (
    MAX_COUNT,
    TABLE_LIMIT,
    Corrupt,
    array_of,
    classes_of,
    days_within,
    meta_of,
    number,
    terms_of,
    within,
)
from nbcli.store.codec import FORMAT_VERSION, dump_payload
from nbcli.store.integrity import (
    CHECKSUM_KEY,
    check_writable,
    locked,
    read_payload,
    release_pages,
    target,
    with_checksum,
    write_payload,
)
from nbcli.store.journal_updates import (
    can_checkpoint,
    checkpoint_due,
    checkpoint_record,
    compaction_due,
    encoded,
    remember,
    update_record,
    wrote,
)
from nbcli.store.payload import model_id, payload_bytes, stored_notes, to_payload

__all__ = [
    "FORMAT_VERSION",
    "calibration_of",
    "check_writable",
    "append_update",
    "compact",
    "from_payload",
    "keeps_journal",
    "load",
    "locked",
    "model_id",
    "payload_bytes",
    "read_payload",
    "save",
    "settings_of",
    "to_payload",
    "update_record",
    "write_payload",
]

_MAX_CALIBRATION_TABLE = 1 << 20  # numbers in one calibration parameter (an isotonic table is a few hundred)


def _settings(spec, classes: list) -> dict:
    """The event model's settings from the payload's `model`, type- and
    range-checked as `nbcli train` checks its options."""
    from nbcli.nb.event_models import UNKNOWN_TERMS
    from nbcli.nb.smoothing import ESTIMATES, MAX_PSEUDO_COUNT

    prior = spec.get("prior", "fit")
    if isinstance(prior, dict):
        if sorted(prior) != sorted(classes):
            raise Corrupt("model", "has prior weights for other classes than the model's")
        for name in classes:
            number(prior, name, None, 0.0, MAX_PSEUDO_COUNT, above=True)
    elif prior not in ("fit", "uniform"):
        raise Corrupt("model", "has a bad prior")
    unknown, estimate = spec.get("unknown", "skip"), spec.get("estimate", "mean")
    if not (isinstance(unknown, str) and unknown in UNKNOWN_TERMS):
        raise Corrupt("model", "has a bad unknown-term rule")
    if not (isinstance(estimate, str) and estimate in ESTIMATES):
        raise Corrupt("model", "has a bad estimate")
    m_estimate = spec.get("m_estimate")
    if m_estimate is not None:
        if not (isinstance(m_estimate, list) and len(m_estimate) == 2):
            raise Corrupt("model", "has a bad m_estimate")
        pair = {"M": m_estimate[0], "P": m_estimate[1]}
        m_estimate = [
            number(pair, "M", None, 0.0, MAX_PSEUDO_COUNT, above=True),
            number(pair, "P", None, 0.0, 1.0, above=True),
        ]
        if m_estimate[0] is None or m_estimate[1] == 1.0:
            raise Corrupt("model", "has a bad m_estimate")
    for flag in ("tf_log", "idf", "length_norm", "weight_norm"):
        if type(spec.get(flag, False)) is not bool:
            raise Corrupt("model", f"has a bad {flag}")
    alpha = number(spec, "alpha", 1.0, 0.0, MAX_PSEUDO_COUNT, above=True)
    if alpha is None:  # written null: every event model has one
        raise Corrupt("model", "has a bad alpha (None)")
    return dict(
        alpha=alpha,
        prior=prior,
        unknown=unknown,
        estimate=estimate,
        m_estimate=m_estimate,
        prior_alpha=number(spec, "prior_alpha", None, 0.0, MAX_PSEUDO_COUNT),
        alpha_per_document=number(spec, "alpha_per_document", None, 0.0, MAX_PSEUDO_COUNT, above=True),
    )


def settings_of(spec, classes: list) -> dict:
    """The event model's kind and settings (EventModel keyword arguments but
    doc_freq, fit_count, idf and tables) from a `model` spec, checked as a
    model file's are (ModelFileError)."""
    from nbcli.nb.event_models import EVENT_MODELS

    try:
        if not isinstance(spec, dict) or spec.get("kind") not in EVENT_MODELS:
            raise Corrupt("model", "has no event model kind nbcli knows")
        settings = _settings(spec, classes)
        for flag in ("tf_log", "length_norm", "weight_norm"):
            if spec["kind"] == "complement":
                settings[flag] = spec.get(flag, False)
            elif spec.get(flag):
                raise Corrupt("model", f"has {flag} for a {spec['kind']} model")
    except Corrupt as exc:
        raise ModelFileError(f"bad model settings ({exc})") from None
    return {"kind": spec["kind"], **settings}


def _decision(meta: dict, classes: list[str]) -> None:
    """Check the meta's decision threshold (`fit.deciding`), if any: an
    objective, a positive class of a two-class model, a finite threshold."""
    decision = meta.get("decision")
    if decision is None:
        return
    if not isinstance(decision, dict):
        raise Corrupt("meta", "has a bad decision")
    threshold = decision.get("threshold")
    if (
        decision.get("objective") not in ("f1", "balanced")
        or len(classes) != 2
        or decision.get("positive") not in classes
        or not isinstance(threshold, int | float)
        or isinstance(threshold, bool)
        or not math.isfinite(threshold)
    ):
        raise Corrupt("meta", "has a bad decision threshold")
    for key, kinds in (("documents", (int,)), ("model_documents", (int,)), ("source", (str,))):
        if key in decision and type(decision[key]) not in kinds:
            raise Corrupt("meta", f"has a bad decision {key}")


def from_payload(p: dict, path: str = "model"):
    """Rebuild a Classifier from a payload read by `read_payload`, checking
    every invariant the rest of nbcli relies on, so that a damaged or
    crafted file is a one-line error here rather than negative counts,
    NaN scores, warnings or an internal error later."""
    from nbcli.nb.classifier import Classifier
    from nbcli.nb.event_models import EVENT_MODELS, build_event_model
    from nbcli.nb.record import Record
    from nbcli.text.analyzer import AnalyzerOptions
    from nbcli.text.vectorize import Vocabulary

    if isinstance(p.get("model"), dict) and p["model"].get("kind") == "table":
        return _table_from_payload(p, path)
    try:
        classes = classes_of(p)
        n_classes = len(classes)
        hashes, blob, offsets = terms_of(p, "vocab_")
        n_terms = len(hashes)
        class_count = within(array_of(p, "class_count", "f", (n_classes,)), "class_count", 0, MAX_COUNT)
        feature_count = within(array_of(p, "feature_count", "iuf", (n_classes, n_terms)), "feature_count", 0, MAX_COUNT)
        doc_freq = within(array_of(p, "doc_freq", "iuf", (n_classes, n_terms), optional=True), "doc_freq", 0, MAX_COUNT)
        if doc_freq is not None and n_terms and not (doc_freq <= class_count[:, None]).all():
            raise Corrupt("doc_freq", "counts more documents than the class has")
        tables = tuple(
            within(array_of(p, key, "f", shape), key, -TABLE_LIMIT, TABLE_LIMIT)
            if key != "log_prior"
            else _log_prior(array_of(p, key, "f", shape), class_count)
            for key, shape in (
                ("log_prior", (n_classes,)),
                ("weights", (n_terms, n_classes)),
                ("bias", (n_classes,)),
                ("unknown_weight", (n_classes,)),
            )
        )
        spec = p.get("model")
        if not isinstance(spec, dict):
            raise Corrupt("model")
        kind = spec.get("kind")
        if not isinstance(kind, str):
            raise Corrupt("model", "has no event model kind")
        if kind not in EVENT_MODELS:
            raise ModelFileError(
                f"{path} uses event model {kind!r}, which this nbcli does not know",
                hint="upgrade nbcli",
            )
        analyzer = p.get("analyzer")
        if not isinstance(analyzer, dict):
            raise Corrupt("analyzer")
        meta = meta_of(p.get("meta"))
        settings = _settings(spec, classes)
        settings.update(doc_freq=doc_freq, tables=tables)
        if kind == "complement":
            settings.update(
                tf_log=spec.get("tf_log", False),
                length_norm=spec.get("length_norm", False),
                weight_norm=spec.get("weight_norm", False),
                idf=within(array_of(p, "idf", "f", (n_terms,), optional=True), "idf", 0, TABLE_LIMIT),
                fit_count=within(
                    array_of(p, "fit_count", "f", (n_classes, n_terms), optional=True), "fit_count", 0, MAX_COUNT
                ),
            )
            if spec.get("idf", False) != (settings["idf"] is not None):
                raise Corrupt("idf")
        model = build_event_model(kind, classes, class_count, feature_count, **settings)
        options = AnalyzerOptions.from_dict(analyzer)
        try:
            record = Record.from_arrays(p, n_classes) if "record_digest" in p else None
        except ValueError as exc:
            raise Corrupt(str(exc)) from None
        last_seen = days_within(array_of(p, "term_last_seen", "i", (n_terms,), optional=True), "term_last_seen")
        calibration = _calibration(p, n_classes)
        _decision(meta, classes)
        expected = _expected(p, n_classes, n_terms, feature_count, class_count)
    except Corrupt as exc:
        raise ModelFileError(f"{path} is corrupt ({exc})", hint="train the model again") from None
    except (TypeError, ValueError, ArithmeticError, NbcliError) as exc:
        if isinstance(exc, ModelFileError):
            raise
        raise ModelFileError(f"{path} is corrupt ({exc})", hint="train the model again") from None
    classifier = Classifier(options, Vocabulary(hashes, blob, offsets), model, meta, record, last_seen, calibration)
    classifier.expected = expected
    _keep_stored_id(classifier, p)
    return classifier


def _keep_stored_id(classifier, p: dict) -> None:
    """`payload.stored_notes` on the loaded model (Classifier does not declare them), for `payload.model_id`."""
    for name, value in stored_notes(p, len(getattr(classifier, "vocabulary", ()))).items():
        setattr(classifier, name, value)


def _log_prior(a: np.ndarray, class_count: np.ndarray) -> np.ndarray:
    """log pi: finite and bounded, or -inf for a class without documents
    (a model being learned from nothing, or one whose class was forgotten)."""
    finite = np.isfinite(a)
    if not ((finite & (np.abs(np.where(finite, a, 0)) <= TABLE_LIMIT)) | ((a == -np.inf) & (class_count == 0))).all():
        raise Corrupt("log_prior", f"has values outside [{-TABLE_LIMIT:g}, {TABLE_LIMIT:g}]")
    return a


def load(path: str, copy: bool = False):
    """Read a Classifier from a model file (see the module docstring), with
    the updates of its journal applied (`journal`; `applied`); a model of
    several mixture components per class answers for its classes
    (`classifier.wrap_components`). copy: see `read_payload`."""
    return _load(path, copy)[0]


def load_view(path: str, copy: bool = False):
    """`load` for scoring and learning (predict, filter, eval, serve, imap,
    learn, forget): a journal's updates laid over the model file's
    classifier (`nb.overlay.JournalView`: the journal's cost, not the
    model's) where a view can be made, else built as `load` builds it."""
    return _load(path, copy, view=True)[0]


def _load(path: str, copy: bool = False, drop_bad_tail: bool = False, view: bool = False):
    """(the Classifier of model file `path` with its journal applied, the
    number of updates applied). drop_bad_tail: apply the updates before a
    corrupt one instead of refusing (`compact`); view: see `load_view`.

    The model file is read (and checked, and what a view does not read
    released) before the journal, so that the journal's buffers are not
    held while every page of the file is resident (the checksum's pass):
    the peak of a read through a journal of 1,000 updates at 1.41M terms is
    the plain read's. A compaction between the two reads renames a new
    model file in and starts a journal bound to it, which the file read
    does not own: the file's identity has changed since, and the read is
    made again (at most READ_ATTEMPTS times; then the old file alone, a
    state the model was in). Appends between them only make the state
    read newer."""
    for _ in range(READ_ATTEMPTS):
        before = _stamp_or_none(path)
        p = read_payload(path, copy)
        base = p.get(CHECKSUM_KEY)
        classifier = from_payload(p, path)
        if view:  # before the journal is read and its layers built: the load's peak is lower too
            written = journal.stamp(path)
            _release_unread(p, classifier, journaled=bool(written and base and written[1] > len(journal.header(base))))
        snapshot = journal.read(path, mapped=not copy)
        bound = snapshot.bound_to(base)
        if bound or _stamp_or_none(path) == before:
            break
    if snapshot.problem is not None and (bound or snapshot.base is None) and not drop_bad_tail:
        raise snapshot.error()
    applied = 0
    if bound and snapshot.bodies:
        read, (classifier, applied) = classifier, _with_updates(classifier, snapshot, path, view, drop_bad_tail)
        if view:  # and what laying the updates over it read of the rest (their terms' counts and texts)
            _release_unread(p, read, journaled=True)
            journal.release(snapshot)  # and of its checkpoint, where it was mapped
        remember(path, base, snapshot)
    if base is not None and getattr(classifier.model, "kind", None) != "table":
        st = os.stat(target(path))
        setattr(classifier, "journal_state", (base, snapshot.end if bound else 0, _file_stamp(st)))  # noqa: B010
    if "components" in classifier.meta:
        from nbcli.nb.classifier import wrap_components

        try:
            classifier = wrap_components(classifier)
        except NbcliError as exc:
            raise ModelFileError(f"{path} is corrupt ({exc.message})", hint="train the model again") from None
    return classifier, applied


# The arrays a reader of `load_view` reads for every message it scores: the
# vocabulary's hashes and the scoring table (the stored weights; through a
# journal, the counts the view derives its weights from, `overlay.source_of`).
# The rest of a mapped model file's tables (its terms' texts, the counts a
# learn reads for its own terms only, and under a journal the stored weights,
# which it made stale) are released once checked (`integrity.release_pages`):
# they come back from the page cache where something reads them. Measured
# on the 1.41M-term --ngrams 3 model (in-process load_view, VmRSS after it):
# 162 -> 71 MB read plain; with a journal of 1,000 updates 189 -> 108 MB, and
# the load's peak 203 -> 176 MB, since the view's layers are built after
# the release (the plain read's peak, 162 MB, is the checksum's pass over
# the whole file, before it); and 176 -> 147 MB once the journal was read
# after the file (`_load`), its buffers no longer held during that pass.
_SCORED = {"vocab_hashes", "weights", "idf", "log_prior", "bias", "unknown_weight", "class_count"}


def _release_unread(p: dict, classifier, journaled: bool) -> None:
    """Release the pages of the arrays of payload `p` a reader of
    `classifier` (`from_payload`'s) does not read for every message;
    journaled: a journal's updates are to be laid over it."""
    model = getattr(classifier, "model", None)
    if getattr(model, "kind", "table") == "table":
        return
    scored = _SCORED
    if journaled:
        from nbcli.nb.overlay import source_of

        scored = {"vocab_hashes", "idf", "class_count", "fit_count" if source_of(model) == "fit" else "feature_count"}
    for name, value in p.items():
        if isinstance(value, np.ndarray) and name not in scored:
            release_pages(value)


READ_ATTEMPTS = 3  # reads of a model file and its journal, while compactions keep replacing the file


def _stamp_or_none(path: str) -> tuple | None:
    try:
        return _file_stamp(os.stat(target(path)))
    except OSError:
        return None


def _file_stamp(st) -> tuple:
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def file_stamp(path: str) -> tuple:
    """What changes when a model is changed: its file replaced (writers
    rename a new file over it, so its inode changes) or its journal appended
    to (learn, forget: store/journal.py). learn, calibrate and `nbcli imap`
    compare the stamp taken before reading with the one under the lock."""
    return (*_file_stamp(os.stat(path)), journal.stamp(path))


def _table_from_payload(p: dict, path: str):
    """A TableClassifier from `_table_payload`'s payload, every invariant
    checked by `TableModel.from_state`."""
    from nbcli.nb.table_classifier import TableClassifier
    from nbcli.nb.tables import TableModel

    try:
        classes = classes_of(p)
        meta = meta_of(p.get("meta"))
        spec = p["model"]
        arrays = {k[len("table_") :]: v for k, v in p.items() if k.startswith("table_")}
        if any(not isinstance(a, np.ndarray) for a in arrays.values()):
            raise Corrupt("table", "has a value that is not an array")
        model = TableModel.from_state(spec, arrays)
        if list(model.classes) != classes:
            raise Corrupt("classes", "differ from the table model's")
        calibration = _calibration(p, len(classes))
        _decision(meta, classes)
    except Corrupt as exc:
        raise ModelFileError(f"{path} is corrupt ({exc})", hint="train the model again") from None
    except (TypeError, ValueError, KeyError, ArithmeticError, NbcliError) as exc:
        if isinstance(exc, ModelFileError):
            raise
        what = exc.message if isinstance(exc, NbcliError) else str(exc)
        raise ModelFileError(f"{path} is corrupt ({what})", hint="train the model again") from None
    classifier = TableClassifier(model, meta, calibration)
    _keep_stored_id(classifier, p)
    return classifier


def _expected(p: dict, n_classes: int, n_terms: int, feature_count, class_count):
    """An EM model's expected counts ("em_count" (C, V), "em_docs" (C,)):
    finite, not negative, and within the model's counts (which include
    them); None when the file has none."""
    if "em_count" not in p and "em_docs" not in p:
        return None
    tf = within(array_of(p, "em_count", "f", (n_classes, n_terms)), "em_count", 0, MAX_COUNT)
    docs = within(array_of(p, "em_docs", "f", (n_classes,)), "em_docs", 0, MAX_COUNT)
    slack = 1e-6
    if not (tf <= np.asarray(feature_count, dtype=np.float64) + slack).all() or not (docs <= class_count + slack).all():
        raise Corrupt("em_count", "exceeds the model's counts")
    return tf, docs


def calibration_of(p: dict, n_classes: int, path: str = "model"):
    """`_calibration` for other readers of a calibration state (`dump`)."""
    try:
        return _calibration(p, n_classes)
    except Corrupt as exc:
        raise ModelFileError(f"{path} is corrupt ({exc})", hint="train the model again") from None


def _calibration(p: dict, n_classes: int):
    """The payload's calibration (None: none), checked by `Calibration.from_state`."""
    state = p.get("calibration")
    if state is None:
        return None
    from nbcli.nb.calibrators import Calibration

    if not isinstance(state, dict) or not isinstance(state.get("params"), dict):
        raise Corrupt("calibration")
    params = {}
    for name, value in state["params"].items():
        if not isinstance(value, list) or len(value) > _MAX_CALIBRATION_TABLE:
            raise Corrupt("calibration", f"has a bad {name}")
        if not all(type(v) in (int, float) for v in value):
            raise Corrupt("calibration", f"has a bad {name}")
        params[name] = np.asarray(value, dtype=np.int64 if all(type(v) is int for v in value) and value else np.float64)
    try:
        return Calibration.from_state({**state, "params": params}, n_classes)
    except NbcliError as exc:
        detail = exc.message.removeprefix("the model's calibration is damaged: ")
        raise Corrupt("calibration", f"is damaged: {detail}") from None


def save(classifier, path: str, since=None) -> None:
    """Write a Classifier to `path` atomically, with its checksum.

    since: the Classifier that `classifier` was made from by one learn or
    forget (`fit.learning`, which notes the change as `classifier.update`),
    loaded from `path` under the lock the caller holds: then only the
    change is appended to the model's journal (`journal`), and the model is
    compacted (written whole, the journal emptied) once the journal passes
    three quarters of the model file or 16 MB (`COMPACT_FRACTION`), or, for
    a journal with checkpoints, once its last checkpoint does
    (`journal_updates.compaction_due`). A model file under 4 MB
    (`JOURNAL_MIN_BYTES`) is written whole instead."""
    update = getattr(classifier, "update", None)
    if update is None or not keeps_journal(since):
        _write_whole(classifier, path)
    elif _append(update, path, since)[1]:
        _write_whole(classifier, path)


def keeps_journal(classifier) -> bool:
    """Whether `classifier`, loaded from a model file, is updated through its
    journal (its file is at least JOURNAL_MIN_BYTES), so that a learn or
    forget appends an Update (`append_update`) instead of writing it whole."""
    state = getattr(classifier, "journal_state", None)
    return state is not None and state[2][2] >= JOURNAL_MIN_BYTES


def append_update(path: str, update, since) -> tuple | None:
    """Append `update` (nb/updates.py: `fit.learning.learn_update`'s, made
    from `since`, loaded from `path` under the lock the caller holds) to the
    model's journal, with `save`'s binding and checks; past the compaction
    threshold the model is compacted (`compact`), as `save` does. `since`
    must keep a journal (`keeps_journal`). Returns the journal state with
    the update (`since.journal_state` moved past it: `followed`), or None
    when it was compacted."""
    end, due = _append(update, path, since)
    if due:
        compact(path)
        return None
    base, _, base_stamp = since.journal_state
    return (base, end, base_stamp)


def followed(classifier, path: str, own=None, copy: bool = False):
    """`classifier`, read from `path` by `load_view` and kept (the daemon's
    worker), brought up to the model as it is now when only its journal
    grew, in O(the new updates). own (update, journal state): the one this
    process just appended under the lock (`append_update`); else the
    journal's records after the classifier's end. None: read it again.
    copy: as `load_view`'s (a journal started anew past the classifier's
    end is read whole: its checkpoint then read into memory, not mapped)."""

    state = getattr(classifier, "journal_state", None)
    if state is None or getattr(classifier.model, "kind", None) == "table":
        return None
    base, end, base_stamp = state
    if own is not None:
        updates, state = [own[0]], own[1]
    else:
        try:
            snapshot = journal.read(path, since=(base, end), mapped=not copy)
        except ModelFileError:  # not a journal at all (a named pipe, a device, a folder): as damage
            return None
        if snapshot.problem or not snapshot.bound_to(base) or snapshot.end < end or _stamp_or_none(path) != base_stamp:
            return None  # damaged, rebound, cut short or a new model file: read it again
        if end and not snapshot.following:  # started anew past `end` (`journal.roll`): its updates are gone
            return _from_checkpoint(classifier, path, snapshot, (base, snapshot.end, base_stamp))
        remember(path, base, snapshot)  # another writer's checkpoint: its updates are ours already
        if not snapshot.bodies:
            if snapshot.end > end:  # only a checkpoint: nothing new, but not to be read again
                setattr(classifier, "journal_state", (base, snapshot.end, base_stamp))  # noqa: B010
            return classifier
        from nbcli.store.journal_records import resolve, update_of

        try:
            updates = resolve([update_of(body) for body in snapshot.bodies], classifier, view=True)
        except (Corrupt, *_UNFIT):
            return None
        state = (base, snapshot.end, base_stamp)
    view = _followed_by(classifier, updates)
    if view is None:
        return None
    setattr(view, "journal_state", state)  # noqa: B010
    return view


def _from_checkpoint(classifier, path: str, snapshot, state):
    """The view `followed` makes when the journal was started anew past
    the end `classifier` (a view) has: the new journal's checkpoint and
    records laid over the model file's classifier the view holds, as a
    fresh `load_view` would lay them, without reading the model file
    again; None where that is not a view (read it again)."""
    base = getattr(classifier, "base", None)
    if base is None or not snapshot.starts_with_checkpoint:
        return None
    try:
        view = _with_updates(base, snapshot, path, view=True)[0]
    except ModelFileError:
        return None
    if getattr(view, "base", None) is not base:
        return None
    journal.release(snapshot)
    remember(path, state[0], snapshot)
    setattr(view, "journal_state", state)  # noqa: B010
    return view


def _followed_by(classifier, updates):
    """A view (`nb.overlay`) of `classifier` with `updates` laid over it, or None."""
    from nbcli.nb.overlay import viewed

    follow = getattr(classifier, "plus", None)
    return follow(updates) if follow is not None else viewed(classifier, updates)


def journaled_bytes(path: str, update) -> int:
    """The size a model's file and journal will have once `update` is
    appended (`append_update`), the update counted as its after-image (its
    touched terms whole, even where it is written as a smaller difference):
    the model the journal makes, over-estimated, without building it
    (spamd's --max-model-size). Earlier records written as differences count
    less than their new terms would in the model (about 25 bytes a term
    against 60-80), but only those after the last checkpoint, which holds
    every term added before it whole."""
    stamp = journal.stamp(path)
    size = len(encoded(update))
    if update.__dict__["_difference"]:  # its after-image's arrays (`update_record`'s, not made) and 1 KB
        u, arrays = update.image, [update.removed_digest, update.removed_label, *update.image.record.arrays().values()]
        arrays += [u.class_count, u.hashes, u.blob, u.offsets, u.tf, u.df, u.fit, u.last_seen]
        size = max(size, sum(np.asarray(a).nbytes for a in arrays if a is not None) + 1024)
    return os.stat(path).st_size + (stamp[1] if stamp else 0) + size


def _damage(path: str, base: str) -> None:
    """Raise the error of a damaged model file or journal (bound to `base`): a writer found them changed."""
    whole = journal.read(path)
    if whole.problem is not None and whole.bound_to(base):
        raise whole.error()
    read_payload(path)


def _append(update, path: str, since) -> tuple[int, bool]:
    """Append `update` to the journal of `path`, bound to the model file
    `since` was read from (NbcliError if another writer changed it
    meanwhile); (the journal's end after, `journal.Snapshot.end`, whether
    it is now due for compaction)."""
    base, end, base_stamp = since.journal_state
    limit = min(base_stamp[2] * COMPACT_FRACTION, COMPACT_MAX_BYTES)
    with locked(path):
        record = encoded(update)
        if end and _stamp_or_none(path) == base_stamp and not checkpoint_due(since, path, base, end + len(record)):
            try:  # the journal as `since` was read: appended to in one open, nothing decoded
                done = journal.append_at(path, base, end, record)
            except OSError as exc:
                raise NbcliError(f"cannot write {journal.path_of(path)}: {exc.strerror}; nothing was saved") from None
            if done is not None:
                return done[0], compaction_due(path, base, done[1], limit, can_checkpoint(since, base))
        snapshot = journal.read(path, since=(base, end))  # what was appended meanwhile, not the whole journal
        if _stamp_or_none(path) != base_stamp or (snapshot.end if snapshot.bound_to(base) else 0) != end:
            _damage(path, base)  # (damaged since it was read: said, as trying again would not help)
            raise NbcliError(
                f"{path} changed while the update was made (another writer); nothing was saved",
                hint="run the command again",
            )
        try:
            update_end = (snapshot.end if snapshot.bound_to(base) else len(journal.header(base))) + len(record)
            checkpoint = b""
            if checkpoint_due(since, path, base, update_end):
                view = _followed_by(since, [update])  # None: an update that changed the classes
                checkpoint = checkpoint_record(view) if view is not None else b""
            if checkpoint:  # the journal started anew: its checkpoint and what follows are all a reader needs
                end, size = journal.roll(snapshot, base, record, checkpoint)
                wrote(path, base, update_end, len(checkpoint))
            else:
                end, size = journal.append(snapshot, base, record)  # one write, one fsync
        except OSError as exc:
            raise NbcliError(f"cannot write {snapshot.path}: {exc.strerror}; nothing was saved") from None
        return end, compaction_due(path, base, size, limit, can_checkpoint(since, base))


# A journal past the lesser of these is compacted into the model, one with checkpoints once its last
# checkpoint is (journal_updates.compaction_due; docs/architecture.md, "Compaction policy")
COMPACT_FRACTION, COMPACT_MAX_BYTES = 0.75, 16 << 20
JOURNAL_MIN_BYTES = 4 << 20  # a smaller model is written whole: cheaper than every reader's replaying a journal


def _write_whole(classifier, path: str) -> None:
    """Write `classifier` over `path` and retire its journal: the new file
    carries a fresh `journal_nonce`, so its checksum disowns the old
    journal even if a crash comes before the journal is removed."""
    payload = to_payload(classifier)
    _check_tables(payload, path)
    with locked(path):
        if os.path.lexists(journal.path_of(path)):
            payload["journal_nonce"] = journal.new_nonce()
        write_payload(payload, path)
        journal.remove(path)


def write_to(classifier, fh, path: str) -> None:
    """`classifier` as a model file's bytes, into the open binary file `fh`,
    checked as `_write_whole` checks it and with its checksum: for a caller
    that places the file itself (the daemon's new per-user model, linked
    into place so that it never replaces one). `path`: where it will be,
    for an error's words."""
    payload = to_payload(classifier)
    _check_tables(payload, path)
    dump_payload(with_checksum(payload), fh)


def _check_tables(payload: dict, path: str) -> None:
    """Refuse to write tables the reader would refuse (`from_payload`: every
    entry a finite number within TABLE_LIMIT): a model whose arithmetic went
    wrong (forgetting its last documents made its prior 0/0) was written, and
    no command could read the file again. The file is left as it was."""
    for key in ("log_prior", "weights", "bias", "unknown_weight"):
        table = payload.get(key)
        if not isinstance(table, np.ndarray) or table.dtype.kind != "f":
            continue  # (a table model's payload has other keys)
        try:  # the reader's own checks
            if key == "log_prior":
                _log_prior(table, np.asarray(payload.get("class_count")))
            else:
                within(table, key, -TABLE_LIMIT, TABLE_LIMIT)
        except Corrupt as exc:
            raise NbcliError(
                f"cannot write {path}: the model would not read back ({exc}); the file is unchanged",
                hint="this is a bug in nbcli: please report what was done",
            ) from None


def compact(path: str, drop_bad_tail: bool = False) -> tuple[int, int]:
    """Write the model file `path` with its journal's updates applied and
    empty the journal, in one locked step (`nbcli compact`). Returns (the
    updates compacted, the journal's bytes before). drop_bad_tail: keep
    the updates before a corrupt one, drop the rest."""
    with locked(path):
        snapshot = journal.read(path)
        if snapshot.size == 0 and not os.path.lexists(snapshot.path):
            read_payload(path)  # its one-line error if there is no model
            return 0, 0
        classifier, applied = _load(path, drop_bad_tail=drop_bad_tail)
        if applied:
            _write_whole(classifier, path)
        else:
            journal.remove(path)
        return applied, snapshot.size


def _with_updates(classifier, snapshot, path: str, view: bool = False, drop_bad_tail: bool = False):
    """(`classifier` (a model file's) with the journal's updates applied,
    exactly as learning them one after another (`nb.updates`), the number
    of updates applied): replayed into a new model, or with view
    (`load_view`) laid over it where a `nb.overlay.JournalView` can be
    made. An update that is damaged or does not fit the model is a
    ModelFileError, unless drop_bad_tail: then the good updates before it
    are applied (`journal_records.good_updates`)."""
    from nbcli.nb.overlay import viewed
    from nbcli.store.journal_records import resolve, update_of

    updates: list = []
    try:
        for body in snapshot.bodies:
            updates.append(update_of(body))
        made = viewed(classifier, resolve(updates, classifier, True), snapshot.starts_with_checkpoint) if view else None
        return (made if made is not None else _replayed(classifier, resolve(updates, classifier))), snapshot.updates
    except Corrupt as exc:
        problem, bad = f"is corrupt ({exc})", len(updates)
    except _UNFIT as exc:
        problem, bad = f"does not fit {path} ({exc})", None
    if drop_bad_tail:
        from nbcli.store.journal_records import good_updates

        kept, counted = good_updates(path, lambda run: _applies(classifier, run))
        return (_replayed(classifier, resolve(kept, classifier)) if kept else classifier), counted
    # the updates before a bad record are kept: those it follows stand for (unknown where it is the
    # checkpoint the read started at, or where applying them failed: --drop-bad-tail finds them)
    good = (
        None
        if bad is None or (bad == 0 and snapshot.starts_with_checkpoint)
        else snapshot.updates - len(snapshot.bodies) + bad
    )
    raise ModelFileError(f"{snapshot.path} {problem}", hint=snapshot.recovery_hint(good))


_UNFIT = (TypeError, ValueError, IndexError, KeyError)  # an update that does not apply to the model


def _replayed(classifier, updates: list):
    """The model `updates` make of `classifier` (a model file's), built."""
    from nbcli.nb.classifier import classifier_like
    from nbcli.nb.counts import Counts
    from nbcli.nb.updates import replay

    counts = replay(Counts.of(classifier), updates)
    model = classifier_like(counts, classifier, updates[-1].meta)
    if all(list(u.image.classes) == list(classifier.classes) for u in updates):  # as learning keeps a calibration
        model.calibration = classifier.calibration
    return model


def _applies(classifier, updates: list) -> bool:
    """Whether `updates` (each a good record) apply to `classifier`."""
    from nbcli.store.journal_records import resolve

    try:
        if updates:
            _replayed(classifier, resolve(updates, classifier))
    except _UNFIT:
        return False
    return True
