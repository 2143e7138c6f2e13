"""The text of a mail body part: HTML to visible text, URLs to tokens, and
encoded blobs kept from the tokenizer.

`mail` reads a message's parts and hands each text part here:
`html_to_text` for HTML (the text a reader sees, and the URLs of its links),
`strip_encoded` to drop uuencoded files and base64-looking lines,
`urls_in_lowercase` for the URLs written in the text, and `url_tokens` for
the "url:" tokens of each. Every step is linear in its input (see below).
It imports nothing of nbcli, and the html module only for markup that holds
an entity.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

# -- HTML and URLs -----------------------------------------------------------------

# All on lowercased HTML (so no case-insensitive matching, which is slower).
#
# Every step is linear in the markup: no pattern may scan the rest of the
# text from each of many starts (an unterminated "<!--", "<script" or "<"
# repeated 100,000 times made one message take minutes). The end of an
# element or comment is found with a literal search from its start, once;
# what is not terminated is decided on the spot:
# - an unterminated <script> or <style> element runs to the end of the text
#   (as in a browser: what follows is never shown; no real message in the
#   sample and SpamAssassin corpora has one), except inside a comment, where
#   it is only a tag ("<!-- <script src=...> -->" hides nothing after it);
# - an unterminated <head> element is only a tag (browsers show the body);
# - an unterminated comment is only a tag, "<!--" up to the next ">", as it
#   always was here: spam writes "<!--#rotate>" before its text (2 of the
#   SpamAssassin corpus), which a browser would hide but a reader saw;
# - a tag is "<" up to the next ">"; a "<" with no ">" after it is text.
_HIDDEN_OPEN = re.compile(r"<(script|style|head)\b")
_HIDDEN_CLOSE = {name: re.compile(rf"</{name}\s*>") for name in ("script", "style", "head")}
# Comments and inline tags: removed without a gap.
_NO_GAP = re.compile(r"(?s)<(?:!--.*?-->|/?(?:b|i|u|em|strong|font|span|small|big|sup|sub|a)\b[^>]*>)")
_NO_GAP_START = re.compile(r"<(?:!--|/?(?:b|i|u|em|strong|font|span|small|big|sup|sub|a)\b[^>]*>)")
_TAG = re.compile(r"(?s)<[^>]*>")
# One pattern per attribute, each starting with a literal (which the regex
# engine finds with a fast scan; one alternation is tried at every
# position, 2-3x slower). No leading \b: "datasrc=" counts too.
_LINKS = tuple(re.compile(name + r"""\s*=\s*["']?([^"'\s>]+)""") for name in ("href", "src", "action"))
_URL_REST = re.compile(r"[^\s<>\"'()\[\]{}]+")
_WWW = re.compile(r"www\.[a-z0-9-]+\.[^\s<>\"'()\[\]{}]+")
_SCHEMES = ("https", "http", "ftp")
_HOST = re.compile(r"(?i)^(?:([a-z][a-z0-9+.-]*):)?(?://)?(?:[^@/?#]*@)?([a-z0-9.-]+)")
_IP = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
# A uuencoded block: a "begin" line, then lines up to the first "end" line;
# each found with a search from where the last one stopped.
_UU_BEGIN = re.compile(r"(?m)^begin [0-7]{3,4} ([^\n]*)\n")
_UU_END = re.compile(r"(?m)^end[ \t]*$")
_BLOB_LINE = re.compile(r"(?m)^[ \t]*[A-Za-z0-9+/]{40,}={0,2}[ \t]*$")
_BLOB_HINT = re.compile(r"\n[ \t]*[A-Za-z0-9+/]{40}")  # starts with a literal: a fast search
_BLOB_START = re.compile(r"[ \t]*[A-Za-z0-9+/]{40}")


def strip_encoded(text: str, literals: list[str]) -> str:
    """Remove uuencoded blocks and base64-looking lines from a text part, so
    no encoded blob reaches the tokenizer; a uuencoded file leaves an
    "attachment:" token for its extension. (It gets lowercased text, so a
    block written "BEGIN 644 ... END" counts too.)"""
    if "begin " in text:
        text = _drop_uuencoded(text, literals)
    if not _BLOB_HINT.search(text) and not _BLOB_START.match(text):
        return text  # the common case, found with a fast scan for line starts
    return _BLOB_LINE.sub(" ", text)


def _drop_uuencoded(text: str, literals: list[str]) -> str:
    """Each uuencoded block replaced by a space. A "begin" line without an
    "end" line after it is text, and so is every later one (there is no
    "end" after them either): the search stops there instead of scanning
    the rest of the text again from each of them."""
    out, pos = [], 0
    begin = _UU_BEGIN.search(text)
    while begin is not None:
        end = _UU_END.search(text, begin.end())
        if end is None:
            break
        name = begin.group(1).strip()
        ext = name.rpartition(".")[2].lower() if "." in name else "none"
        literals.append(f"attachment:{ext[:10]}")
        out += [text[pos : begin.start()], " "]
        pos = end.end()
        begin = _UU_BEGIN.search(text, pos)
    if not out:
        return text
    out.append(text[pos:])
    return "".join(out)


def _starts_word(text: str, i: int) -> bool:
    return i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")


def urls_in_lowercase(low: str) -> list[str]:
    """URLs in lowercased text: http(s):// and ftp:// URLs, and bare www.
    hosts outside them, each starting at a word boundary. (A search for
    "://" and "www." plus a match there: several times faster than one
    regular expression scanning every position.)"""
    found, spans = [], []
    i = low.find("://")
    while i >= 0:
        nxt = i + 3
        for scheme in _SCHEMES:
            start = i - len(scheme)
            if start >= 0 and low.startswith(scheme, start) and _starts_word(low, start):
                rest = _URL_REST.match(low, i + 3)
                if rest:
                    found.append((start, low[start : rest.end()]))
                    spans.append((start, rest.end()))
                    nxt = rest.end()
                break
        i = low.find("://", nxt)
    j = low.find("www.")
    k = 0
    while j >= 0:
        while k < len(spans) and spans[k][1] <= j:
            k += 1
        inside = k < len(spans) and spans[k][0] <= j
        match = None if inside or not _starts_word(low, j) else _WWW.match(low, j)
        if match:
            found.append((j, match.group()))
            j = low.find("www.", match.end())
        else:
            j = low.find("www.", j + 4)
    found.sort()
    return [url for _, url in found]


class _Comments:
    """Is a position inside a comment ("<!--" up to the next "-->", or to
    the end)? Asked for positions in increasing order, it scans the text
    forward once."""

    def __init__(self, text: str):
        self.text = text
        self.start = -1  # the last comment found: text[start:end]
        self.end = 0
        self.next: int | None = None  # where the next comment starts (-1: none), once looked for

    def covers(self, pos: int) -> bool:
        text = self.text
        while self.end <= pos:
            if self.next is None:
                self.next = text.find("<!--", self.end)
            if self.next < 0 or self.next >= pos:
                return False
            close = text.find("-->", self.next + 4)
            self.start, self.end, self.next = self.next, len(text) if close < 0 else close + 3, None
        return self.start < pos


def _drop_hidden_elements(text: str) -> str:
    """<script>, <style> and <head> elements replaced by a space (see the
    rules above). Each element's end is searched for once, from its start,
    and the search goes on after it; a missing </head> is noted, so it is
    looked for at most once."""
    match = _HIDDEN_OPEN.search(text)
    if match is None:
        return text
    out, pos, unclosed, comments = [], 0, set(), _Comments(text)
    while match is not None:
        name = match.group(1)
        close = None if name in unclosed else _HIDDEN_CLOSE[name].search(text, match.end())
        if close is not None:
            out += [text[pos : match.start()], " "]
            pos = close.end()
            match = _HIDDEN_OPEN.search(text, pos)
        elif name != "head" and not comments.covers(match.start()):
            out += [text[pos : match.start()], " "]
            pos = len(text)  # runs to the end
            break
        else:
            unclosed.add(name)
            match = _HIDDEN_OPEN.search(text, match.end())
    out.append(text[pos:])
    return "".join(out)


def _no_tag_after_last_gt(pattern: re.Pattern, repl: str, text: str) -> str:
    """pattern.sub(repl, text) for a pattern of tags ending in ">", which
    matches nothing after the last ">" of the text: it is not tried there
    (from each "<" there it would scan to the end of the text, and fail)."""
    end = text.rfind(">") + 1
    if text.find("<", end) < 0:  # the usual case: nothing to keep out
        return pattern.sub(repl, text)
    return pattern.sub(repl, text[:end]) + text[end:]


def _drop_comments_and_inline_tags(text: str) -> str:
    """Comments and inline tags removed without a gap (an unterminated
    comment is left for the tag pass)."""
    opener = text.rfind("<!--")
    if opener < 0 or text.find("-->", opener + 4) >= 0:
        # Every "<!--" has a "-->" after it and every tag that can match a
        # ">": the pattern never scans past text it then removes.
        return _no_tag_after_last_gt(_NO_GAP, "", text)
    # Some "<!--" has no "-->" after it (nor has any later one): the
    # pattern would scan to the end from each of them.
    last_gt = text.rfind(">")
    out, pos, scan, closed = [], 0, 0, True
    while True:
        match = _NO_GAP_START.search(text, scan, last_gt + 1)
        if match is None:
            break
        start = match.start()
        if match.end() - start == 4 and text.startswith("<!--", start):
            end = text.find("-->", start + 4) if closed else -1
            if end < 0:
                closed = False  # neither this comment nor any later one ends
                scan = start + 4
                continue
            pos_next = end + 3
        else:
            pos_next = match.end()
        out.append(text[pos:start])
        pos = scan = pos_next
    out.append(text[pos:])
    return "".join(out)


def html_to_text(markup: str) -> tuple[str, list[str]]:
    """Visible text of an HTML document, lowercased (tags stripped, entities
    decoded; comments and inline tags removed without a gap, so words split
    by them join up again), and the URLs of its links and images.

    The markup is lowercased before entities are decoded: "&Eacute;" and
    "&eacute;" give the same letter after lowercasing anyway, and the few
    names that differ only by case ("&AMP;") are read as their lowercase
    twins. "&nbsp;" becomes a plain space, which separates words exactly as
    U+00A0 does but keeps the text ASCII (cheaper to tokenize)."""
    import html

    low = markup.lower()
    found: list[tuple[int, int, str]] = []
    for pattern in _LINKS:
        found.extend((m.start(), m.end(), m.group(1)) for m in pattern.finditer(low))
    found.sort()
    links, end = [], -1
    for start, stop, url in found:  # left to right, never inside an earlier link
        if start >= end:
            links.append(url)
            end = stop
    text = _drop_hidden_elements(low)
    text = _drop_comments_and_inline_tags(text)
    text = _no_tag_after_last_gt(_TAG, " ", text).replace("&nbsp;", " ")
    if "&" in text:
        text = html.unescape(text).lower()  # "&#65;" is "A"
    return text, links


_url_cache: dict[str, tuple[str, ...]] = {}


def url_tokens(url: str, out: list[str]) -> None:
    """url-scheme:, url: host and each parent domain (or url-ip: for IPs).
    (Cached: the same URLs recur across messages.)"""
    tokens = _url_cache.get(url)
    if tokens is None:
        tokens = _url_tokens(url)
        if len(url) <= 300:  # the cache holds no crafted 100 KB URLs
            if len(_url_cache) > 50000:
                _url_cache.clear()
            _url_cache[url] = tokens
    out.extend(tokens)


# Parent domains per host, at most: all of them for any real host name;
# the tokens of a crafted host of 100,000 labels would be quadratic in size.
_MAX_DOMAIN_TOKENS = 16


def _url_tokens(url: str) -> tuple[str, ...]:
    match = _HOST.match(url.strip())
    if not match:
        return ()
    out = []
    scheme, host = match.group(1), match.group(2).lower().strip(".")
    if scheme:
        out.append(f"url-scheme:{scheme.lower()}")
    elif url.lower().startswith("www."):
        out.append("url-scheme:none")
    if not host:
        return tuple(out)
    if _IP.match(host):
        out.append(f"url-ip:{host}")
        out.append(f"url-ip:{host.rsplit('.', 1)[0]}")
        return tuple(out)
    labels = host.split(".")
    starts: Sequence[int] = range(len(labels) - 1)
    if len(starts) > _MAX_DOMAIN_TOKENS:  # the host and its shortest parents
        starts = [0, *starts[-(_MAX_DOMAIN_TOKENS - 1) :]]
    for i in starts:
        out.append("url:" + ".".join(labels[i:]))
    return tuple(out)
