"""Learning, forgetting and moving documents in a trained model; merging
models; pruning. Exact, because a model keeps its counts.

No I/O: documents in (already read and analysed: `analysed`), a
Classifier out; `modelfile` and the commands do the reading, locking and
writing.

A model's sufficient statistics are its `Counts` (nb/counts.py): per
class, the number of documents and each term's count (and document
frequency, when the event model needs it; complement's transformed sums,
when it has document transforms), over a vocabulary sorted by term hash,
plus the record of learned documents (`record`) and each term's
last-seen day. Learning a document adds its counts to its class;
forgetting subtracts them; the tables are then derived again from the
counts, by the same code as training. So `train A` then `learn B` is
`train A+B` (the vocabulary is sorted by hash, so the order documents
came in does not matter), and `forget B` gives `train A` back: a term
whose counts all fall to zero leaves the vocabulary.

What cannot be learned exactly is refused (`check_learnable`): a model
trained with --min-df, --max-df, --max-features or --select dropped the
counts of the terms it did not keep, and whether a term is kept depends on
all the documents; complement's idf combined with tf-log or length
normalisation mixes every document's idf into each document's transformed
sums. Pruning (`prune`) is the user's own choice to drop counts: after it,
forgetting a document learned before it subtracts only the counts that
remain, never going below zero (the model's meta says it was pruned).

Refusals name the Python parameters (errors.ParameterError; the command
line and `nbcli serve`'s TELL replies say the flags): a model's training
options by their fields (min_df, select, idf, ...), a document's class as
`labels` (Analysed.labels; --class), a new model's `classes`, and, in
create's hint, the command line's `as_spam`/`as_ham` (--spam, --ham),
which imply the classes ham,spam.
"""

from __future__ import annotations

import dataclasses
import datetime
from dataclasses import dataclass

import numpy as np

from nbcli import __version__
from nbcli.errors import NbcliError, ParameterError
from nbcli.fit import learn_one
from nbcli.fit.analysed import Analysed, check_labels
from nbcli.nb.classifier import classifier_like, classifier_of
from nbcli.nb.counts import DAY, Counts, found_in, gather_texts, merged_distinct, union_sorted
from nbcli.nb.record import Record

PRUNING_OPTIONS = (("min_df", 1), ("max_df", 1.0), ("max_features", None))


def _now_text() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")


def check_learnable(classifier, source: str = "the model") -> None:
    """Refuse, with what to do, a model that cannot be updated exactly."""
    if getattr(classifier.model, "kind", None) == "table":
        raise NbcliError(
            f"{source} is a table model, which learns from a whole table",
            hint="train it again on the table with the rows it should have",
        )
    if classifier.meta.get("components"):
        raise NbcliError(
            f"{source} has several mixture components per class, which a document's class does not choose between",
            hint="train it again with the new documents",
        )
    if (classifier.meta.get("em") or classifier.meta.get("clusters")) and getattr(classifier, "expected", None) is None:
        raise NbcliError(f"{source} was fitted by EM but keeps no expected counts apart", hint="train it again")
    options = classifier.meta.get("options", {})
    for name, default in PRUNING_OPTIONS:
        if options.get(name, default) == default:
            continue
        if classifier.meta.get("clusters"):
            # cluster restricts its vocabulary by default (min_df 2, max_df 0.5): the user gave no such option
            raise ParameterError(
                name,
                "{source} is a clustering whose vocabulary was restricted ({min_df}, {max_df}, {max_features}: "
                "cluster's defaults or yours), which kept no counts for the terms it dropped, so it cannot learn "
                "exactly",
                hint="cluster again with {min_df} 1 {max_df} 1.0 for a clustering that can learn",
                source=source,
            )
        raise ParameterError(
            name,
            f"{{source}} was trained with {{{name}}}, which kept no counts for the terms it dropped, "
            "so it cannot learn exactly",
            hint=f"train it again without {{{name}}} (and keep it small with 'nbcli prune')",
            source=source,
        )
    if options.get("select") is not None:
        raise ParameterError(
            "select",
            "{source} was trained with {select}, which kept no counts for the terms it dropped, "
            "so it cannot learn exactly",
            hint="train it again without {select}",
            source=source,
        )
    model = classifier.model
    if model.kind == "complement" and model.idf is not None and (model.tf_log or model.length_norm):
        raise ParameterError(
            "idf",
            "{source} combines {idf} with {tf_log} or {length_norm}: every new document changes the idf of "
            "all the documents' transformed counts, so it cannot learn exactly",
            hint="train it again from the corpus, or without {idf}",
            source=source,
        )


# -- the counts -------------------------------------------------------------------


# -- deciding what each document does ---------------------------------------------


@dataclass
class Outcome:
    """What learning or forgetting did, for the messages on stderr."""

    learned: int = 0
    already: int = 0
    moved: dict = dataclasses.field(default_factory=dict)  # from class -> documents
    forgotten: int = 0

    def as_dict(self) -> dict:
        return {
            "learned": self.learned,
            "already_learned": self.already,
            "moved": dict(self.moved),
            "forgotten": self.forgotten,
        }


def plan_learning(counts: Counts, docs: Analysed) -> tuple[list[tuple[int, int, int]], Record, list[int], Outcome]:
    """For each document (in order): learn it in its class, do nothing (it is
    learned there already), or move it (forget its copies in other classes,
    then learn it). Returns (changes: (document, class, weight) triples, the
    record entries to add, the record entries to remove, outcome)."""
    changes: list[tuple[int, int, int]] = []
    removed: list[int] = []
    added: dict[bytes, tuple[int, int]] = {}  # digest -> (document, class) learned in this run
    outcome = Outcome()
    index = {c: i for i, c in enumerate(counts.classes)}
    for i in range(len(docs)):
        cls = index[docs.labels[i]]
        key = docs.digest[i].tobytes()
        if key in added:
            first, where = added[key]
            if where == cls:
                outcome.already += 1
                continue
            changes.append((first, where, -1))  # learned earlier in this run, in another class
            outcome.moved[counts.classes[where]] = outcome.moved.get(counts.classes[where], 0) + 1
            changes.append((i, cls, 1))
            added[key] = (i, cls)
            continue
        found = counts.record.find(docs.digest[i])
        if len(found) and (counts.record.label[found] == cls).any():
            # learned there already; copies in other classes (train counted it in several) leave them: a move
            elsewhere = [e for e in found.tolist() if int(counts.record.label[e]) != cls]
            for entry in elsewhere:
                old = int(counts.record.label[entry])
                changes.append((i, old, -int(counts.record.copies[entry])))
                removed.append(entry)
                outcome.moved[counts.classes[old]] = outcome.moved.get(counts.classes[old], 0) + 1
            if not elsewhere:
                outcome.already += 1
            continue
        for entry in found.tolist():
            old = int(counts.record.label[entry])
            changes.append((i, old, -int(counts.record.copies[entry])))
            removed.append(entry)
            outcome.moved[counts.classes[old]] = outcome.moved.get(counts.classes[old], 0) + 1
        changes.append((i, cls, 1))
        added[key] = (i, cls)
        if not len(found):
            outcome.learned += 1
    learned = sorted(added.values())
    entries = Record.build(
        docs.digest[[d for d, _ in learned]],
        [c for _, c in learned],
        np.ones(len(learned), np.int64),
        docs.message_id[[d for d, _ in learned]],
        docs.when[[d for d, _ in learned]],
    )
    return changes, entries, removed, outcome


def plan_forgetting(counts: Counts, docs: Analysed) -> tuple[list[tuple[int, int, int]], list[int], Outcome]:
    """Forget each document from its class: all its copies there; a
    document without a label (None) from whichever class the record holds
    it in. A class the model does not have, and a document the record does
    not hold (in that class), are refused (NbcliError naming it and where it
    was learned, if anywhere), before anything changes."""
    changes, removed, done = [], [], set()
    outcome = Outcome()
    index = {c: i for i, c in enumerate(counts.classes)}
    for i in range(len(docs)):
        label = docs.labels[i]
        if label is not None and label not in index:
            raise ParameterError(
                "labels",
                "the model has no class {label} (its classes: {classes}); nothing was forgotten",
                hint="give {labels} one of them, or no {labels} to forget each document from the class it was "
                "learned in",
                label=label,
                classes=", ".join(counts.classes),
            )
        found = counts.record.find(docs.digest[i]).tolist()
        mine = found if label is None else [e for e in found if counts.record.label[e] == index[label]]
        if not mine:
            where = sorted({counts.classes[int(counts.record.label[e])] for e in found})
            said = f"it was learned as {' and '.join(where)}" if where else "the model's record does not hold it"
            as_label = "" if label is None else f" as {label}"
            raise ParameterError(
                "labels",
                "{document} was never learned{as_label} ({said}); nothing was forgotten",
                hint="use {labels} {where}" if where else "only documents learned by this model can be forgotten",
                document=_name(docs.ids[i]),
                as_label=as_label,
                said=said,
                where=where[0] if where else None,
            )
        new = [e for e in mine if e not in done]
        if not new:
            continue  # the same document twice in the input
        for entry in new:
            done.add(entry)
            changes.append((i, int(counts.record.label[entry]), -int(counts.record.copies[entry])))
            removed.append(entry)
        outcome.forgotten += 1
    left = float(np.sum(counts.class_count)) + sum(weight for _, _, weight in changes)
    if counts.expected_docs is not None:
        left += float(np.sum(counts.expected_docs))
    if changes and left <= 0:  # no document at all: its prior would be 0/0, and the model written unreadable
        raise NbcliError(
            "forgetting them would leave the model with no documents; nothing was forgotten",
            hint="a model needs at least one document: to start over, train a new one",
        )
    return changes, removed, outcome


# -- applying changes --------------------------------------------------------------


def apply(counts: Counts, docs: Analysed, changes, transforms=None) -> Counts:
    """`counts` with each (document, class, weight) change applied: weight
    times the document's counts added to the class (negative: taken away).
    Terms whose counts all become zero leave the vocabulary. transforms:
    complement's (tf_log, length_norm), to keep its transformed sums."""
    if not changes:
        return counts
    doc = np.array([c[0] for c in changes], dtype=np.int64)
    cls = np.array([c[1] for c in changes], dtype=np.int64)
    weight = np.array([c[2] for c in changes], dtype=np.int64)
    lengths = docs.doc_ptr[doc + 1] - docs.doc_ptr[doc]
    pair = np.repeat(docs.doc_ptr[doc] - np.cumsum(np.append(0, lengths[:-1])), lengths) + np.arange(lengths.sum())
    change_of_pair = np.repeat(np.arange(len(changes)), lengths)
    hashes = docs.pair_hash[pair]
    merged = union_sorted(counts.hashes, hashes)
    n_classes, n_terms = len(counts.classes), len(merged)
    old_cols = np.searchsorted(merged, counts.hashes)
    cols = np.searchsorted(merged, hashes)

    def placed(a, dtype):
        out = np.zeros((n_classes, n_terms), dtype=dtype)
        if a is not None:
            out[:, old_cols] = a
        return out

    tf = placed(counts.tf, counts.tf.dtype)
    flat = cls[change_of_pair] * n_terms + cols
    np.add.at(tf.reshape(-1), flat, docs.pair_count[pair] * weight[change_of_pair])
    df = None
    if counts.df is not None:
        df = placed(counts.df, np.int64)
        np.add.at(df.reshape(-1), flat, weight[change_of_pair])
    fit = None
    if counts.fit is not None:
        fit = placed(counts.fit, np.float64)
        values = learn_one.transformed_values(docs.pair_count[pair], change_of_pair, len(changes), transforms)
        np.add.at(fit.reshape(-1), flat, values * weight[change_of_pair])
    class_count = counts.class_count + np.bincount(cls, weights=weight, minlength=n_classes)
    last_seen = np.zeros(n_terms, dtype=np.int32)
    last_seen[old_cols] = counts.last_seen
    learned = weight[change_of_pair] > 0
    days = (docs.when[doc] // DAY).astype(np.int32)
    np.maximum.at(last_seen, cols[learned], days[change_of_pair[learned]])
    mail_docs = counts.mail_docs + int((weight * docs.mail[doc]).sum())
    blob, offsets = learn_one.with_new_texts(counts, docs, merged, old_cols)
    out = Counts(
        counts.classes,
        class_count,
        merged,
        blob,
        offsets,
        tf,
        df,
        fit,
        last_seen,
        counts.record,
        mail_docs,
        None if counts.expected_tf is None else placed(counts.expected_tf, np.float64),
        counts.expected_docs,
    )
    return out.settled()


# -- counts back to a classifier --------------------------------------------------


def rebuild(counts: Counts, template, meta: dict):
    """The Classifier of `counts`, with the analyzer and event-model settings
    of `template` (a Classifier), derived by training's own code; it keeps
    `template`'s calibration while its classes are the same."""
    rebuilt = classifier_like(counts, template, meta_after(counts, template, meta))
    if template.calibration is not None and list(rebuilt.classes) == list(template.classes):
        rebuilt.calibration = template.calibration
    return rebuilt


def meta_after(counts: Counts, template, meta: dict) -> dict:
    """The meta of the model of `counts` made from `template` by an update
    (`rebuild`; `learn_update` writes it into the journal without building
    the model): its totals and time, and `template`'s calibration and
    decision threshold noted while its classes are the same (a map per
    class cannot follow a new class: it is dropped, and said once)."""
    n_documents = int(round(float(counts.class_count.sum())))
    expected = getattr(template, "expected", None)
    if expected is not None and isinstance(template.meta.get("n_documents"), int):
        # EM's model (train --unlabeled, a clustering): counts.class_count holds the documents learned, not the
        # unlabelled ones' expected share; n_documents moves by the learned documents' change and keeps what the
        # model said it of its EM documents (a clustering counts the documents it clustered: learning 10 into a
        # clustering of 660 said 10)
        before = float(np.sum(template.model.class_count)) - float(np.sum(expected[1]))
        n_documents = template.meta["n_documents"] + int(round(float(counts.class_count.sum()) - before))
    meta = {
        **meta,
        "n_documents": n_documents,
        "mail_documents": int(counts.mail_docs),
        "updated": _now_text(),
        "nbcli_version": __version__,
    }
    same = list(counts.classes) == list(template.classes)
    if template.calibration is None:
        if (meta.get("calibration") or {}).get("dropped"):  # said once, when it was dropped
            meta = {k: v for k, v in meta.items() if k != "calibration"}
    elif not same:
        meta = {**meta, "calibration": {"dropped": "the model's classes changed"}}
    if "decision" in meta and not same:  # chosen for these classes (`deciding`)
        meta = {k: v for k, v in meta.items() if k != "decision"}
    return meta


def _transforms(classifier):
    model = classifier.model
    if model.kind == "complement":
        return (model.tf_log, model.length_norm)
    return None


def new_classes(classifier, docs: Analysed) -> list[str]:
    """The classes of the documents that the model does not have."""
    return sorted(set(docs.labels) - set(classifier.classes) - {None})


def learn(classifier, docs: Analysed) -> tuple[object, Outcome]:
    """`classifier` having learned the analysed documents, each in its label's
    class (new classes are added: the commands refuse them unless asked,
    see `new_classes`; the model's meta keeps them as `added_classes`, so
    that forgetting their last document takes them out again), and what
    happened."""
    check_learnable(classifier)
    check_labels(new_classes(classifier, docs))
    counts = Counts.of(classifier).with_classes(set(docs.labels))
    changes, entries, removed, outcome = plan_learning(counts, docs)
    updated = apply(counts, docs, changes, _transforms(classifier))
    updated.record = counts.record.without(removed).plus(entries)
    if not changes:
        return classifier, outcome
    meta = _learned_meta(classifier, docs)
    return _noted(rebuild(updated, classifier, meta), counts, updated, docs, changes, removed, entries), outcome


def _learned_meta(classifier, docs: Analysed) -> dict:
    added = new_classes(classifier, docs)
    meta = classifier.meta
    if added:
        meta = {**meta, "added_classes": sorted(set(meta.get("added_classes", [])) | set(added))}
    return meta


def _touched(docs: Analysed, changes) -> np.ndarray:
    """The term hashes of the documents that `changes` change."""
    spans = [docs.pair_hash[docs.doc_ptr[d] : docs.doc_ptr[d + 1]] for d in sorted({c[0] for c in changes})]
    return np.concatenate(spans) if spans else np.zeros(0, np.uint64)


def _noted(rebuilt, before: Counts, after: Counts, docs: Analysed, changes, removed, entries):
    """`rebuilt`, carrying the change as an `Update` (nb/updates.py) in
    `rebuilt.update`: what `modelfile.save(..., since=)` appends to the
    model's journal instead of writing the whole model."""
    from nbcli.nb.counts import Update

    rebuilt.update = Update.of(before, after, _touched(docs, changes), removed, entries, rebuilt.meta)
    return rebuilt


def forget(classifier, docs: Analysed) -> tuple[object, Outcome]:
    """`classifier` having forgotten the analysed documents (see
    `plan_forgetting`). A class that learning added (`added_classes`) and
    that this leaves without documents goes again, so a class learned by
    mistake and forgotten leaves the model as it was."""
    counts = Counts.of(classifier)
    changes, removed, outcome = plan_forgetting(counts, docs)
    check_learnable(classifier)
    updated, meta = _forgotten(classifier, counts, docs, changes, removed)
    rebuilt = rebuild(updated, classifier, meta)
    return _noted(rebuilt, counts, updated, docs, changes, removed, Record.empty()), outcome


def _forgotten(classifier, counts: Counts, docs: Analysed, changes, removed) -> tuple[Counts, dict]:
    """(the counts after forgetting's `changes` (the record without the
    entries `removed`), without the classes learning added that they leave
    empty, and the meta before its totals)."""
    updated = apply(counts, docs, changes, _transforms(classifier))
    updated.record = counts.record.without(removed)
    meta = classifier.meta
    added = set(meta.get("added_classes", []))
    empty = {c for c, n in zip(updated.classes, updated.class_count) if c in added and n == 0}
    if empty and len(updated.classes) - len(empty) >= 2 and updated.expected_tf is None:
        updated = updated.only_classes([c for c in updated.classes if c not in empty])
        meta = {k: v for k, v in meta.items() if k != "added_classes"}
        if added - empty:
            meta["added_classes"] = sorted(added - empty)
    return updated, meta


# -- an update without the model it makes ------------------------------------------


@dataclass
class Learned:
    """What the commands say of a model after a direct update
    (`learn_update`): the parts of a Classifier that `cli.output.model_counts`
    and the calibration and decision notes read, without building it."""

    classes: list
    model: object  # .class_count
    vocabulary: range  # its len(): the terms
    meta: dict
    calibration: object
    expected = None


def learn_update(classifier, docs: Analysed, forgetting: bool = False):
    """The journal's `Update` of learning (forgetting: of forgetting) the
    analysed documents into `classifier`, computed from the counts of the
    documents' terms alone (`Counts.of_terms`), not from a new model: the
    same Update, array for array, that `learn` or `forget` notes after
    building the whole model (the same `apply`, on the same values of the
    touched columns; an update holds only those columns, the totals, the
    record's changes and the meta). Returns (Update or None when nothing
    changes, Outcome, a `Learned` or `classifier` itself when nothing
    changes), or None for a model whose counts must be read whole (EM's
    expected counts): learn it with `learn` or `forget`."""
    from nbcli.nb.counts import Update

    if getattr(classifier, "expected", None) is not None:
        return None
    if not forgetting:
        check_learnable(classifier)
        check_labels(new_classes(classifier, docs))
    counts = Counts.of_terms(classifier, docs.pair_hash)
    before = counts
    if forgetting:
        changes, removed, outcome = plan_forgetting(counts, docs)
        check_learnable(classifier)
        entries = Record.empty()
        after, meta = _forgotten(classifier, counts, docs, changes, removed)
    else:
        cls = learn_one.new_message_class(counts, docs)
        one = None if cls is None else learn_one.learned(counts, docs, cls, _transforms(classifier))
        if one is not None:  # one message new to the model (a TELL's, a learn's): in one pass
            after, entries = one
            changes, removed, outcome = [(0, cls, 1)], [], Outcome(learned=1)
        else:
            counts = counts.with_classes(set(docs.labels))
            changes, entries, removed, outcome = plan_learning(counts, docs)
            after = apply(counts, docs, changes, _transforms(classifier)) if changes else counts
        meta = _learned_meta(classifier, docs)
    if not changes:
        return None, outcome, classifier
    meta = meta_after(after, classifier, meta)
    update = Update.of(counts, after, _touched(docs, changes), removed, entries, meta)
    if list(before.classes) == list(classifier.classes) == list(after.classes):  # a difference can be written
        update.made_from = (before, classifier.meta)
        totals_state = getattr(classifier, "totals_state", None)
        if totals_state is not None:  # a view (`nb.overlay`): the totals it was made from, which its record carries
            update.before = totals_state()
    common = int(np.count_nonzero(found_in(after.hashes, counts.hashes)[1]))  # np.isin would sort both again
    left, new = len(counts.hashes) - common, len(after.hashes) - common
    same = list(after.classes) == list(classifier.classes)
    learned = Learned(
        list(after.classes),
        _ClassCounts(after.class_count),
        range(len(classifier.vocabulary) + int(new) - int(left)),
        meta,
        classifier.calibration if same else None,
    )
    return update, outcome, learned


@dataclass
class _ClassCounts:
    class_count: np.ndarray


def create(analyzer_options, options, classes: list[str], docs: Analysed):
    """A new Classifier learned from nothing: `classes` (at least two), the
    training options `options` (a TrainOptions; the mail defaults follow
    the documents learned first), then the documents."""
    from nbcli.fit.settings import described_options, model_settings, plain_prior, resolved

    if options.min_df != 1 or options.max_df != 1.0 or options.max_features is not None or options.select:
        raise ParameterError(
            "min_df",
            "a model that learns cannot prune at training time ({min_df}, {max_df}, {max_features}, {select})",
            hint="drop them; keep the model small with 'nbcli prune'",
        )
    if options.kind == "complement" and options.idf and (options.tf_log or options.length_norm):
        raise ParameterError("idf", "a model that learns cannot combine {idf} with {tf_log} or {length_norm}")
    classes = sorted(set(classes) | set(docs.labels))
    check_labels(classes)
    if not len(docs) or not len(docs.pair_hash):
        raise NbcliError(
            "no documents to start the new model with" if not len(docs) else "the documents have no terms",
            hint="give the documents to learn (a file, folder, mbox, or one message on stdin)",
        )
    if len(classes) < 2:
        raise ParameterError(
            "classes",
            "a new model needs at least two classes, and only {known} is known",
            hint="name them with {classes}, e.g. {classes:ham,spam} ({as_spam} and {as_ham} imply them)",
            known=classes[0],
        )
    mostly_mail = 2 * int(docs.mail.sum()) > len(docs) if len(docs) else analyzer_options.mail
    options, alpha, unknown = resolved(options, mostly_mail)
    settings = model_settings(options, alpha, unknown)
    transformed = options.kind == "complement" and (options.tf_log or options.length_norm)
    counts = Counts.empty(classes, options.needs_doc_freq, transformed)
    changes, entries, _, outcome = plan_learning(counts, docs)
    transforms = (options.tf_log, options.length_norm) if options.kind == "complement" else None
    updated = apply(counts, docs, changes, transforms)
    updated.record = entries
    meta = {
        "n_documents": int(round(float(updated.class_count.sum()))),
        "created": _now_text(),
        "nbcli_version": __version__,
        "options": {**described_options(options, alpha, unknown), "prior": plain_prior(settings["prior"])},
        "mail_documents": int(updated.mail_docs),
    }
    return classifier_of(updated, options.kind, settings, options.idf, analyzer_options, meta), outcome


# -- merging and pruning ------------------------------------------------------------


def _difference(a, b) -> str | None:
    """What makes two models impossible to merge, or None."""
    if a.classes != b.classes:
        return f"classes ({', '.join(a.classes)} against {', '.join(b.classes)})"
    left, right = a.analyzer_options.to_dict(), b.analyzer_options.to_dict()
    for key in sorted(set(left) | set(right)):
        if left.get(key) != right.get(key):
            return f"analyzer option {key} ({left.get(key)!r} against {right.get(key)!r})"
    left, right = a.model.spec(), b.model.spec()
    if left.get("alpha_per_document") is not None:
        del left["alpha"], right["alpha"]  # derived from the documents each model has
    for key in sorted(set(left) | set(right)):
        if left.get(key) != right.get(key):
            name = "event model" if key == "kind" else f"model option {key}"
            return f"{name} ({left.get(key)!r} against {right.get(key)!r})"
    return None


def merge(classifiers: list, names: list[str]):
    """One model holding the counts of all of `classifiers` (trained with
    the same options and classes): what training on all their documents
    gives. The records are united (a document both learned counts twice,
    as its counts do)."""
    first = classifiers[0]
    for classifier, name in zip(classifiers, names):
        if getattr(classifier.model, "kind", None) == "table":
            check_learnable(classifier, name)
        if getattr(classifier, "expected", None) is not None:
            raise NbcliError(
                f"{name} was trained by EM: its expected counts belong to that run, not to a sum of models",
                hint="train one model on all the documents",
            )
    for other, name in zip(classifiers[1:], names[1:]):
        difference = _difference(first, other)
        if difference:
            raise NbcliError(f"{names[0]} and {name} differ in {difference}", hint="merge models trained alike")
    for classifier, name in zip(classifiers, names):
        check_learnable(classifier, name)
    parts = [Counts.of(c) for c in classifiers]
    # one merge of all the models' (ascending) hashes: np.union1d hashes them (numpy 2.4: 1.8 s for 1.4M + 200k)
    hashes = merged_distinct([part.hashes for part in parts])
    n_classes, n_terms = len(first.classes), len(hashes)
    tf = np.zeros((n_classes, n_terms), dtype=np.result_type(*[p.tf.dtype for p in parts]))
    df = np.zeros((n_classes, n_terms), dtype=np.int64) if parts[0].df is not None else None
    fit = np.zeros((n_classes, n_terms)) if parts[0].fit is not None else None
    last_seen = np.zeros(n_terms, dtype=np.int32)
    which = np.full(n_terms, -1, dtype=np.int64)
    source_col = np.zeros(n_terms, dtype=np.int64)
    record = Record.empty()
    for k, part in enumerate(parts):
        cols = np.searchsorted(hashes, part.hashes)
        tf[:, cols] += part.tf
        if df is not None:
            df[:, cols] += part.df
        if fit is not None:
            fit[:, cols] += part.fit
        np.maximum.at(last_seen, cols, part.last_seen)
        first_seen = which[cols] < 0
        which[cols[first_seen]] = k
        source_col[cols[first_seen]] = np.flatnonzero(first_seen)
        record = record.plus(part.record)
    blob, offsets = gather_texts([(p.blob, p.offsets) for p in parts], which, source_col)
    counts = Counts(
        list(first.classes),
        np.sum([p.class_count for p in parts], axis=0),
        hashes,
        blob,
        offsets,
        tf,
        df,
        fit,
        last_seen,
        record,
        sum(p.mail_docs for p in parts),
    )
    merged = rebuild(counts, first, {**first.meta, "merged_from": list(names)})
    merged.meta.pop("decision", None)  # chosen on one part's held-out scores (see `deciding`)
    if merged.calibration is not None:  # fitted to one of the parts' tables, not to the sum
        merged.calibration = None
        merged.meta["calibration"] = {"dropped": "a merged model's tables are new"}
    return merged


def shared_documents(classifiers: list) -> int:
    """How many distinct documents the records of more than one of
    `classifiers` hold: `merge` counts each of them once per model, as
    training on all their corpora together would."""
    keys = [c.record.distinct_digests() for c in classifiers if c.record is not None]
    if len(keys) < 2:
        return 0
    _, seen = np.unique(np.concatenate(keys), return_counts=True)
    return int(np.count_nonzero(seen > 1))


def parse_day(text: str) -> int:
    """'YYYY-MM-DD' -> days since 1970-01-01."""
    try:
        when = datetime.datetime.strptime(text.strip(), "%Y-%m-%d").replace(tzinfo=datetime.UTC)
    except ValueError:
        bad = ParameterError(
            "unseen_since", "{unseen_since} {value!r} is not a date", hint="write it as YYYY-MM-DD", value=text
        )
        bad.exit_code = 2  # a bad option value: a usage error (docs/guide/exit-codes.md)
        raise bad from None
    return int(when.timestamp() // DAY)


def prune(classifier, min_count: int | None = None, max_terms: int | None = None, unseen_since: int | None = None):
    """(the classifier without the terms seen fewer than `min_count` times in
    all, or last seen before day `unseen_since`, and then beyond the
    `max_terms` most frequent (ties: by column), and a report: terms,
    kept, dropped)."""
    if getattr(classifier.model, "kind", None) == "table":
        raise ParameterError(
            "features",
            "a table model has no terms to prune",
            hint="train it again with {features} naming fewer columns",
        )
    counts = Counts.of(classifier)
    total = np.asarray(counts.tf, dtype=np.float64).sum(axis=0)
    if counts.expected_tf is not None:  # EM: the unlabelled documents' counts (at their weight) are seen too
        total = total + np.asarray(counts.expected_tf, dtype=np.float64).sum(axis=0)  # (a clustering has no others)
    keep = np.ones(len(total), dtype=bool)
    if min_count is not None:
        keep &= total >= min_count
    if unseen_since is not None:
        keep &= counts.last_seen >= unseen_since
    if max_terms is not None and keep.sum() > max_terms:
        candidates = np.flatnonzero(keep)
        best = candidates[np.argsort(-total[candidates], kind="stable")[:max_terms]]
        keep[:] = False
        keep[best] = True
    if not keep.any():
        raise ParameterError(
            "min_count", "pruning would drop every term", hint="use a lower {min_count} or an earlier {unseen_since}"
        )
    report = {"terms": len(keep), "kept": int(keep.sum()), "dropped": int((~keep).sum())}
    if keep.all():
        return classifier, report
    rules = {"min_count": min_count, "max_terms": max_terms}
    if unseen_since is not None:
        rules["unseen_since"] = datetime.date.fromordinal(
            datetime.date(1970, 1, 1).toordinal() + unseen_since
        ).isoformat()
    meta = {**classifier.meta, "pruned": {**{k: v for k, v in rules.items() if v is not None}, "at": _now_text()}}
    return rebuild(counts.columns(keep), classifier, meta), report


def _name(doc_id: str) -> str:
    return "the message on standard input" if doc_id == "-" else doc_id
