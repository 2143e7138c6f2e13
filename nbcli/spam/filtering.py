"""`nbcli filter`: pass mail through with a verdict header added.

A message goes out byte for byte as it came in, with one header line added
at the top of its header block (after an mbox "From " line):

    X-NB-Class: spam; p=0.9993; model=3f9a1c

An earlier X-NB-Class header is replaced where it stands instead. Nothing
else changes: body bytes, line endings (the added line uses the message's
own), 8-bit content, "From " lines and a missing final newline are all
kept, so deleting the added line gives back the original exactly.

Verdicts: for a model with two classes, one of them the spam class, P(spam)
against the cut-offs gives "spam" (p >= spam cut-off), "ham" (p <= ham
cut-off) or "unsure" (in between), and p in the header is P(spam); the ham
verdict is written with the other class's name. For any other model the
verdict is the most probable class and p its probability. A message that
cannot be classified gets the verdict "error" and passes through unchanged.

One verdict everywhere: `Verdicts` (on `binary_metrics.spam_index` and
`verdict_codes`) is what filter, serve and predict's "verdict" field take
the verdict from, and what eval counts, so the same message gets the same
spam/unsure/ham from every command. p is the calibrated probability; the
X-NB-Evidence numbers are the event model's own log-odds, before any
calibration, and the header says so (its unit item, `explain.unit`).
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

HEADER = b"X-NB-Class"
EVIDENCE_HEADER = b"X-NB-Evidence"
EXIT_CODES = {"spam": 0, "ham": 1, "unsure": 2, "error": 3}  # bogofilter's

_OUR_FIELD = re.compile(rb"x-nb-(class|evidence)[ \t]*:", re.IGNORECASE)


def _folded(name: bytes, items: list[str], eol: bytes, width: int = 78) -> bytes:
    """A header field `name: item; item; ...`, folded before an item where
    a line would pass `width` (items are never split)."""
    out = name + b":"
    line_len = len(out)
    for k, item in enumerate(items):
        piece = _header_safe(item) + (b";" if k < len(items) - 1 else b"")
        if line_len + 1 + len(piece) > width and line_len > len(name) + 1:
            out += eol + b"\t" + piece
            line_len = 8 + len(piece)
        else:
            out += b" " + piece
            line_len += 1 + len(piece)
    return out + eol


def evidence_items(explanation: dict) -> list[str]:
    """An explanation (see `Classifier._explanations`) as header items: the
    class compared with, the unit of the numbers that follow (raw log-odds,
    before calibration, for a calibrated model: not the units of p), the
    log-odds, the prior, the unknown terms (only when they contribute),
    then 'term' count contribution."""
    items = [f"versus {explanation['versus']}"]
    if explanation.get("unit"):
        items.append(f"in {explanation['unit']}")
    items += [f"log-odds {explanation['log_odds']:+.2f}", f"prior {explanation['prior']:+.2f}"]
    u = explanation["unknown"]
    if u["contribution"]:
        items.append(f"unknown terms {u['count']} {u['contribution']:+.2f}")
    items += [f"'{t['term']}' {t['count']} {t['contribution']:+.2f}" for t in explanation["terms"]]
    return items


def _line_ending(message: bytes, start: int = 0) -> bytes:
    """The message's own line ending, judged by its first line break from
    `start`: LF, CRLF, or a lone CR (old Mac mail) when its next line break
    is a lone CR too (so a stray CR in the first line of LF mail does not
    count)."""
    cr, nl = message.find(b"\r", start), message.find(b"\n", start)
    if cr < 0 or 0 <= nl < cr:
        return b"\n"
    if nl == cr + 1:
        return b"\r\n"
    after = message.find(b"\r", cr + 1)
    if 0 <= nl and (after < 0 or nl < after):
        return b"\n"
    return b"\r\n" if after >= 0 and nl == after + 1 else b"\r"


def _header_start(message: bytes, sep: bytes) -> int | None:
    """Where the header block starts: after an mbox From_ line, if any
    (None if the message is nothing but a From_ line)."""
    from nbcli.text.mbox import is_from_line

    if not (message.startswith(b"From ") and is_from_line(message)):
        return 0
    eol = message.find(sep)
    return None if eol < 0 else eol + 1


def _header_safe(text: str) -> bytes:
    """Text for a header line: ASCII (others become '?') with CR, LF and
    other control characters made spaces, so a class name can never end
    the line or the header block (header injection)."""
    return re.sub(rb"[\x00-\x1f\x7f]", b" ", text.encode("ascii", "replace"))


def with_header(
    message: bytes, value: str, evidence: list[str] | None = None, before: list[tuple[str, str]] | None = None
) -> bytes:
    """`message` with the header line `X-NB-Class: value` added (or earlier
    X-NB-Class and X-NB-Evidence fields replaced), and with evidence an
    `X-NB-Evidence:` field after it listing those items, folded; `before`:
    (name, value) header lines put in front of it (`nbcli serve`'s
    X-Spam-*); nothing else changed. Lines end as the message's own do (LF,
    CRLF or CR). Raises ValueError if the message has no header block to
    add to (it is only a From_ line): the caller then must not report a
    verdict."""
    start = _header_start(message, _line_ending(message)[-1:])
    if start is None:
        raise ValueError("nothing but a From_ line: no header block to add a verdict to")
    eol = _line_ending(message, start)  # the header block's (a From_ line nbcli wrote ends in LF)
    sep = eol[-1:]
    line = HEADER + b": " + _header_safe(value) + eol
    if before:
        line = b"".join(_header_safe(name) + b": " + _header_safe(text) + eol for name, text in before) + line
    if evidence is not None:
        line += _folded(EVIDENCE_HEADER, evidence, eol)
    blank = (b"\r",) if sep == b"\r" else (b"\n", b"\r\n")
    # Find earlier X-NB-Class and X-NB-Evidence fields (with their continuation lines).
    spans = []
    pos = start
    while pos < len(message):
        end = message.find(sep, pos)
        end = len(message) if end < 0 else end + 1
        text = message[pos:end]
        if text in blank:
            break  # the blank line that ends the header block
        if _OUR_FIELD.match(text):
            stop = end
            while stop < len(message) and message[stop : stop + 1] in (b" ", b"\t"):
                nxt = message.find(sep, stop)
                stop = len(message) if nxt < 0 else nxt + 1
            spans.append((pos, stop))
            end = stop
        pos = end
    if not spans:
        return message[:start] + line + message[start:]
    out, last = [], 0
    for i, (a, b) in enumerate(spans):
        out.append(message[last:a])
        if i == 0:
            out.append(line)
        last = b
    out.append(message[last:])
    return b"".join(out)


@dataclass
class Verdicts:
    """Turns a model's log-posteriors into verdicts and header values: the
    one place filter, serve and predict take their verdicts from (eval
    counts by the same `binary_metrics.verdict_codes`)."""

    classes: list[str]
    spam_class: str = "spam"
    spam_cutoff: float = DEFAULT_SPAM_CUTOFF
    ham_cutoff: float = DEFAULT_HAM_CUTOFF

    def __post_init__(self):
        spam = spam_index(self.classes, self.spam_class)
        self.binary = spam is not None
        if self.binary:
            self.spam_index = spam
            self.ham_name = self.classes[1 - spam]

    def of(self, log_proba: np.ndarray) -> tuple[str, str, float]:
        """(verdict, label for the header, p) for one row of log-posteriors.
        verdict is spam/ham/unsure for a spam model, else the class."""
        if self.binary:
            code, p = verdict_codes(log_proba, self.spam_index, self.spam_cutoff, self.ham_cutoff)
            return VERDICTS[code], (self.ham_name, "unsure", self.spam_class)[code], p
        best = int(np.argmax(log_proba))
        return self.classes[best], self.classes[best], float(np.exp(log_proba[best]))

    def names(self, log_proba: np.ndarray) -> list[str] | None:
        """The verdicts (spam, unsure or ham) of a batch, one row of
        log-posteriors per document, as `of` gives them one at a time; None
        for a model that is not a spam model (`predict` adds no verdict)."""
        if not self.binary:
            return None
        codes, _ = verdict_codes(log_proba, self.spam_index, self.spam_cutoff, self.ham_cutoff)
        return [VERDICTS[c] for c in codes.tolist()]


def header_value(label: str, p: float, model_id: str | None = None) -> str:
    """'spam; p=0.9993; model=3f9a1c': the class, its probability, and the
    short identity of the model (`modelfile.compute_model_id`), so that a
    filter running another model than the one trained shows."""
    return f"{label}; p={p:.4f}" + (f"; model={model_id}" if model_id else "")


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
    the next append to be glued onto; the error names the file."""

    def __init__(self, folder: str):
        self.folder = folder
        self.counts: dict[str, int] = {}
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            from nbcli.errors import NbcliError

            raise NbcliError(f"--split {folder}: cannot create the folder: {exc.strerror or exc}") from None

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


def run(
    messages,
    classifier,
    verdicts: Verdicts | None,
    write,
    warn,
    model_error: str | None = None,
    jobs: int = 1,
    explain: int = 0,
    model_id: str | None = None,
):
    """Classify and write every message of `messages` (raw bytes; a None
    among them only says "pass on what you hold": see `sources.batches`) in
    order.

    write(verdict, message_bytes) puts a message out; warn(text) reports a
    message that passed through unchanged. `classifier`/`verdicts` are None
    when the model could not be loaded (every message then passes through
    with the verdict "error"). explain > 0 adds an X-NB-Evidence header
    with that many terms; model_id, the model's short identity, goes into
    the header. Returns the list of verdicts.
    """
    from nbcli.run import pipeline
    from nbcli.text.sources import Document, batches

    seen: list[str] = []
    numbers = itertools.count(1)
    stream = (None if m is None else Document(str(next(numbers)), None, m, "mail") for m in messages)
    if classifier is None:
        scored = ((batch, None) for batch in batches(stream))
    else:
        scored = pipeline.classify(classifier, batches(stream), jobs, explain)
    for batch, result in scored:
        rows = whys = None  # on an exception: find the bad message(s) one at a time below
        if not isinstance(result, Exception):
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
