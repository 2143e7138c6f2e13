"""RFC 2047 encoded words ("=?utf-8?q?caf=C3=A9?=") in mail headers,
decoded in linear time.

`decode_header` gives what the standard library's email.header.decode_header
gives, in one pass (see below); `mail.header_text` turns its result into
text. It imports nothing of nbcli, and the email package only when a header
holds an encoded word.
"""

from __future__ import annotations

import binascii

# -- RFC 2047 encoded words, in linear time ------------------------------------------
#
# email.header.decode_header gives the header tokens their meaning, but it is
# quadratic three times over: its regular expression rescans the rest of the
# line from every "=?cs?q?" that has no "?=" after it (113 s for a 500 KB
# Subject), and it pops list heads and concatenates bytes in loops. What
# follows is the same algorithm (Python 3.11's, step by step, and
# tests/text/test_mail_adversarial.py checks it gives the same result on random
# headers) with each of those steps done in one pass.


def _encoded_word_at(s: str, i: int, n: int):
    """(q, start) of the encoded word "=?charset?X?" at s[i] ("X" one of
    qQbB; `start` where its encoded text begins), None if there is none
    (the charset runs to the next "?", as in email.header.ecre)."""
    q = s.find("?", i + 2, n)
    if q < 0:
        return -1, -1  # no "?" at all after i: no later word either
    if q + 2 < n and s[q + 1] in "qQbB" and s[q + 2] == "?":
        return q, q + 3
    return q, -1


def _has_encoded_word(s: str) -> bool:
    """Does email.header.ecre.search(s) find an encoded word? (Its charset
    may span lines; its encoded text may not.) Once a line is known to
    hold no "?=" after some point, no later word starting there is
    looked for again."""
    scan, n = 0, len(s)
    dead_lo = dead_hi = -1  # s[dead_lo:dead_hi] holds no "?=" and no newline
    while True:
        i = s.find("=?", scan)
        if i < 0:
            return False
        q, start = _encoded_word_at(s, i, n)
        if q < 0:
            return False
        if start >= 0 and not (dead_lo <= start < dead_hi):
            nl = s.find("\n", start)
            nl = n if nl < 0 else nl
            if s.find("?=", start, nl) >= 0:
                return True
            dead_lo, dead_hi = start, nl
        scan = i + 1


def _split_encoded_words(line: str) -> list[str]:
    """email.header.ecre.split(line) of a line without line breaks:
    [text, charset, encoding, encoded, text, ...]."""
    parts: list[str] = []
    pos = scan = 0
    n = len(line)
    last_end = line.rfind("?=")
    while True:
        i = line.find("=?", scan)
        if i < 0:
            break
        q, start = _encoded_word_at(line, i, n)
        if q < 0:
            break
        if start >= 0:
            if start > last_end:
                break  # no "?=" after it: neither this word nor any later one ends
            end = line.find("?=", start)
            parts += [line[pos:i], line[i + 2 : q], line[q + 1], line[start:end]]
            pos = scan = end + 2
            continue
        scan = i + 1
    parts.append(line[pos:])
    return parts


def decode_header(header: str) -> list[tuple[bytes | str, str | None]]:
    """email.header.decode_header of a str, in linear time (see above)."""
    if not _has_encoded_word(header):
        return [(header, None)]
    import email.base64mime
    import email.quoprimime
    from email.errors import HeaderParseError

    words: list[tuple[str, str | None, str | None]] = []
    for line in header.splitlines():
        parts = _split_encoded_words(line)
        for k in range(0, len(parts), 4):
            unencoded = parts[k].lstrip() if k == 0 else parts[k]
            if unencoded:
                words.append((unencoded, None, None))
            if k + 1 < len(parts):
                words.append((parts[k + 3], parts[k + 2].lower(), parts[k + 1].lower()))
    # whitespace between two encoded words is dropped
    drop = {n - 1 for n, w in enumerate(words) if n > 1 and w[1] and words[n - 2][1] and words[n - 1][0].isspace()}
    if drop:
        words = [w for n, w in enumerate(words) if n not in drop]
    collapsed: list[tuple[bytes | str, str | None]] = []
    run: list[bytes] = []
    last_charset = None
    for encoded, encoding, charset in words:
        word: bytes | str
        if encoding is None:
            word = encoded
        elif encoding == "q":
            word = email.quoprimime.header_decode(encoded)
        else:
            if len(encoded) % 4:  # Postel's law: add missing padding
                encoded += "==="[: 4 - len(encoded) % 4]
            try:
                word = email.base64mime.decode(encoded)
            except binascii.Error:
                raise HeaderParseError("Base64 decoding error") from None
        if isinstance(word, str):
            word = bytes(word, "raw-unicode-escape")
        if run and charset != last_charset:
            collapsed.append(((b" " if last_charset is None else b"").join(run), last_charset))
            run = []
        run.append(word)
        last_charset = charset
    # `run` is not empty here: the header has an encoded word (checked above)
    collapsed.append(((b" " if last_charset is None else b"").join(run), last_charset))
    return collapsed
