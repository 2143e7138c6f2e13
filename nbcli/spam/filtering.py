"""`nbcli filter`: pass mail through with a verdict header added.

A message goes out byte for byte as it came in, with one header line added
(`X-NB-Class: spam; p=0.9993; model=3f9a1c`: how it is written, and how
every other byte is kept, is `headers`'). Messages from a folder go out as
one mbox (`as_mbox_entry`); --split files them by verdict (`SplitWriter`).

Verdicts: for a model with two classes, one of them the spam class, P(spam)
against the cut-offs gives "spam" (p >= spam cut-off), "ham" (p <= ham
cut-off) or "unsure" (in between), and p in the header is P(spam); the ham
verdict is written with the other class's name. For any other model the
verdict is the most probable class and p its probability, or for a
two-class model trained with `--decide f1|balanced` the class its stored
threshold decides (`fit.deciding`). A spam model with such a threshold
(its positive class spam) takes its spam cut-off from the threshold and
keeps an unsure band below it, unless the user gave a cut-off
(`evaluate.decision.decided_cutoffs`). A message that
cannot be classified gets the verdict "error" and passes through unchanged.

One verdict everywhere: `Verdicts` (on `binary.spam_index` and
`verdict_codes`) is what filter, serve and predict's "verdict" field take
the verdict from, and what eval counts, so the same message gets the same
spam/unsure/ham from every command. p is the calibrated probability; the
X-NB-Evidence numbers are the event model's own log-odds, before any
calibration, and the header says so (its unit item, `explain.unit`).

Scoring is given by the caller (`run`'s `classify`): the pipeline, which
runs it on --jobs workers, sits at the same height as this package and is
not imported here (issue 26); without it, messages are scored in this
process (`scored_here`).
"""

from __future__ import annotations

import itertools
import os
import re
import time
from dataclasses import dataclass

import numpy as np

from nbcli.defaults import DEFAULT_HAM_CUTOFF, DEFAULT_SPAM_CUTOFF
from nbcli.evaluate.binary import VERDICTS, spam_index, verdict_codes
from nbcli.evaluate.decision import decided, decided_cutoffs

EXIT_CODES = {"spam": 0, "ham": 1, "unsure": 2, "error": 3}  # bogofilter's


@dataclass
class Verdicts:
    """Turns a model's log-posteriors into verdicts and header values: the
    one place filter, serve and predict take their verdicts from (eval
    counts by the same `binary.verdict_codes`)."""

    classes: list[str]
    spam_class: str = "spam"
    spam_cutoff: float = DEFAULT_SPAM_CUTOFF
    ham_cutoff: float = DEFAULT_HAM_CUTOFF
    rule: tuple[int, float] | None = None  # the model's decision threshold (`BaseClassifier.decision_rule`)
    cutoffs_given: bool = False  # the user gave a cut-off: the threshold does not move them

    def __post_init__(self):
        spam = spam_index(self.classes, self.spam_class)
        self.binary = spam is not None
        if self.binary:
            self.spam_index = spam
            self.ham_name = self.classes[1 - spam]
            if not self.cutoffs_given:
                self.spam_cutoff, self.ham_cutoff = decided_cutoffs(self.rule, spam, self.spam_cutoff, self.ham_cutoff)

    def of(self, log_proba: np.ndarray) -> tuple[str, str, float]:
        """(verdict, label for the header, p) for one row of log-posteriors.
        verdict is spam/ham/unsure for a spam model, else the class."""
        if self.binary:
            code, p = verdict_codes(log_proba, self.spam_index, self.spam_cutoff, self.ham_cutoff)
            return VERDICTS[code], (self.ham_name, "unsure", self.spam_class)[code], p
        best = int(decided(np.asarray(log_proba)[None, :], self.rule)[0])
        return self.classes[best], self.classes[best], float(np.exp(log_proba[best]))

    def names(self, log_proba: np.ndarray) -> list[str] | None:
        """The verdicts (spam, unsure or ham) of a batch, one row of
        log-posteriors per document, as `of` gives them one at a time; None
        for a model that is not a spam model (`predict` adds no verdict)."""
        if not self.binary:
            return None
        codes, _ = verdict_codes(log_proba, self.spam_index, self.spam_cutoff, self.ham_cutoff)
        return [VERDICTS[c] for c in codes.tolist()]


def check_mail_model(classifier, path: str, what: str) -> None:
    """NbcliError where `classifier` (read from `path`) can classify no
    message: a table model classifies a table's rows (`what`: who refuses
    it, as "a spamd server" or "nbcli filter"). Said once, before any
    message is read, not once per message."""
    if getattr(classifier.model, "kind", None) == "table":
        from nbcli.errors import NbcliError

        raise NbcliError(
            f"{path} is a table model: it classifies rows of a table, and {what} classifies mail",
            hint="give a model trained on mail ('nbcli train' of a folder or mbox of messages)",
        )


def as_mbox_entry(message: bytes) -> bytes:
    """A message as an mbox entry that the next entry can follow (see the
    cutting rule in nbcli/text/mbox.py): a message that starts with a From_
    line (it came from an mbox) is kept as it is; others get a From_ line
    and ">From " escaping (mboxrd) of body lines that start with "From ";
    either way the entry ends with a blank line (added if missing)."""
    from nbcli.text.mbox import starts_mbox

    if not starts_mbox(message):
        stamp = time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime()).encode()
        message = b"From MAILER-DAEMON " + stamp + b"\n" + re.sub(rb"(?m)^(>*From )", rb">\1", message)
    if message.endswith((b"\n\n", b"\n\r\n")):
        return message
    if message.endswith(b"\n"):
        return message + (b"\r\n" if message.endswith(b"\r\n") else b"\n")
    return message + b"\n\n"


class SplitWriter:
    """Appends messages to DIR/<verdict>.mbox, one mbox per verdict (the
    verdict made a safe file name). Each append is all or nothing: under an
    exclusive lock (so concurrent filters do not interleave), the entry is
    written and fsync'ed, and if that fails (a full disk, `ulimit -f`) the
    file is cut back to its length before, so no torn entry is left for
    the next append to be glued onto; the error names the file. A folder
    that cannot be made is a ParameterError of `split_dir` (`nbcli filter`
    says --split)."""

    def __init__(self, split_dir: str):
        self.folder = split_dir
        self.counts: dict[str, int] = {}
        try:
            os.makedirs(split_dir, exist_ok=True)
        except OSError as exc:
            from nbcli.errors import ParameterError

            raise ParameterError(
                "split_dir",
                "{split_dir} {folder}: cannot create the folder: {reason}",
                hint="give a folder that exists, or one whose parent does (not a file's name)",
                folder=split_dir,
                reason=exc.strerror or exc,
            ) from None

    def path_of(self, verdict: str) -> str:
        name = re.sub(r"[^\w.-]", "_", verdict) or "unnamed"
        return os.path.join(self.folder, f"{name}.mbox")

    def write(self, verdict: str, message: bytes) -> None:
        import fcntl

        from nbcli.errors import NbcliError

        path = self.path_of(verdict)
        data = as_mbox_entry(message)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        except OSError as exc:
            raise NbcliError(f"cannot append to {path}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            size = os.fstat(fd).st_size
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view) :]
                os.fsync(fd)
            except OSError as exc:
                try:
                    os.ftruncate(fd, size)
                except OSError:
                    pass
                raise NbcliError(
                    f"cannot append to {path}: {exc.strerror or exc}; it was left as it was before this message",
                ) from None
        finally:
            os.close(fd)
        self.counts[verdict] = self.counts.get(verdict, 0) + 1

    def summary(self) -> str:
        """'filed 6 messages: ham 3 (DIR/ham.mbox), spam 3 (DIR/spam.mbox)'"""
        total = sum(self.counts.values())
        parts = ", ".join(f"{v} {n} ({self.path_of(v)})" for v, n in sorted(self.counts.items()))
        return f"filed {total} message{'' if total == 1 else 's'}" + (f": {parts}" if parts else "")


def scored_here(classifier, batches, explain: int = 0):
    """(batch, `classifier.score` of it, or the exception it raised) for
    each non-empty batch, in order, in this process: `run`'s scoring when
    its caller gives none (`nbcli filter` gives the pipeline's, on --jobs
    workers: `run.parallel.classify`)."""
    for batch in batches:
        if not batch:  # the input went quiet: nothing is held here
            continue
        try:
            yield batch, classifier.score([d.data for d in batch], [d.kind for d in batch], explain)
        except Exception as exc:
            yield batch, exc


def run(
    messages,
    classifier,
    verdicts: Verdicts | None,
    write,
    warn,
    model_error: str | None = None,
    classify=None,
    explain: int = 0,
    model_id: str | None = None,
):
    """Classify and write every message of `messages` (raw bytes; a None
    among them only says "pass on what you hold": see `sources.batches`) in
    order.

    write(verdict, message_bytes) puts a message out; warn(text) reports a
    message that passed through unchanged. `classifier`/`verdicts` are None
    when the model could not be loaded (every message then passes through
    with the verdict "error"). classify(classifier, batches, explain=N)
    scores the batches as `scored_here` does (the default), in order, on
    workers or not (issue 26: spam does not import the pipeline; the
    command line passes its scorer in). explain > 0 adds an X-NB-Evidence
    header with that many terms; model_id, the model's short identity, goes
    into the header. Returns the list of verdicts.
    """
    from nbcli.spam.headers import evidence_items, header_value, with_header
    from nbcli.text.sources import Document, batches

    seen: list[str] = []
    numbers = itertools.count(1)
    stream = (None if m is None else Document(str(next(numbers)), None, m, "mail") for m in messages)
    if classifier is None:
        scored = ((batch, None) for batch in batches(stream))
    else:
        scored = (classify or scored_here)(classifier, batches(stream), explain=explain)
    for batch, result in scored:
        rows = whys = None  # on an exception: find the bad message(s) one at a time below
        if result is not None and not isinstance(result, Exception):  # (None: no model, every message passes)
            rows, whys = result if explain else (result, None)
        for i, doc in enumerate(batch):
            verdict, out = "error", doc.data
            try:
                if classifier is None:
                    raise RuntimeError(model_error or "no model")
                if not doc.data.strip():
                    raise ValueError("empty message")
                if rows is not None:
                    row, why = rows[i], whys[i] if explain else None
                else:
                    one = classifier.score([doc.data], ["mail"], explain)
                    row, why = (one[0][0], one[1][0]) if explain else (one[0], None)
                verdict, label, p = verdicts.of(row)
                evidence = evidence_items(why) if explain else None
                out = with_header(doc.data, header_value(label, p, model_id), evidence)
            except Exception as exc:
                verdict, out = "error", doc.data
                if classifier is not None:
                    warn(f"message {doc.id}: {exc}; passed through unchanged")
            write(verdict, out)
            seen.append(verdict)
    return seen
