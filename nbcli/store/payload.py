"""A Classifier as a model file's payload: `to_payload`, the format version
a model needs, the model's identity (`model_id`) and the plain form of a
calibration. Writing reads the classifier's attributes only, so this needs
none of the models' code (reading it back, `modelfile.from_payload`, does).
"""

from __future__ import annotations

import json
import re
import zlib

import numpy as np

from nbcli import __version__
from nbcli.nb.term_digests import term_sum
from nbcli.store.codec import FORMAT, FORMAT_VERSION
from nbcli.store.integrity import SUM_MIX, word_sum


def _plain(value):
    """Check that a metadata value holds only plain Python types; the
    value as a journal record gives it back (what JSON makes of it: lists
    for tuples, text keys)."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"not a plain value: {type(value).__name__}")


def format_version(model, calibrated: bool = False) -> int:
    """1 for a plain multinomial model (readable by older nbcli); 3 for a
    calibrated model (an older nbcli would ignore the calibration and give
    other probabilities, so it must refuse the file); else 2."""
    if calibrated:
        return FORMAT_VERSION
    plain = (
        model.kind == "multinomial"
        and model.estimate == "mean"
        and model.m_estimate is None
        and model.prior_alpha is None
        and model.alpha_per_document is None
    )
    return 1 if plain else 2


def compute_model_id(classifier) -> str:
    """A short identity of a model (6 hex digits): a digest of its counts
    (class counts, vocabulary, term counts, document frequencies), classes,
    analyzer and event-model settings. The same documents learned with the
    same options give the same identity, in any order; `nbcli filter` names
    it in its header, so a filter running another model than the one
    trained shows. The terms go in as a sum of one digest per term
    (`term_sum`), not by their place, so that a model read through its
    journal takes its base's sum less the digests of the terms its updates
    changed plus their new ones (`model_id`), O(the journal's terms)."""
    model = classifier.model
    if is_table(classifier):
        spec, arrays = model.state()
        total = zlib.crc32(json.dumps([model.classes, _plain(spec)], sort_keys=True).encode())
        if classifier.calibration is not None:
            total = zlib.crc32(json.dumps(calibration_state(classifier.calibration), sort_keys=True).encode(), total)
        if classifier.meta.get("decision"):
            total = zlib.crc32(json.dumps(_decision_identity(classifier)).encode(), total)
        for name in sorted(arrays):
            raw = np.ascontiguousarray(arrays[name]).reshape(-1).view(np.uint8)
            total = (total * SUM_MIX + word_sum(raw)) % (1 << 64)
        return f"{(total ^ (total >> 32)) & 0xFFFFFF:06x}"
    return _identity(_settings(classifier), model.class_count, _own_terms(classifier))


def _own_terms(classifier) -> tuple[int, int]:
    """`term_sum` of a (text) classifier's own vocabulary and tables."""
    model = classifier.model
    return term_sum(classifier.vocabulary.hashes, model.feature_count, model.doc_freq)


def _settings(classifier) -> list:
    """What of a (text) model's settings its id covers."""
    model = classifier.model
    settings = [model.classes, classifier.analyzer_options.to_dict(), _plain(model.spec())]
    if classifier.calibration is not None:  # a calibrated model gives other probabilities: another identity
        settings.append(calibration_state(classifier.calibration))
    if classifier.meta.get("decision"):  # a threshold gives other decisions: another identity (not without one)
        settings.append(_decision_identity(classifier))
    return settings


def _identity(settings: list, class_count, terms: tuple[int, int]) -> str:
    """The model id of settings, documents per class and (`term_sum`) terms."""
    total = zlib.crc32(json.dumps(settings, sort_keys=True).encode())
    raw = np.ascontiguousarray(np.asarray(class_count, dtype=np.float64)).reshape(-1).view(np.uint8)
    total = (total * SUM_MIX + word_sum(raw)) % (1 << 64)
    for part in terms:
        total = (total * SUM_MIX + part) % (1 << 64)
    return f"{(total ^ (total >> 32)) & 0xFFFFFF:06x}"


def _decision_identity(classifier) -> list:
    """What of a decision threshold (`fit.deciding`) the model id covers."""
    decision = classifier.meta["decision"]
    return [decision["objective"], decision["positive"], float(decision["threshold"])]


def _table_payload(classifier) -> dict:
    """A table model's payload: its spec under "model" (kind "table"), its
    arrays as "table_<name>" (see `tables.TableModel.state`)."""
    spec, arrays = classifier.model.state()
    extra: dict[str, object] = {f"table_{name}": np.ascontiguousarray(a) for name, a in arrays.items()}
    if classifier.calibration is not None:
        extra["calibration"] = calibration_state(classifier.calibration)
    extra["model_id"] = compute_model_id(classifier)
    return {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "nbcli_version": __version__,
        "classes": list(classifier.classes),
        "model": _plain(spec),
        "meta": _plain(classifier.meta),
        "class_count": np.ascontiguousarray(classifier.model.class_count, dtype=np.float64),
        **extra,
    }


def is_table(classifier) -> bool:
    return getattr(classifier.model, "kind", None) == "table"


def to_payload(classifier) -> dict:
    if is_table(classifier):
        return _table_payload(classifier)
    model, vocab = classifier.model, classifier.vocabulary
    extra = {}
    if classifier.record is not None:
        extra.update(classifier.record.arrays())
    if classifier.last_seen is not None:
        extra["term_last_seen"] = np.ascontiguousarray(classifier.last_seen, dtype=np.int32)
    if classifier.calibration is not None:
        extra["calibration"] = calibration_state(classifier.calibration)
    if getattr(classifier, "expected", None) is not None:
        extra["em_count"] = np.ascontiguousarray(classifier.expected[0], dtype=np.float64)
        extra["em_docs"] = np.ascontiguousarray(classifier.expected[1], dtype=np.float64)
    terms = _own_terms(classifier)
    extra["term_sum"] = f"{terms[0]:016x}/{terms[1]}"  # for the id of the model read through a journal
    extra["model_id"] = _identity(_settings(classifier), model.class_count, terms)
    return {
        "format": FORMAT,  # first: nbcli recognises its files by it (sources._nbcli_file)
        "format_version": format_version(model, classifier.calibration is not None),
        "nbcli_version": __version__,
        "classes": list(model.classes),
        "model": _plain(model.spec()),
        "analyzer": _plain(classifier.analyzer_options.to_dict()),
        "meta": _plain(classifier.meta),
        "class_count": np.ascontiguousarray(model.class_count, dtype=np.float64),
        "feature_count": np.ascontiguousarray(model.feature_count),
        "doc_freq": None if model.doc_freq is None else np.ascontiguousarray(model.doc_freq),
        "vocab_hashes": np.ascontiguousarray(vocab.hashes, dtype=np.uint64),
        "vocab_blob": np.ascontiguousarray(vocab.blob, dtype=np.uint8),
        "vocab_offsets": np.ascontiguousarray(vocab.offsets, dtype=np.int64),
        "log_prior": np.ascontiguousarray(model.log_prior, dtype=np.float64),
        "weights": np.ascontiguousarray(model.weights, dtype=np.float64),
        "bias": np.ascontiguousarray(model.bias, dtype=np.float64),
        "unknown_weight": np.ascontiguousarray(model.unknown_weight, dtype=np.float64),
        "idf": None if getattr(model, "idf", None) is None else np.ascontiguousarray(model.idf, dtype=np.float64),
        "fit_count": None
        if getattr(model, "fit_count", None) is None
        else np.ascontiguousarray(model.fit_count, dtype=np.float64),
        **extra,
    }


def calibration_state(calibration) -> dict:
    """A Calibration's state with plain lists for its (small) arrays."""
    state = calibration.state()
    return {
        **_plain({k: v for k, v in state.items() if k != "params"}),
        "params": {name: np.asarray(value).tolist() for name, value in state["params"].items()},
    }


def payload_bytes(payload: dict) -> int:
    """About how many bytes `write_payload` writes for `payload`: its arrays'
    bytes and their records, and the plain values (a bound to check before
    writing, within a few KB)."""
    arrays = [v for v in payload.values() if isinstance(v, np.ndarray)]
    plain = {k: v for k, v in payload.items() if not isinstance(v, np.ndarray)}
    size = sum(a.nbytes + 256 for a in arrays)
    return size + len(json.dumps(plain, default=repr))


def stored_notes(p: dict, n_terms: int) -> dict:
    """What a model file's payload `p` says of its model's identity, kept on
    the model read from it: its model id as written ("stored_model_id"),
    and the sum of term digests it came from ("term_sum", which a view's id
    starts from; files written before it have none, and it is then taken
    when asked for), where they are well formed and fit its n_terms."""
    notes: dict[str, object] = {}
    stored_id = p.get("model_id")
    if isinstance(stored_id, str) and re.fullmatch(r"[0-9a-f]{6}", stored_id):
        notes["stored_model_id"] = stored_id
    terms = p.get("term_sum")
    found = re.fullmatch(r"([0-9a-f]{16})/([0-9]{1,12})", terms) if isinstance(terms, str) else None
    if found and int(found[2]) == n_terms:
        notes["term_sum"] = (int(found[1], 16), int(found[2]))
    return notes


def model_id(classifier) -> str:
    """`compute_model_id` of a classifier, as stored in its file when it has
    one; of a model read through its journal (`nb.overlay.JournalView`),
    computed once per state and kept on it, from its term sum
    (`JournalView.terms`: O(the terms changed since a state whose sum it
    knows); a base file written before files stored their sum has it taken
    here, once per base, O(model))."""
    stored = getattr(classifier, "stored_model_id", None)
    if stored:
        return stored
    if getattr(classifier, "changed_terms", None) is None:
        return compute_model_id(classifier)
    if classifier.known_id is None:
        terms = classifier.terms()
        if terms is None:
            setattr(classifier.base, "term_sum", _own_terms(classifier.base))  # noqa: B010
            terms = classifier.terms()
        classifier.known_id = _identity(_settings(classifier), classifier.model.class_count, terms)
    return classifier.known_id
