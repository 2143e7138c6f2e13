"""The mail analyzer on crafted messages: every step is linear in its input.

Each construct below made one message take seconds to minutes before
(the first three are issue 12's reports: 325 s, 83 s and 12 s). The time
bounds are only guards against hangs, far above what the analysis takes
(well under 0.5 s each); benchmarks/adversarial.py measures seconds per MB.
The differential tests that pin down the rules for unterminated constructs
(terminated markup, uuencode and encoded words read as before) are in
test_body_text.py and test_encoded_words.py.
"""

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbcli.text.analyzer import Analyzer
from nbcli.text.body_text import html_to_text
from nbcli.text.mail import extract, header_text

analyzer = Analyzer()
HANG_GUARD = 5.0  # seconds; the fixed code takes well under 0.5 s
HEAD = b"From: a@example.com\nSubject: hello\n"
HTML = HEAD + b"Content-Type: text/html\n\n"


def timed_tokens(raw: bytes) -> list[str]:
    start = time.perf_counter()
    terms = analyzer.tokens(raw, "mail")
    elapsed = time.perf_counter() - start
    assert elapsed < HANG_GUARD, f"{len(raw)} bytes took {elapsed:.1f} s"
    return terms


# -- issue 12's three reports ----------------------------------------------------------


def test_unterminated_comments_508kb():
    terms = timed_tokens(HTML + b"<html>visible words" + b"<!--" * 130_000)
    assert {"visible", "words", "subject:hello"} <= set(terms)  # the text before the comment
    # an unterminated comment is a tag, up to the next ">", as before
    assert "shown" in html_to_text("a <!--#rotate>shown<!-- b>" + "<!--" * 1000)[0]


def test_unterminated_scripts_390kb():
    terms = timed_tokens(HTML + b"<p>shown</p><script>" * 50_000 + b"hidden code")
    assert "shown" in terms
    assert "hidden" not in terms and "code" not in terms  # an unterminated script runs to the end


def test_uuencode_begin_lines_without_end_312kb():
    terms = timed_tokens(HEAD + b"\nplain words\n" + b"begin 644 a.txt\n" * 20_000)
    assert {"plain", "words"} <= set(terms)
    assert not any(t.startswith("attachment:") for t in terms)  # no "end": not a uuencoded file


# -- the other constructs found super-linear ------------------------------------------------


@pytest.mark.parametrize(
    "unit, kept, dropped",
    [
        (b"<style>", "before", "after"),  # unterminated style runs to the end
        (b"<head>", "before", None),  # unterminated head is only a tag
        (b"<", "before", None),  # "<" with no ">" after it is text
        (b"<b ", "before", None),
        (b"<script></script ", "before", None),
        (b"<!--", "before", None),  # an unterminated comment is only a tag, "<!--" up to ">"
    ],
)
def test_unterminated_html_constructs(unit, kept, dropped):
    terms = timed_tokens(HTML + b"<html>before " + unit * (400_000 // len(unit)) + b" after")
    assert kept in terms
    if dropped:
        assert dropped not in terms


def test_many_www_urls_and_a_host_of_many_labels():
    terms = timed_tokens(HEAD + b"\n" + b"www." * 125_000)
    assert "url-scheme:none" in terms
    terms = timed_tokens(HEAD + b"\nhttp://" + b"a." * 200_000 + b"example.com/x")
    urls = [t for t in terms if t.startswith("url:")]
    assert "url:example.com" in urls and "url:a.example.com" in urls
    assert len(urls) <= 16  # the host and its 15 shortest parents


def test_encoded_words_without_an_end():
    raw = b"Subject: =?utf-8?q?caf=C3=A9?= " + b"=?utf-8?q?a " * 40_000 + b"\nFrom: a@example.com\n\nbody\n"
    terms = timed_tokens(raw)
    assert "subject:café" in terms


def test_many_encoded_words():
    raw = b"Subject: " + b"=?utf-8?q?ab?= " * 35_000 + b"\nFrom: a@example.com\n\nbody\n"
    terms = timed_tokens(raw)
    assert any(t.startswith("subject:abab") for t in terms)  # whitespace between encoded words dropped


@pytest.mark.parametrize("unit", [b"(", b":", b"<", b"a <", b'"a" ', b"[", b";", b")"])
def test_crafted_address_headers(unit):
    """getaddresses recursed once per "(" or ":" (RecursionError out of
    extract) and costs ~2 us a character: a message gets a budget of it."""
    raw = b"From: " + unit * (300_000 // len(unit)) + b" x@evil.example\nTo: dana@example.com\n\nbody\n"
    terms = timed_tokens(raw)
    assert "body" in terms and "to:dana@example.com" in terms


def test_address_budget_still_finds_addresses():
    names = b", ".join(b'"Name %d" <user%d@example.org>' % (i, i) for i in range(3000))
    raw = b"From: a@example.com\nTo: " + names + b"\n\nbody\n"
    terms = set(timed_tokens(raw))
    assert {"to:user0@example.org", "to:user2999@example.org", "to-domain:example.org"} <= terms


def test_punycode_charset_is_not_decoded_with_its_quadratic_codec():
    raw = HEAD + b"Content-Type: text/plain; charset=punycode\n\n-" + b"abcdefgh" * 50_000
    terms = timed_tokens(raw)
    assert "charset:punycode" in terms


def test_many_mime_parts_are_read_up_to_a_limit():
    raw = HEAD + b"Content-Type: multipart/mixed; boundary=b\n\n" + b"--b\nContent-Type: text/plain\n\nword\n" * 5000
    terms = timed_tokens(raw)
    assert "message:many-parts" in terms and terms.count("word") == 1000


def _nested(depth: int, lines: int) -> bytes:
    opening = b"".join(b'--b%d\nContent-Type: multipart/mixed; boundary="b%d"\n\n' % (i, i + 1) for i in range(depth))
    inner = b"--b%d\nContent-Type: text/plain\n\nbefore\n" % depth + b"--b\n" * lines + b"after\n"
    return HEAD + b'MIME-Version: 1.0\nContent-Type: multipart/mixed; boundary="b0"\n\n' + opening + inner


def test_deep_mime_nesting_is_read_to_a_bounded_depth():
    """Found by make fuzz: the email package checks each line against every
    open boundary (800 levels and 100,000 lines took 6 s)."""
    terms = timed_tokens(_nested(800, 100_000))
    assert "message:deep-mime" in terms and "subject:hello" in terms
    shallow = timed_tokens(_nested(10, 1000))  # real mail nests a few levels: all of it is read
    assert "message:deep-mime" not in shallow and {"before", "after"} <= set(shallow)


def test_extract_honours_max_bytes():
    raw = HEAD + b"\nfirst " + b"x" * 5000 + b" last\n"
    found = extract(raw, 1000)
    assert "message:truncated" in found.literals
    assert "first" in found.segments[-1][1] and "last" not in found.segments[-1][1]


# -- fuzz: messages from adversarial building blocks -----------------------------------

BODY_BLOCKS = [
    b"<!--",
    b"-->",
    b"<script",
    b"</script>",
    b"<style>",
    b"<head>",
    b"<",
    b">",
    b"<b ",
    b"begin 644 x\n",
    b"end\n",
    b"A" * 76 + b"\n",
    b"http://",
    b"www.",
    b"a.",
    b"&#x",
    b"=?utf-8?q?",
    b"--b\n",
    b"--b--\n",
    b"Content-Type: text/html\n\n",
    b"word ",
    b"\n",
]
HEADER_BLOCKS = [
    b'"',
    b"<",
    b">",
    b"(",
    b")",
    b"\\",
    b"a@b",
    b",",
    b":",
    b";",
    b"=?utf-8?q?",
    b"?=",
    b"=?utf-8?b?",
    b"x ",
    b"by h.example.com ",
    b"from [192.0.2.1] ",
]


def repeated(blocks, max_total):
    chunk = st.tuples(st.sampled_from(blocks), st.integers(1, 20_000))
    return st.lists(chunk, min_size=1, max_size=6).map(lambda cs: b"".join(b * n for b, n in cs)[:max_total])


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.sampled_from([b"From", b"To", b"Subject", b"Received", b"Cc"]),
    repeated(HEADER_BLOCKS, 60_000),
    st.sampled_from(
        [b"text/plain", b"text/html", b"multipart/mixed; boundary=b", b'multipart/alternative; boundary="b"']
    ),
    repeated(BODY_BLOCKS, 140_000),
)
def test_any_message_is_analyzed_in_bounded_time(name, value, ctype, body):
    raw = name + b": " + value.replace(b"\n", b" ") + b"\nFrom: a@example.com\nContent-Type: " + ctype + b"\n\n" + body
    start = time.perf_counter()
    found = extract(raw)
    terms = analyzer.tokens(raw, "mail")
    elapsed = time.perf_counter() - start
    assert elapsed < HANG_GUARD, f"{len(raw)} bytes took {elapsed:.1f} s"
    assert terms and found.literals  # always some tokens (content-type: at least)


def test_header_text_of_a_raw_8bit_header_object():
    from email import message_from_bytes

    msg = message_from_bytes(b"Subject: caf\xc3\xa9 " + b"=?utf-8?q?a " * 20_000 + b"\n\nbody\n")
    start = time.perf_counter()
    text = header_text(msg.get("subject"))  # an email.header.Header: read as before
    assert time.perf_counter() - start < HANG_GUARD
    assert text.startswith("café =?utf-8?q?a")
