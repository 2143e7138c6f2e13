"""SpamAssassin's spamd protocol, as `nbcli serve` speaks it. Bytes in,
bytes out; no sockets here (see `serve`).

A request is `VERB SPAMC/x.y`, header lines `Name: value`, an empty line,
and, for the verbs that take a message, `Content-length` bytes of it. A
reply is `SPAMD/1.1 <code> <name>`, header lines, an empty line and a body
where the verb has one (PING answers `SPAMD/1.5 0 PONG`). References:
SpamAssassin's spamd/PROTOCOL and spamc/libspamc.c, aiospamc's protocol
notes, and Exim's spam.c, whose parser is rigid.

How nbcli's verdict becomes spamd's score: S is the log-odds of spam,
ln(P(spam) / P(ham)), clipped to [-999.9, 999.9]; the threshold T is the
spam cut-off's log-odds, ln(c / (1 - c)) (3.9 for the default 0.98); a
message is spam when P(spam) >= c, which is S >= T up to rounding (the
verdict is decided on P, not on the rounded text). Both are written with
one decimal and a "." whatever the locale.

Reply layouts: a client of protocol 1.3 or later (spamc 3.x and 4.x send
1.5) gets `Spam: True ; S / T` as a header; an older one (Exim sends
`REPORT SPAMC/1.2`) gets REPORT, REPORT_IFSPAM and SYMBOLS as spamd gave
them before 1.3: `Content-length` only, and the body starting with the line
`S/T`, which is what Exim's sscanf expects.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

EX = {
    "EX_OK": 0,
    "EX_USAGE": 64,
    "EX_DATAERR": 65,
    "EX_NOINPUT": 66,
    "EX_NOUSER": 67,
    "EX_UNAVAILABLE": 69,
    "EX_SOFTWARE": 70,
    "EX_CANTCREAT": 73,
    "EX_IOERR": 74,
    "EX_TEMPFAIL": 75,
    "EX_PROTOCOL": 76,
    "EX_NOPERM": 77,
    "EX_CONFIG": 78,
    "EX_TIMEOUT": 79,
}
MESSAGE_VERBS = {"CHECK", "SYMBOLS", "REPORT", "REPORT_IFSPAM", "PROCESS", "HEADERS", "TELL"}
VERBS = MESSAGE_VERBS | {"PING", "SKIP"}
MAX_HEAD = 16384  # bytes of request line and headers
MAX_HEADERS = 32
SCORE_LIMIT = 999.9
EOL = b"\r\n"

_REQUEST_LINE = re.compile(rb"([A-Z_]{1,20}) SPAMC/(\d{1,3})\.(\d{1,3})")
_HEADER_LINE = re.compile(rb"([!-9;-~]{1,64})[ \t]*:[ \t]*(.*?)[ \t]*")


class ProtocolError(Exception):
    """A request nbcli cannot serve: answered with one line
    `SPAMD/1.0 <code> <name> <text>`, then the connection is closed."""

    def __init__(self, name: str, text: str):
        super().__init__(text)
        self.name = name

    def reply(self) -> bytes:
        return error(self.name, str(self))


def error(name: str, text: str) -> bytes:
    safe = re.sub(r"[\x00-\x1f\x7f]", " ", text)
    return f"SPAMD/1.0 {EX[name]} {name} {safe}\r\n".encode("ascii", "replace")


@dataclass
class Request:
    verb: str
    version: tuple[int, int]
    headers: dict = field(default_factory=dict)  # lower-case name -> value (str)

    @property
    def old_layout(self) -> bool:
        """A client from before protocol 1.3 (Exim's 1.2)."""
        return self.version < (1, 3)

    def content_length(self) -> int | None:
        text = self.headers.get("content-length")
        if text is None:
            return None
        if not re.fullmatch(r"[0-9]{1,12}", text):  # ASCII digits: a str's \d takes any script's
            raise ProtocolError("EX_PROTOCOL", f"bad Content-length {text[:40]!r}")
        return int(text)


def head_end(buffer: bytes, start: int = 0) -> int:
    """The length of a complete request head at the start of `buffer`
    (through its empty line), or -1 if it is not complete yet. A request
    line alone followed by an empty line counts; CRLF or LF line ends.
    start: where to look from (a caller reading a head as it arrives
    searches only the new bytes and the 3 before them: linear in all)."""
    crlf = buffer.find(b"\r\n\r\n", start)
    lf = buffer.find(b"\n\n", start)
    ends = [i + 4 for i in (crlf,) if i >= 0] + [i + 2 for i in (lf,) if i >= 0]
    return min(ends) if ends else -1


def parse_head(head: bytes) -> Request:
    """The request line and headers of a complete head (see `head_end`)."""
    lines = head.replace(b"\r\n", b"\n").split(b"\n")
    while lines and lines[-1] == b"":
        lines.pop()
    if not lines:
        raise ProtocolError("EX_PROTOCOL", "empty request")
    match = _REQUEST_LINE.fullmatch(lines[0])
    if not match:
        raise ProtocolError("EX_PROTOCOL", "bad request line; expected VERB SPAMC/x.y")
    verb = match.group(1).decode()
    if verb not in VERBS:
        raise ProtocolError("EX_PROTOCOL", f"unknown verb {verb}")
    if len(lines) - 1 > MAX_HEADERS:
        raise ProtocolError("EX_PROTOCOL", f"more than {MAX_HEADERS} headers")
    headers = {}
    for line in lines[1:]:
        found = _HEADER_LINE.fullmatch(line)
        if not found:
            raise ProtocolError("EX_PROTOCOL", "bad header line")
        name = found.group(1).decode().lower()
        if name in headers:
            raise ProtocolError("EX_PROTOCOL", f"header {name} given twice")
        headers[name] = found.group(2).decode("utf-8", "replace")
    return Request(verb, (int(match.group(2)), int(match.group(3))), headers)


# -- verdicts to replies -------------------------------------------------------------


@dataclass
class Verdict:
    """nbcli's answer for one message: its verdict (spam, ham or unsure),
    the class name for the header, P(spam), the log-odds, whether spamd
    calls it spam, the top evidence ((term, contribution) pairs), and the
    model's id; unit: what the contributions are in (`explain.unit`: raw
    log-odds for a calibrated model, unlike the score). scored False: not
    scored (too big, or an error)."""

    verdict: str
    label: str
    p_spam: float
    log_odds: float
    spam: bool
    evidence: list = field(default_factory=list)
    model_id: str = ""
    scored: bool = True
    unit: str = ""


def unscored() -> Verdict:
    return Verdict("ham", "ham", 0.0, 0.0, False, scored=False)


def score_text(log_odds: float) -> str:
    if math.isnan(log_odds):
        log_odds = 0.0
    return f"{max(-SCORE_LIMIT, min(SCORE_LIMIT, log_odds)):.1f}"


def threshold(spam_cutoff: float) -> float:
    """The spam cut-off as a log-odds (T)."""
    if spam_cutoff >= 1.0:
        return SCORE_LIMIT
    if spam_cutoff <= 0.0:
        return -SCORE_LIMIT
    return math.log(spam_cutoff) - math.log1p(-spam_cutoff)


def spam_value(v: Verdict, t: float) -> str:
    return f"{'True' if v.spam else 'False'} ; {score_text(v.log_odds) if v.scored else '0.0'} / {score_text(t)}"


def symbols(v: Verdict) -> str:
    """SYMBOLS' body: `NBCLI_SPAM` (or _HAM, _UNSURE), `NBCLI_MODEL_<id>`,
    then one `NB_<term>` per evidence term, the term's characters outside
    letters, digits and `_.:@-` written as `_` (symbols are comma-separated
    names)."""
    if not v.scored:
        return "NBCLI_NOT_SCORED"
    names = [f"NBCLI_{v.verdict.upper()}"]
    if v.model_id:
        names.append(f"NBCLI_MODEL_{v.model_id}")
    names.extend("NB_" + re.sub(r"[^A-Za-z0-9_.:@-]", "_", term)[:64] for term, _ in v.evidence)
    return ",".join(names)


def report_text(v: Verdict, t: float) -> str:
    """The report REPORT returns (Exim's $spam_report): the verdict, the
    scores, and the terms that pushed the message most toward its class."""
    if not v.scored:
        return "nbcli: message not scored (larger than --max-size, or not readable)\r\n"
    lines = [
        f"nbcli Naive Bayes: {v.verdict} (P(spam) = {v.p_spam:.4f}, score {score_text(v.log_odds)}, "
        f"required {score_text(t)}, model {v.model_id})",
    ]
    if v.evidence:
        lines.append(" contribution  term" + (f"  (contributions in {v.unit})" if v.unit else ""))
        lines.extend(f" {c:+12.2f}  {_printable(term)}" for term, c in v.evidence)
    return "\r\n".join(lines) + "\r\n"


def _printable(text: str) -> str:
    return re.sub(r"[\x00-\x1f\x7f]", "?", text)[:200]


def _reply(headers: list[tuple[str, str]], body: bytes | None = None) -> bytes:
    out = [b"SPAMD/1.1 0 EX_OK\r\n"]
    if body is not None:
        headers = [("Content-length", str(len(body))), *headers]
    out.extend(f"{name}: {value}\r\n".encode("ascii", "replace") for name, value in headers)
    out.append(EOL)
    if body is not None:
        out.append(body)
    return b"".join(out)


def pong() -> bytes:
    return b"SPAMD/1.5 0 PONG\r\n"


def answer(request: Request, v: Verdict, t: float, processed: bytes | None = None) -> bytes:
    """The reply to a scoring verb (CHECK, SYMBOLS, REPORT, REPORT_IFSPAM,
    PROCESS, HEADERS); `processed`, for PROCESS and HEADERS, the message
    with nbcli's headers added (`headers.marked`)."""
    verb, spam = request.verb, ("Spam", spam_value(v, t))
    if verb == "CHECK" or (verb == "REPORT_IFSPAM" and not v.spam):
        return _reply([spam])
    if verb in ("REPORT", "REPORT_IFSPAM", "SYMBOLS"):
        text = symbols(v) + "\r\n" if verb == "SYMBOLS" else report_text(v, t)
        if request.old_layout:  # spamd before 1.3, as Exim parses it
            first = f"{score_text(v.log_odds) if v.scored else '0.0'}/{score_text(t)}\r\n"
            return _reply([], (first + text).encode("utf-8", "replace"))
        return _reply([spam], text.encode("utf-8", "replace"))
    if verb == "PROCESS":
        return _reply([spam], processed)
    if verb == "HEADERS":
        return _reply([spam], header_block(processed))
    raise ProtocolError("EX_PROTOCOL", f"{verb} does not score a message")


def header_block(message: bytes) -> bytes:
    """A message's header block, through the empty line that ends it (or
    all of it, if it has no body)."""
    for sep in (b"\r\n\r\n", b"\n\n"):
        i = message.find(sep)
        if i >= 0:
            return message[: i + len(sep)]
    return message


def tell_reply(did_set: bool, did_remove: bool) -> bytes:
    headers = []
    if did_set:
        headers.append(("DidSet", "local"))
    if did_remove:
        headers.append(("DidRemove", "local"))
    return _reply(headers)


_USER = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._@+-]{0,63}")


def valid_user(name: str) -> bool:
    """A user name that can name a model file: letters, digits and
    `._@+-`, not starting with a dot, at most 64 characters (no `/`, no
    `..` as a whole name, nothing that leaves the models folder)."""
    return bool(_USER.fullmatch(name)) and name not in (".", "..")


def inflate(body: bytes, method: str, limit: int) -> bytes:
    """A body sent with `Compress: zlib` (spamc -z), at most `limit` bytes
    once inflated (--max-size and the margin a plain message is held to: a
    zlib bomb costs no more memory than a plain message may)."""
    import zlib

    if method != "zlib":
        raise ProtocolError("EX_PROTOCOL", f"unknown Compress {method[:20]!r}; only zlib is known")
    inflater = zlib.decompressobj()
    try:
        out = inflater.decompress(body, limit)
    except zlib.error:
        raise ProtocolError("EX_DATAERR", "the zlib body does not inflate") from None
    if inflater.unconsumed_tail:
        raise ProtocolError("EX_DATAERR", f"the message inflates to more than {limit} bytes (--max-size)")
    return out
