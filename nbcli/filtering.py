"""`nbcli filter`: pass mail through with a verdict header added.

A message goes out byte for byte as it came in, with one header line added
at the top of its header block (after an mbox "From " line):

    X-NB-Class: spam; p=0.9993

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
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass

import numpy as np

from nbcli.defaults import DEFAULT_HAM_CUTOFF, DEFAULT_SPAM_CUTOFF  # noqa: F401 (re-exported)

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
        piece = re.sub(r"[\x00-\x1f\x7f]", " ", item).encode("ascii", "replace") + (b";" if k < len(items) - 1 else b"")
        if line_len + 1 + len(piece) > width and line_len > len(name) + 1:
            out += eol + b"\t" + piece
            line_len = 8 + len(piece)
        else:
            out += b" " + piece
            line_len += 1 + len(piece)
    return out + eol


def evidence_items(explanation: dict) -> list[str]:
    """An explanation (see `Classifier.explain`) as header items: the class
    compared with, the prior, unknown terms, then 'term' count contribution."""
    items = [f"versus {explanation['versus']}", f"log-odds {explanation['log_odds']:+.2f}", f"prior {explanation['prior']:+.2f}"]
    u = explanation["unknown"]
    if u["count"]:
        items.append(f"unknown terms {u['count']} {u['contribution']:+.2f}")
    items += [f"'{t['term']}' {t['count']} {t['contribution']:+.2f}" for t in explanation["terms"]]
    return items


def _header_start(message: bytes) -> int | None:
    """Where the header block starts: after an mbox From_ line, if any."""
    if not message.startswith(b"From "):
        return 0
    eol = message.find(b"\n")
    return None if eol < 0 else eol + 1


def with_header(message: bytes, value: str, evidence: list[str] | None = None) -> bytes:
    """`message` with the header line `X-NB-Class: value` added (or earlier
    X-NB-Class and X-NB-Evidence fields replaced), and with evidence an
    `X-NB-Evidence:` field after it listing those items, folded; nothing
    else changed."""
    start = _header_start(message)
    if start is None:
        return message  # nothing but a From_ line: no header block to add to
    first_end = message.find(b"\n", start)
    eol = b"\r\n" if first_end > start and message[first_end - 1 : first_end] == b"\r" else b"\n"
    line = HEADER + b": " + value.encode("ascii", "replace") + eol
    if evidence is not None:
        line += _folded(EVIDENCE_HEADER, evidence, eol)
    # Find earlier X-NB-Class and X-NB-Evidence fields (with their continuation lines).
    spans = []
    pos = start
    while pos < len(message):
        end = message.find(b"\n", pos)
        end = len(message) if end < 0 else end + 1
        text = message[pos:end]
        if text in (b"\n", b"\r\n"):
            break  # the blank line that ends the header block
        if _OUR_FIELD.match(text):
            stop = end
            while stop < len(message) and message[stop : stop + 1] in (b" ", b"\t"):
                nxt = message.find(b"\n", stop)
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
    """Turns a model's log-posteriors into verdicts and header values."""

    classes: list[str]
    spam_class: str = "spam"
    spam_cutoff: float = DEFAULT_SPAM_CUTOFF
    ham_cutoff: float = DEFAULT_HAM_CUTOFF

    def __post_init__(self):
        self.binary = len(self.classes) == 2 and self.spam_class in self.classes
        if self.binary:
            self.spam_index = self.classes.index(self.spam_class)
            self.ham_name = self.classes[1 - self.spam_index]

    def of(self, log_proba: np.ndarray) -> tuple[str, str, float]:
        """(verdict, label for the header, p) for one row of log-posteriors.
        verdict is spam/ham/unsure for a spam model, else the class."""
        if self.binary:
            p = float(np.exp(log_proba[self.spam_index]))
            if p >= self.spam_cutoff:
                return "spam", self.spam_class, p
            if p <= self.ham_cutoff:
                return "ham", self.ham_name, p
            return "unsure", "unsure", p
        best = int(np.argmax(log_proba))
        return self.classes[best], self.classes[best], float(np.exp(log_proba[best]))


def header_value(label: str, p: float) -> str:
    return f"{label}; p={p:.4f}"


def as_mbox_entry(message: bytes) -> bytes:
    """A message as an mbox entry: messages that came from an mbox are kept
    as they are; others get a From_ line, ">From " escaping of body lines
    that start with "From ", and a blank line at the end."""
    if message.startswith(b"From "):
        return message if message.endswith(b"\n") else message + b"\n"
    stamp = time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime()).encode()
    body = re.sub(rb"(?m)^(>*From )", rb">\1", message)
    if not body.endswith(b"\n"):
        body += b"\n"
    return b"From MAILER-DAEMON " + stamp + b"\n" + body + b"\n"


class SplitWriter:
    """Appends messages to DIR/<verdict>.mbox, one mbox per verdict, each
    append under an exclusive lock so concurrent filters do not interleave."""

    def __init__(self, folder: str):
        self.folder = folder
        os.makedirs(folder, exist_ok=True)

    def write(self, verdict: str, message: bytes) -> None:
        import fcntl

        name = re.sub(r"[^\w.-]", "_", verdict) or "unnamed"
        path = os.path.join(self.folder, f"{name}.mbox")
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            data = as_mbox_entry(message)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)


def run(messages, classifier, verdicts: Verdicts | None, write, warn, model_error: str | None = None, jobs: int = 1, explain: int = 0):
    """Classify and write every message of `messages` (raw bytes) in order.

    write(verdict, message_bytes) puts a message out; warn(text) reports a
    message that passed through unchanged. `classifier`/`verdicts` are None
    when the model could not be loaded (every message then passes through
    with the verdict "error"). explain > 0 adds an X-NB-Evidence header
    with that many terms. Returns the list of verdicts.
    """
    from nbcli import parallel
    from nbcli.sources import Document, batches

    seen: list[str] = []
    stream = (Document(str(n), None, m, "mail") for n, m in enumerate(messages, 1))
    if classifier is None:
        scored = ((batch, None) for batch in batches(stream))
    else:
        scored = parallel.classify(classifier, batches(stream), jobs, explain)
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
                out = with_header(doc.data, header_value(label, p), evidence)
            except Exception as exc:
                verdict, out = "error", doc.data
                if classifier is not None:
                    warn(f"message {doc.id}: {exc}; passed through unchanged")
            write(verdict, out)
            seen.append(verdict)
    return seen
