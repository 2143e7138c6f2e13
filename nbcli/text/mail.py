"""RFC 822 / MIME messages to text segments and tokens.

`extract(raw)` turns a message into:
- text segments, each tokenized by the analyzer's word rules, some with a
  prefix naming where they came from: the decoded text of every text/* part
  (HTML turned into text) without prefix, and the Subject, From, X-Mailer
  and User-Agent headers with the prefixes "subject:", "from:", "x-mailer:"
  and "user-agent:"; where a multipart/alternative has a plain-text
  version, only that version is read;
- literal tokens, used as they are: header facts ("from-domain:",
  "to-domain:", whole "to:", "cc:" and "delivered-to:" addresses,
  "received:" hosts and IPs, "content-type:"),
  URL tokens ("url:" host and its parent domains, "url-scheme:") from the
  text and from HTML links, and MIME facts ("part:" type of every part,
  "charset:", "encoding:", "attachment:" extension). Attachments'
  contents are never read, and no encoded blob reaches the tokenizer.

Parsing uses the standard library's email package with the compat32 policy
(its default: several times faster than policy.default, and it does not
stall on pathological headers); transfer encodings and charsets are decoded
here with fallbacks, so a broken message still yields what can be read from
it. The email package (and html) are imported only when a message needs
them: a one-message `nbcli predict` of a plain message never loads them.

Every step is linear in the message (an attacker writes it, and one stalled
message stalls the filter): no regular expression here may rescan the rest
of the text from each of many starts, the end of an HTML comment, element
or uuencoded block is found with one search from its start, and what is
not terminated is decided on the spot (see html_to_text, _drop_uuencoded);
RFC 2047 words are decoded here in one pass (decode_header), and the
email package's address parser gets a budget per message. The analysis of
a message is thus bounded by its size (at most max_bytes) times a constant:
tests/text/test_mail_adversarial.py and `make bench-adversarial` check it.

This module reads a message's structure (the MIME parts, the fast path for
single-part text) and its header tokens; `encoded_words` decodes RFC 2047
words in headers and `body_text` reads a text part's HTML, URLs and encoded
blobs (both import nothing of nbcli, which keeps the analyzer above them at
most 3 imports high, issue 26).
"""

from __future__ import annotations

import binascii
import codecs
import re
from dataclasses import dataclass, field

from nbcli.defaults import DEFAULT_MAX_MESSAGE_BYTES
from nbcli.text.body_text import html_to_text, strip_encoded, url_tokens, urls_in_lowercase
from nbcli.text.decode import decode_bytes
from nbcli.text.encoded_words import decode_header

_HEADER_NAME = re.compile(rb"[!-9;-~]+:")
_MAIL_HEADERS = {
    b"from",
    b"to",
    b"cc",
    b"subject",
    b"date",
    b"received",
    b"message-id",
    b"return-path",
    b"mime-version",
    b"content-type",
    b"delivered-to",
    b"reply-to",
    b"sender",
    b"x-mailer",
}


def looks_like_mail(data: bytes) -> bool:
    """Does `data` start like an RFC 822 message (an mbox From_ line, or a
    header block with at least one of the usual mail header fields)?"""
    if data.startswith(b"From "):
        return True
    seen = False
    for line in data[:8192].split(b"\n")[:60]:
        line = line.rstrip(b"\r")
        if not line:
            return seen
        if line[:1] in (b" ", b"\t"):
            continue
        match = _HEADER_NAME.match(line)
        if not match:
            return False
        seen = seen or line[: match.end() - 1].lower() in _MAIL_HEADERS
    return seen


@dataclass
class MailText:
    """What the analyzer needs from one message."""

    segments: list[tuple[str, str]] = field(default_factory=list)  # (prefix, lowercased text)
    literals: list[str] = field(default_factory=list)


# -- decoding helpers --------------------------------------------------------------

_codec_cache: dict[str, str | None] = {}


# Python codecs that are no MIME charset and whose decoders are quadratic.
_NOT_CHARSETS = {"punycode", "idna"}


def _codec(charset) -> str | None:
    """A text codec for a MIME charset name, or None if Python has none.
    (Names longer than any codec's are not looked up, nor cached: the cache
    must not grow with what a stream of crafted messages declares.)"""
    name = str(charset).strip().strip('"').lower()
    if len(name) > 40:
        return None
    if name not in _codec_cache:
        if len(_codec_cache) > 1000:
            _codec_cache.clear()
        try:
            info = codecs.lookup(name)
            ok = getattr(info, "_is_text_encoding", True) and info.name not in _NOT_CHARSETS
            _codec_cache[name] = info.name if ok else None
        except (LookupError, ValueError, TypeError):
            _codec_cache[name] = None
    return _codec_cache[name]


def decode_charset(data: bytes, charset) -> str:
    """Decode with the declared charset; if it is unknown or wrong, fall back
    to nbcli's decoding rule (UTF-8, then Windows-1252)."""
    if charset:
        name = _codec(charset)
        if name is not None:
            try:
                return data.decode(name)
            except Exception:  # any codec failure: fall back
                pass
    return decode_bytes(data)


def header_text(value) -> str:
    """A header's text with RFC 2047 encoded words and raw 8-bit decoded."""
    if value is None:
        return ""
    if isinstance(value, str) and value.isascii() and "=?" not in value:
        return value  # what the general path below gives, without its cost
    try:
        if isinstance(value, str):
            parts = decode_header(value)
        else:  # an email.header.Header (compat32 gives one for raw 8-bit)
            from email.header import decode_header as email_decode_header

            parts = email_decode_header(value)
    except Exception:
        parts = [(str(value), None)]
    out = []
    for chunk, charset in parts:
        if isinstance(chunk, str):
            chunk = chunk.encode("ascii", "surrogateescape")
            charset = None
        out.append(decode_charset(chunk, charset))
    return "".join(out)


_B64_BODY = re.compile(rb"[A-Za-z0-9+/\s]*")
_NOT_B64 = re.compile(rb"[^A-Za-z0-9+/]")


def _base64(raw: bytes) -> bytes:
    """Lenient base64: decode up to the first character that cannot be part
    of base64 (padding, or junk), fixing the length; never return the
    encoded text itself."""
    body = _B64_BODY.match(raw)  # matches always (maybe nothing)
    data = _NOT_B64.sub(b"", body.group() if body else b"")
    if len(data) % 4 == 1:
        data = data[:-1]
    data += b"=" * (-len(data) % 4)
    try:
        return binascii.a2b_base64(data)
    except binascii.Error:
        return b""


def part_bytes(part) -> bytes | None:
    """A leaf part's body with its transfer encoding undone (raw 8-bit bytes
    kept as they are; base64 decoded leniently, never passed on encoded)."""
    encoding = str(part.get("content-transfer-encoding", "")).strip().lower()
    if encoding == "base64":
        payload = part.get_payload()
        if not isinstance(payload, str):
            return None
        return _base64(payload.encode("ascii", "ignore"))
    data = part.get_payload(decode=True)
    return data if isinstance(data, bytes) else None


# -- headers -------------------------------------------------------------------------

_RECEIVED_IP = re.compile(r"\[(\d{1,3}(?:\.\d{1,3}){3})\]")
# On lowercased text. Without a leading \b (3x faster; on the 30k Received
# headers of the SpamAssassin corpus it finds exactly the same hosts).
_RECEIVED_HOST = re.compile(r"(?:from|by)\s+([a-z0-9-]+(?:\.[a-z0-9-]+)+)")
_ADDRESS_HEADERS = ("to", "cc")
_RECIPIENT_HEADERS = ("to", "cc", "delivered-to")


def _domain(address: str) -> str:
    return address.rpartition("@")[2].strip().strip(">").lower()


_SPECIALS = re.compile(r'["()\\:;\[\]]')
_ANGLE_ADDR = re.compile(r"\s*(?:[\w.'+-]+(?:\s+[\w.'+-]+)*\s*)?<([^<>\s@,]+@[^<>\s@,]+)>\s*")
_BARE_ADDR = re.compile(r"\s*([^<>\s@,]+@[^<>\s@,]+)\s*")
# Addresses anywhere in a text, for what getaddresses is not given: each
# starts after a delimiter (so each run is scanned once).
_ADDR_SPEC = re.compile(r'(?<![^\s<>,;:"()\[\]\\])[^\s<>,;:"()\[\]\\@]+@[^\s<>,;:"()\[\]\\@]+')
_address_cache: dict[str, list[str]] = {}
# Characters of header values one message may send to getaddresses: it is
# linear but costs ~2 us a character (and recurses once per "(" or ":"),
# 50 times the rest of the analysis. Ordinary mail stays far below this.
_GETADDRESSES_BUDGET = 16384


def _addresses(value: str, budget: list[int]) -> list[str]:
    """The addresses in a header value, as email.utils.getaddresses finds
    them. The common shapes ("Name <a@b>", "a@b", lists of them) are read
    with two small patterns; anything with quotes, comments or groups goes
    to getaddresses (slow), whose results are cached, while the message's
    `budget` of characters lasts; after it, or if getaddresses fails, the
    addr-specs ("local@domain") in the value are taken as they are."""
    if not _SPECIALS.search(value):
        found = []
        for piece in value.split(","):
            match = _ANGLE_ADDR.fullmatch(piece) or _BARE_ADDR.fullmatch(piece)
            if match is None:
                if piece.strip():
                    break
                continue
            found.append(match.group(1))
        else:
            return found
    cached = _address_cache.get(value)
    if cached is None:
        if len(value) > budget[0]:
            return _ADDR_SPEC.findall(value)
        budget[0] -= len(value)
        from email.utils import getaddresses

        try:
            cached = [address for _, address in getaddresses([value])]
        except Exception:  # RecursionError on "((((...", for one
            cached = _ADDR_SPEC.findall(value)
        if len(value) <= 1000:
            if len(_address_cache) > 20000:
                _address_cache.clear()
            _address_cache[value] = cached
    return cached


def _header_tokens(msg, literals: list[str], segments: list[tuple[str, str]]) -> None:
    subject = header_text(msg.get("subject"))
    if subject:
        segments.append(("subject:", subject.lower()))
    budget = [_GETADDRESSES_BUDGET]
    sender = header_text(msg.get("from"))
    if sender:
        segments.append(("from:", sender.lower()))
        for address in _addresses(sender, budget):
            if "@" in address:
                literals.append(f"from-domain:{_domain(address)}")
    # Whole recipient addresses: which of your addresses (or lists, or
    # tagged sign-up addresses) a message came to is strong evidence.
    for name in _RECIPIENT_HEADERS:
        for value in msg.get_all(name) or []:
            addresses = _addresses(header_text(value), budget)
            if name in _ADDRESS_HEADERS:
                literals.extend(f"{name}-domain:{_domain(a)}" for a in addresses if "@" in a)
            literals.extend(f"{name}:{a.lower()}" for a in addresses if a)
    received = msg.get_all("received")
    if received:
        value = "\n".join(map(str, received)).lower()
        literals.extend(f"received:{host}" for host in _RECEIVED_HOST.findall(value))
        for ip in _RECEIVED_IP.findall(value):
            literals.append(f"received:{ip}")
            literals.append(f"received:{ip.rsplit('.', 1)[0]}")
    for name in ("x-mailer", "user-agent"):
        value = msg.get(name)
        if value is not None:
            segments.append((f"{name}:", header_text(value).lower()))
    literals.append(f"content-type:{msg.get_content_type()}")


# -- the whole message ---------------------------------------------------------------


# Leaf parts read per message: far more than any real message has; a crafted
# one holds 15,000 in 500 KB, and reading each costs more than parsing it.
_MAX_PARTS = 1000
# The email package checks every line against every open multipart
# boundary, so its time grows as nesting depth x lines: 800 levels and
# 100,000 "--b" lines (451 KB) took 6 s. Real mail declares a handful of
# boundaries (at most 2 in each of the 6,047 SpamAssassin messages; forwards
# of forwards reach perhaps 10), so the message is read only up to the line
# that declares the 17th, which bounds the depth and so the work per line.
_MAX_BOUNDARIES = 16
_BOUNDARY_PARAM = re.compile(rb"[Bb][Oo][Uu][Nn][Dd][Aa][Rr][Yy][*0-9]*[ \t]*=")


def _limit_nesting(raw: bytes, literals: list[str]) -> bytes:
    """`raw` up to the line declaring its (_MAX_BOUNDARIES + 1)-th MIME
    boundary (with the token message:deep-mime), or all of it."""
    for found, match in enumerate(_BOUNDARY_PARAM.finditer(raw), 1):
        if found > _MAX_BOUNDARIES:
            literals.append("message:deep-mime")
            return raw[: raw.rfind(b"\n", 0, match.start()) + 1]
    return raw


def extract(raw: bytes, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES, fast: bool = True) -> MailText:
    """Text segments and literal tokens of a raw message (see module doc).
    fast=False sends every message through the email package (for tests)."""
    out = MailText()
    if len(raw) > max_bytes:
        raw = raw[:max_bytes]
        out.literals.append("message:truncated")
    split = _split_message(raw) if fast else None
    if split is not None and _is_simple(split[0]):
        headers, body = split
        urls: list[str] = []
        _header_tokens(headers, out.literals, out.segments)
        charset = headers.charset()
        _leaf(
            out,
            urls,
            headers.get_content_type(),
            headers.get("content-transfer-encoding"),
            None,
            charset,
            lambda: _decode_transfer(body, headers.get("content-transfer-encoding")),
        )
        for url in urls:
            url_tokens(url, out.literals)
        return out
    from email import message_from_bytes  # its default policy is compat32

    raw = _limit_nesting(raw, out.literals)
    try:
        msg = message_from_bytes(raw)
    except Exception:  # compat32 hardly ever raises; if it does, read it as text
        out.segments.append(("", decode_bytes(raw).lower()))
        out.literals.append("message:unparsable")
        return out
    try:
        # a clean header block gives the same header tokens, read faster
        _header_tokens(split[0] if split is not None else msg, out.literals, out.segments)
    except Exception:
        out.literals.append("message:bad-headers")
    urls = []
    skip = _unchosen_alternatives(msg)
    leaves = 0
    for part in msg.walk():
        if part.is_multipart() or id(part) in skip:
            continue
        leaves += 1
        if leaves > _MAX_PARTS:
            out.literals.append("message:many-parts")
            break
        try:
            _part(part, out, urls)
        except Exception:
            out.literals.append("message:bad-part")
    for url in urls:
        url_tokens(url, out.literals)
    return out


# -- the fast path: single-part text messages ------------------------------------
#
# Most mail is one text part. For those, splitting the header block into
# fields and undoing the transfer encoding is all the email package would do,
# and doing it here with one regular expression is 3-4 times faster. Anything
# else (multipart or message/* types, non-text parts, RFC 2231 parameters,
# uuencode, a header block that is not clean RFC 5322 fields) goes to the
# email package, which then still gets its header tokens from the fields
# read here when the header block is clean. tests/text/test_mail.py checks that
# both paths give the same tokens on every message of the sample corpora.

_CHARSET = re.compile(r'(?i);\s*charset\s*=\s*"?([^";\s]*)"?')
# The fields _header_tokens and the fast path read; the others are skipped.
_WANTED = {
    "subject",
    "from",
    "to",
    "cc",
    "delivered-to",
    "received",
    "x-mailer",
    "user-agent",
    "content-type",
    "content-transfer-encoding",
    "content-disposition",
}
# A clean header block: every line a field ("Name: value") or a continuation.
_CLEAN_BLOCK = re.compile(rb"(?:[!-9;-~]+:[^\n]*\n(?:[ \t][^\n]*\n)*)+")


def _any_case(name: str) -> str:
    return "".join(f"[{c.upper()}{c}]" if c.isalpha() else re.escape(c) for c in name)


def _wanted_field_pattern(names) -> str:
    by_first: dict[str, list[str]] = {}
    for name in sorted(names, key=len, reverse=True):
        by_first.setdefault(name[0], []).append(name)
    alternatives = "|".join(
        _any_case(first) + "(?:" + "|".join(_any_case(n[1:]) for n in group) + ")" for first, group in by_first.items()
    )
    return r"\n(" + alternatives + r"):[ \t]*([^\n]*(?:\n[ \t][^\n]*)*)"


# The wanted fields of a clean block, with "\n" put in front of the block:
# the pattern then starts with a literal, which the regex engine finds fast.
# Names are matched case-insensitively, spelt out as character classes and
# grouped by first letter (faster than the (?i) flag on an alternation).
_WANTED_FIELD = re.compile(_wanted_field_pattern(_WANTED))
_SIMPLE_ENCODINGS = {"", "7bit", "8bit", "binary", "base64", "quoted-printable"}


class _Headers:
    """The header fields of a simple message, with the part of the
    email.message.Message interface that _header_tokens uses."""

    def __init__(self, fields: dict[str, list[str]]):
        self.fields = fields

    def get(self, name: str, default=None):
        values = self.fields.get(name)
        return values[0] if values else default

    def get_all(self, name: str):
        return self.fields.get(name)

    def get_content_type(self) -> str:
        value = self.get("content-type")
        if value is None:
            return "text/plain"
        ctype = value.split(";", 1)[0].strip().lower()
        return ctype if ctype.count("/") == 1 else "text/plain"

    def charset(self):
        match = _CHARSET.search(self.get("content-type", ""))
        return match.group(1).lower() if match else None


def _split_message(raw: bytes):
    """(headers, body bytes) of a message whose header block is clean (every
    line a field or a continuation), else None."""
    start = 0
    if raw.startswith(b"From "):
        start = raw.find(b"\n") + 1
        if start == 0:
            return None
    end = raw.find(b"\n\n", start)
    end_crlf = raw.find(b"\n\r\n", start, len(raw) if end < 0 else end + 2)  # only one before end counts
    if end < 0 and end_crlf < 0:
        return None
    if end_crlf >= 0 and (end < 0 or end_crlf < end):
        block, body = raw[start : end_crlf + 1], raw[end_crlf + 3 :]
    else:
        block, body = raw[start : end + 1], raw[end + 2 :]
    if not _CLEAN_BLOCK.fullmatch(block):
        return None  # some line is neither a field nor a continuation
    fields: dict[str, list[str]] = {}
    for name, value in _WANTED_FIELD.findall("\n" + block.decode("ascii", "surrogateescape")):
        fields.setdefault(name.lower(), []).append(value.rstrip("\r"))
    return _Headers(fields), body


def _is_simple(headers: _Headers) -> bool:
    """Is this a single-part text message the fast path can read?"""
    params = headers.get("content-type", "").partition(";")[2]
    return not (
        not headers.get_content_type().startswith("text/")
        or "*" in params  # RFC 2231 parameters
        or "name" in params.lower()  # a file name: let the email package read it
        or "name" in headers.get("content-disposition", "").lower()
        or str(headers.get("content-transfer-encoding", "")).strip().lower() not in _SIMPLE_ENCODINGS
    )


def _decode_transfer(body: bytes, encoding) -> bytes:
    encoding = str(encoding or "").strip().lower()
    if encoding == "base64":
        return _base64(body)
    if encoding == "quoted-printable":
        return binascii.a2b_qp(body)
    return body


def _unchosen_alternatives(msg) -> set[int]:
    """ids of the parts not read: where a multipart/alternative offers a
    text/plain version, its other leaf versions (usually the HTML) are
    skipped, so the same text is not counted twice."""
    skip: set[int] = set()
    for part in msg.walk():
        if part.get_content_type() != "multipart/alternative":
            continue
        children = part.get_payload()
        if not isinstance(children, list):
            continue
        leaves = [c for c in children if not isinstance(c, str) and not c.is_multipart()]
        if any(c.get_content_type() == "text/plain" for c in leaves):
            skip.update(id(c) for c in leaves if c.get_content_type() != "text/plain")
    return skip


def _part(part, out: MailText, urls: list[str]) -> None:
    charset = part.get_param("charset")
    if isinstance(charset, tuple):  # RFC 2231 form
        charset = charset[2]
    _leaf(
        out,
        urls,
        part.get_content_type(),
        part.get("content-transfer-encoding"),
        part.get_filename(),
        charset,
        lambda: part_bytes(part),
    )


def _leaf(out: MailText, urls: list[str], ctype: str, encoding, filename, charset, body_of) -> None:
    """Tokens of one leaf part: its type, encoding and file name, and for a
    text part its decoded text (body_of() gives the decoded bytes)."""
    out.literals.append(f"part:{ctype}")
    encoding = str(encoding or "").strip().lower()
    if encoding and encoding not in ("7bit", "8bit"):
        out.literals.append(f"encoding:{encoding}")
    if filename:
        ext = str(filename).rpartition(".")[2].lower() if "." in str(filename) else ""
        out.literals.append(f"attachment:{ext[:10] or 'none'}")
    if not ctype.startswith("text/"):
        return  # attachments: their type is a token, their contents are not read
    body = body_of()
    if body is None:
        return
    if charset:
        out.literals.append(f"charset:{str(charset).lower()[:30]}")
    text = decode_charset(body, charset)
    if ctype == "text/html":
        text, links = html_to_text(text)  # lowercased
        urls.extend(links)
    else:
        text = text.lower()
    urls.extend(urls_in_lowercase(text))
    out.segments.append(("", strip_encoded(text, out.literals)))
