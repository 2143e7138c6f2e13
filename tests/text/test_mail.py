"""The mail analyzer on hand-written tricky messages."""

import re
import time

import pytest

from nbcli.text.analyzer import Analyzer, AnalyzerOptions
from nbcli.text.mail import extract, looks_like_mail

from mailfixtures import HTML_ONLY, MESSAGES, NESTED

analyzer = Analyzer()


def tokens(raw: bytes) -> list[str]:
    return analyzer.tokens(raw, "mail")


@pytest.mark.parametrize("name", sorted(MESSAGES))
def test_no_encoded_blob_or_attachment_content_reaches_the_tokenizer(name):
    terms = tokens(MESSAGES[name])
    assert terms
    words = [t for t in terms if ":" not in t]
    assert not any(re.fullmatch(r"[A-Za-z0-9+/]{30,}=*", w) for w in words), words
    assert "attachmentsecretword" not in terms


def test_nested_multipart():
    terms = tokens(MESSAGES["nested"])
    # plain alternative read; the HTML inside multipart/related also counts (not a direct alternative)
    assert {"plain", "quarterly", "report", "details", "bold"} <= set(terms)
    assert {"subject:quarterly", "from:alice", "from-domain:example.org"} <= set(terms)
    assert {
        "to:dana@example.com",
        "to:list@lists.example.net",
        "cc:bob@example.org",
        "to-domain:lists.example.net",
    } <= set(terms)
    assert {"part:image/png", "part:application/pdf", "attachment:pdf", "content-type:multipart/mixed"} <= set(terms)
    assert {"url:reports.example.org", "url:example.org", "url-scheme:https"} <= set(terms)


def test_plain_alternative_is_preferred_over_html():
    raw = (
        b"From: a@example.com\nSubject: s\nMIME-Version: 1.0\n"
        b"Content-Type: multipart/alternative; boundary=x\n\n"
        b"--x\nContent-Type: text/plain\n\nplainword\n"
        b"--x\nContent-Type: text/html\n\n<p>htmlword</p>\n--x--\n"
    )
    terms = tokens(raw)
    assert "plainword" in terms and "htmlword" not in terms
    html_only = raw.replace(b"Content-Type: text/plain\n\nplainword\n", b"Content-Type: image/gif\n\nxx\n")
    assert "htmlword" in tokens(html_only)


def test_wrong_and_unknown_charsets_fall_back():
    terms = tokens(MESSAGES["wrong-charset"])
    assert {"grüße", "café", "naïve", "façade", "subject:grüße", "subject:münchen"} <= set(terms)
    assert "bytes-to-bytes" in terms  # a non-text codec named as charset does not crash


def test_html_only():
    terms = tokens(MESSAGES["html-only"])
    assert "viagra" in terms  # a comment and an empty inline tag inside a word do not split it
    assert "50!!!" in terms and "save" in terms  # entities decoded, mail token rule keeps "!!!"
    assert "trackingcode" not in terms and "color" not in terms and "hidden" not in terms  # script/style/head dropped
    assert {"url:www.shop.offers.example.biz", "url:example.biz", "url-ip:198.51.100.7", "url-ip:198.51.100"} <= set(
        terms
    )


def test_base64_text_is_decoded_and_broken_base64_is_not_passed_on():
    terms = tokens(MESSAGES["base64"])
    assert {"hello", "quarterly", "figures", "café"} <= set(terms)
    assert "attachment:bin" in terms and "part:application/octet-stream" in terms
    assert not any("broken" in t or "padding" in t for t in terms)


def test_a_14kb_header_line_is_fast():
    start = time.perf_counter()
    terms = tokens(MESSAGES["long-header"])
    assert time.perf_counter() - start < 1.0
    assert {"short", "body", "received:mail.example.com", "received:192.0.2.10", "received:192.0.2"} <= set(terms)


def test_no_body_and_crlf():
    assert {"subject:headers", "subject:newline", "from-domain:example.com"} <= set(tokens(MESSAGES["no-body"]))
    terms = tokens(MESSAGES["crlf"])
    assert {"zürich", "8-bit", "three", "subject:crlf"} <= set(terms)
    assert not any("\r" in t for t in terms)


def test_uuencoded_blocks_are_dropped():
    terms = tokens(MESSAGES["uuencoded"])
    assert {"here", "log", "thanks", "attachment:dat"} <= set(terms)
    assert len(terms) < 25


def test_max_message_bytes_cuts_without_failing():
    big = MESSAGES["crlf"] + b"filler words " * 100_000
    cut = extract(big, max_bytes=2000)
    assert "message:truncated" in cut.literals and cut.segments
    terms = Analyzer(AnalyzerOptions(max_message_bytes=2000)).tokens(big, "mail")
    assert "message:truncated" in terms and terms.count("filler") < 200


def test_garbage_never_crashes():
    for raw in [
        b"",
        b"\x00" * 100,
        bytes(range(256)) * 40,
        b"From: x\n\n" + bytes(range(256)) * 40,
        b"Content-Type: multipart/mixed; boundary=\n\n--\n--\n",
        b"Subject: =?utf-8?b?!!!?=\n\nx",
    ]:
        assert isinstance(tokens(raw), list)


def test_looks_like_mail():
    for raw in MESSAGES.values():
        assert looks_like_mail(raw)
    assert looks_like_mail(b"From someone@example.com Tue Mar  3 10:00:00 2026\nSubject: x\n\nbody")
    assert not looks_like_mail(b"Note: this is a plain document\nwith two lines")
    assert not looks_like_mail(b"just some text")
    assert not Analyzer(AnalyzerOptions(mail=False)).tokens(MESSAGES["html-only"]) == tokens(MESSAGES["html-only"])
    # auto kind sniffs; text kind never parses mail
    assert "subject:limited" in analyzer.tokens(MESSAGES["html-only"])
    assert "subject:limited" not in analyzer.tokens(MESSAGES["html-only"], "text")


def _corpus_messages():
    from conftest import SAMPLES

    found = [p.read_bytes() for p in sorted((SAMPLES / "mail").rglob("*.eml"))]
    found += list(MESSAGES.values())
    found += [m.replace(b"\n", b"\r\n") for m in found[:200]]  # CRLF versions
    found += [b"From a@example.org Mon Mar  2 10:00:00 2026\n" + m for m in found[:100]]
    return found


def test_the_fast_path_gives_the_same_tokens_as_the_email_package():
    from collections import Counter

    fast_taken = 0
    for raw in _corpus_messages():
        fast, slow = extract(raw), extract(raw, fast=False)
        assert Counter(fast.literals) == Counter(slow.literals), raw[:300]
        assert Counter(fast.segments) == Counter(slow.segments), raw[:300]
        from nbcli.text.mail import _is_simple, _split_message

        split = _split_message(raw)
        fast_taken += split is not None and _is_simple(split[0])
    assert fast_taken > 300  # most of the sample mail takes the fast path


def test_a_mixed_batch_gives_each_document_its_own_tokens_in_order():
    """Mail (with and without text), plain text, non-ASCII text and empty
    documents in one batch: each document's tokens, in reading order, are
    what it gets alone (the batch groups segments by rule and script and
    puts them back in order)."""
    from nbcli.text.analyzer import Analyzer

    no_text = b"From: a@example.org\nTo: b@example.org\nSubject:\nContent-Type: image/png\n\n\x89PNG"
    docs = [
        NESTED,
        "plain words here",
        no_text,
        no_text,
        "naïve café words",
        b"",
        HTML_ONLY,
        "",
        "Subject: not mail at all",
        NESTED,
    ]
    analyzer = Analyzer()
    batch = analyzer.analyze(docs)
    for i, doc in enumerate(docs):
        assert batch.doc_tokens(i) == Analyzer().tokens(doc), i
    assert batch.doc_tokens(2) and batch.doc_tokens(2) == batch.doc_tokens(3)  # literals only
