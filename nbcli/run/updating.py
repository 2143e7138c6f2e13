"""The locked, crash-safe update that learns analysed documents into a
model file: the one `nbcli learn` and `nbcli imap` (its corrections and
--learn-folder) both use, so there is one place where learning persists.

The documents are read and analysed before the lock is taken (slow work
outside it); then, under `modelfile.locked`, the model is read again if the
file was replaced since the caller read it (its `store.modelfile.file_stamp`
differs), checked, changed by `fit.learning.learn` (whose record makes a
repeat harmless and a change of class a move) and replaced atomically, so
concurrent learners take turns and a crash leaves the old model or the new
one.

A model that keeps a journal (`modelfile.keeps_journal`: a file of at
least `modelfile.JOURNAL_MIN_BYTES`) is not rebuilt at all: the journal's
Update is computed from the counts of the documents' terms alone
(`learning.learn_update`) and appended (`modelfile.append_update`), so a
learn costs the message, not the model; what is returned then is a
`learning.Learned`, the parts of the new model the commands report.
"""

from __future__ import annotations

import os

from nbcli.errors import NbcliError


def learn_into(path: str, analysed, analyzer_options, read=None, check=None, create=None):
    """Learn `analysed` (`fit.analysed.Analysed`) into model file `path`
    under its lock; returns (model as saved or as it was, `learning.Outcome`).

    analyzer_options: those the documents were analysed with (a model
    replaced meanwhile by one with other options is refused). read: the
    (classifier, stamp) the caller read before analysing, or None when it
    read none; it is reused when the file is unchanged. check(current): the
    caller's refusals, on the model as it is under the lock (after
    `learning.check_learnable`). create(): (model, outcome) for a file that
    does not exist (now); None refuses it. The file is written only when
    something changed."""
    from nbcli.fit import learning
    from nbcli.store import modelfile
    from nbcli.store.modelfile import file_stamp

    with modelfile.locked(path):
        if os.path.exists(path):
            if read is not None and file_stamp(path) == read[1]:
                current = read[0]
            else:  # changed since it was read (or never read): read it as it is now
                current = modelfile.load_view(path)
            learning.check_learnable(current, path)
            if check is not None:
                check(current)
            if current.analyzer_options != analyzer_options:  # replaced meanwhile by another kind of model
                raise NbcliError(
                    f"{path} was replaced by a model with other analyzer options while the input was read; "
                    "nothing was learned",
                    hint="run the command again",
                )
            updated, outcome, _ = change_locked(path, current, analysed)
        elif create is not None:
            updated, outcome = create()
            modelfile.save(updated, path)  # a new model: written whole
        else:
            raise NbcliError(f"{path}: no such model file (it was removed meanwhile)", hint="add --create")
    return updated, outcome


def change_locked(path: str, current, analysed, forgetting: bool = False, limit=None):
    """Learn (forgetting: forget) the analysed documents into `current`, the
    model file `path` as read under its lock (the caller holds it), and
    persist the change: where the model keeps a journal
    (`modelfile.keeps_journal`), the journal's update of the documents'
    terms alone (`learning.learn_update`), appended, and no new model is
    built; else the whole changed model (`learning.learn` or `forget`),
    saved. `learn_into` and `nbcli forget` persist a change here; spamd's
    TELL (spam/daemon.py) takes the same steps written out, since importing
    this module from the daemon would make the import chain one module
    longer than tests/test_imports.py allows. limit(size): called, before anything is written, with
    a function giving the size the model will have (an upper bound for an
    appended update): spamd's --max-model-size. Returns (the model as saved,
    or the `learning.Learned` of an appended update, or `current` when
    nothing changed; the `learning.Outcome`; whether anything was written)."""
    from nbcli.fit import learning
    from nbcli.store import modelfile

    direct = learning.learn_update(current, analysed, forgetting) if modelfile.keeps_journal(current) else None
    if direct is not None:  # the change alone
        update, outcome, learned = direct
        if update is not None:
            if limit is not None:
                limit(lambda: modelfile.journaled_bytes(path, update))
            modelfile.append_update(path, update, since=current)
        return learned, outcome, update is not None
    if forgetting:
        updated, outcome = learning.forget(current, analysed)
        changed = outcome.forgotten > 0
    else:
        updated, outcome = learning.learn(current, analysed)
        changed = updated is not current
    if changed:
        if limit is not None:
            limit(lambda: modelfile.payload_bytes(modelfile.to_payload(updated)))
        modelfile.save(updated, path, since=current)  # its difference appended to the journal, or written whole
    return updated, outcome, changed
