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
(several times faster than policy.default, and it does not stall on
pathological headers); transfer encodings and charsets are decoded here with
fallbacks, so a broken message still yields what can be read from it.
"""

from __future__ import annotations

import binascii
import codecs
import html
import re
from dataclasses import dataclass, field
from email import message_from_bytes
from email.header import decode_header
from email.policy import compat32
from email.utils import getaddresses

from nbcli.decode import decode_bytes
from nbcli.defaults import DEFAULT_MAX_MESSAGE_BYTES  # noqa: F401 (re-exported)

_HEADER_NAME = re.compile(rb"[!-9;-~]+:")
_MAIL_HEADERS = {
    b"from", b"to", b"cc", b"subject", b"date", b"received", b"message-id", b"return-path",
    b"mime-version", b"content-type", b"delivered-to", b"reply-to", b"sender", b"x-mailer",
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

    segments: list[tuple[str, str]] = field(default_factory=list)  # (prefix, text)
    literals: list[str] = field(default_factory=list)


# -- decoding helpers --------------------------------------------------------------

_codec_cache: dict[str, str | None] = {}


def _codec(charset) -> str | None:
    """A text codec for a MIME charset name, or None if Python has none."""
    name = str(charset).strip().strip('"').lower()
    if name not in _codec_cache:
        try:
            info = codecs.lookup(name)
            ok = getattr(info, "_is_text_encoding", True)
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
    try:
        parts = decode_header(value)
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
    data = _NOT_B64.sub(b"", _B64_BODY.match(raw).group())
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


# -- HTML and URLs -----------------------------------------------------------------

_SCRIPT = re.compile(r"(?is)<(script|style|head)\b.*?</\1\s*>")
_COMMENT = re.compile(r"(?s)<!--.*?-->")
_INLINE_TAG = re.compile(r"(?is)</?(?:b|i|u|em|strong|font|span|small|big|sup|sub|a)\b[^>]*>")
_TAG = re.compile(r"(?s)<[^>]*>")
_LINK = re.compile(r"""(?i)\b(?:href|src|action)\s*=\s*["']?([^"'\s>]+)""")
_URL = re.compile(r"(?i)\b((?:https?|ftp)://[^\s<>\"'()\[\]{}]+|www\.[a-z0-9-]+\.[^\s<>\"'()\[\]{}]+)")
_HOST = re.compile(r"(?i)^(?:([a-z][a-z0-9+.-]*):)?(?://)?(?:[^@/?#]*@)?([a-z0-9.-]+)")
_IP = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
_UUENCODED = re.compile(r"(?m)^begin [0-7]{3,4} ([^\n]*)\n(?:[^\n]*\n)*?end[ \t]*$")
_BLOB_LINE = re.compile(r"(?m)^[ \t]*[A-Za-z0-9+/]{40,}={0,2}[ \t]*$")


def strip_encoded(text: str, literals: list[str]) -> str:
    """Remove uuencoded blocks and base64-looking lines from a text part, so
    no encoded blob reaches the tokenizer; a uuencoded file leaves an
    "attachment:" token for its extension."""
    if "begin " in text:
        def drop(match):
            name = match.group(1).strip()
            ext = name.rpartition(".")[2].lower() if "." in name else "none"
            literals.append(f"attachment:{ext[:10]}")
            return " "
        text = _UUENCODED.sub(drop, text)
    return _BLOB_LINE.sub(" ", text)


def html_to_text(markup: str) -> tuple[str, list[str]]:
    """Visible text of an HTML document (tags stripped, entities decoded;
    comments and inline tags removed without a gap, so words split by them
    join up again), and the URLs of its links and images."""
    links = _LINK.findall(markup)
    text = _SCRIPT.sub(" ", markup)
    text = _COMMENT.sub("", text)
    text = _INLINE_TAG.sub("", text)
    text = _TAG.sub(" ", text)
    return html.unescape(text), links


def url_tokens(url: str, out: list[str]) -> None:
    """url-scheme:, url: host and each parent domain (or url-ip: for IPs)."""
    match = _HOST.match(url.strip())
    if not match:
        return
    scheme, host = match.group(1), match.group(2).lower().strip(".")
    if scheme:
        out.append(f"url-scheme:{scheme.lower()}")
    elif url.lower().startswith("www."):
        out.append("url-scheme:none")
    if not host:
        return
    if _IP.match(host):
        out.append(f"url-ip:{host}")
        out.append(f"url-ip:{host.rsplit('.', 1)[0]}")
        return
    labels = host.split(".")
    for i in range(len(labels) - 1):
        out.append("url:" + ".".join(labels[i:]))


# -- headers -------------------------------------------------------------------------

_RECEIVED_IP = re.compile(r"\[(\d{1,3}(?:\.\d{1,3}){3})\]")
_RECEIVED_HOST = re.compile(r"(?i)\b(?:from|by)\s+([a-z0-9-]+(?:\.[a-z0-9-]+)+)")
_ADDRESS_HEADERS = ("to", "cc")
_RECIPIENT_HEADERS = ("to", "cc", "delivered-to")


def _domain(address: str) -> str:
    return address.rpartition("@")[2].strip().strip(">").lower()


def _header_tokens(msg, literals: list[str], segments: list[tuple[str, str]]) -> None:
    subject = header_text(msg.get("subject"))
    if subject:
        segments.append(("subject:", subject))
    sender = header_text(msg.get("from"))
    if sender:
        segments.append(("from:", sender))
        for _, address in getaddresses([sender]):
            if "@" in address:
                literals.append(f"from-domain:{_domain(address)}")
    for name in _ADDRESS_HEADERS:
        values = msg.get_all(name) or []
        for _, address in getaddresses([header_text(v) for v in values]):
            if "@" in address:
                literals.append(f"{name}-domain:{_domain(address)}")
    # Whole recipient addresses: which of your addresses (or lists, or
    # tagged sign-up addresses) a message came to is strong evidence.
    for name in _RECIPIENT_HEADERS:
        for value in msg.get_all(name) or []:
            for _, address in getaddresses([header_text(value)]):
                if address:
                    literals.append(f"{name}:{address.lower()}")
    for value in msg.get_all("received") or []:
        value = str(value)
        for host in _RECEIVED_HOST.findall(value):
            literals.append(f"received:{host.lower()}")
        for ip in _RECEIVED_IP.findall(value):
            literals.append(f"received:{ip}")
            literals.append(f"received:{ip.rsplit('.', 1)[0]}")
    for name in ("x-mailer", "user-agent"):
        value = msg.get(name)
        if value is not None:
            segments.append((f"{name}:", header_text(value)))
    literals.append(f"content-type:{msg.get_content_type()}")


# -- the whole message ---------------------------------------------------------------


def extract(raw: bytes, max_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> MailText:
    """Text segments and literal tokens of a raw message (see module doc)."""
    out = MailText()
    if len(raw) > max_bytes:
        raw = raw[:max_bytes]
        out.literals.append("message:truncated")
    try:
        msg = message_from_bytes(raw, policy=compat32)
    except Exception:  # compat32 hardly ever raises; if it does, read it as text
        out.segments.append(("", decode_bytes(raw)))
        out.literals.append("message:unparsable")
        return out
    try:
        _header_tokens(msg, out.literals, out.segments)
    except Exception:
        out.literals.append("message:bad-headers")
    urls: list[str] = []
    skip = _unchosen_alternatives(msg)
    for part in msg.walk():
        if part.is_multipart() or id(part) in skip:
            continue
        try:
            _part(part, out, urls)
        except Exception:
            out.literals.append("message:bad-part")
    for url in urls:
        url_tokens(url, out.literals)
    return out


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
    ctype = part.get_content_type()
    out.literals.append(f"part:{ctype}")
    encoding = str(part.get("content-transfer-encoding", "")).strip().lower()
    if encoding and encoding not in ("7bit", "8bit"):
        out.literals.append(f"encoding:{encoding}")
    filename = part.get_filename()
    if filename:
        ext = str(filename).rpartition(".")[2].lower() if "." in str(filename) else ""
        out.literals.append(f"attachment:{ext[:10] or 'none'}")
    if part.get_content_maintype() != "text":
        return  # attachments: their type is a token, their contents are not read
    body = part_bytes(part)
    if body is None:
        return
    charset = part.get_param("charset")
    if isinstance(charset, tuple):  # RFC 2231 form
        charset = charset[2]
    if charset:
        out.literals.append(f"charset:{str(charset).lower()[:30]}")
    text = decode_charset(body, charset)
    if part.get_content_subtype() == "html":
        text, links = html_to_text(text)
        urls.extend(links)
    urls.extend(_URL.findall(text))
    out.segments.append(("", strip_encoded(text, out.literals)))
