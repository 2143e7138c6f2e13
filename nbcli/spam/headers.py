"""The header lines nbcli adds to a message, byte for byte: X-NB-Class
(and X-NB-Evidence) from `nbcli filter` and `nbcli serve`, and spamd's
X-Spam-Flag and X-Spam-Status for serve's PROCESS and HEADERS (`marked`).

A message goes out as it came in, with one header line added at the top
of its header block (after an mbox "From " line):

    X-NB-Class: spam; p=0.9993; model=3f9a1c

An earlier X-NB-Class header is replaced where it stands instead. Nothing
else changes: body bytes, line endings (the added line uses the message's
own), 8-bit content, "From " lines and a missing final newline are all
kept, so deleting the added line gives back the original exactly. Text put
into a header is made ASCII without control characters first, so a class
name or a term can never end the line or the header block.

Low in the spam package on purpose (issue 26): `filtering`, `spamd`'s
replies and the daemon all write these lines, and none of them needs the
others for it.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from nbcli.spam.spamd import Verdict

HEADER = b"X-NB-Class"
EVIDENCE_HEADER = b"X-NB-Evidence"

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


def header_value(label: str, p: float, model_id: str | None = None) -> str:
    """'spam; p=0.9993; model=3f9a1c': the class, its probability, and the
    short identity of the model (`payload.compute_model_id`), so that a
    filter running another model than the one trained shows."""
    return f"{label}; p={p:.4f}" + (f"; model={model_id}" if model_id else "")


def marked(message: bytes, v: Verdict, t: float, nb_value: str) -> bytes:
    """The message with spamd's and nbcli's headers added at the top of its
    header block (after a From_ line), in the message's own line ending;
    every other byte kept (see `with_header`). A message with no header
    block to add to comes back unchanged."""
    from nbcli.spam.spamd import score_text

    if not v.scored:
        return message
    status = (
        f"{'Yes' if v.spam else 'No'}, score={score_text(v.log_odds)} required={score_text(t)} "
        f"tests=NBCLI_{v.verdict.upper()} model={v.model_id}"
    )
    before = ([("X-Spam-Flag", "YES")] if v.spam else []) + [("X-Spam-Status", status)]
    try:
        return with_header(message, nb_value, before=before)
    except ValueError:
        return message
