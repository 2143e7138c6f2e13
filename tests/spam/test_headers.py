"""The header lines nbcli adds (`spam/headers.py`): X-NB-Class and
X-NB-Evidence (filter, serve) and spamd's X-Spam-* (serve's PROCESS and
HEADERS), every other byte of the message kept."""

from __future__ import annotations

import pytest

from nbcli.spam import headers
from nbcli.spam.spamd import Verdict, unscored


def test_with_header_unit_cases():
    assert headers.with_header(b"Subject: x", "ham; p=0.1") == b"X-NB-Class: ham; p=0.1\nSubject: x"
    assert headers.with_header(b"", "ham; p=0.1") == b"X-NB-Class: ham; p=0.1\n"
    from_ = b"From x Mon Jan  1 00:00:00 2024\n"
    assert headers.with_header(from_ + b"\nbody", "v") == from_ + b"X-NB-Class: v\n\nbody"
    # a first line "From ..." that is not a From_ line is part of the message
    assert headers.with_header(b"From x\n\nbody", "v") == b"X-NB-Class: v\nFrom x\n\nbody"
    with pytest.raises(ValueError, match="no header block"):
        headers.with_header(from_.rstrip(), "v")


def test_an_earlier_verdict_is_replaced_where_it_stands_and_evidence_is_folded():
    message = (
        b"From: a@example.com\r\nX-NB-Class: ham; p=0.0100\r\nX-NB-Evidence: versus spam;\r\n\told item\r\n"
        b"Subject: s\r\n\r\nbody\r\nX-NB-Class: in the body stays\r\n"
    )
    items = [f"'term{i:02}' 3 +1.25" for i in range(12)]
    out = headers.with_header(message, "spam; p=0.9990", evidence=items)
    head, _, rest = out.partition(b"\r\n\r\n")
    assert rest == b"body\r\nX-NB-Class: in the body stays\r\n"  # the body is never touched
    assert head.startswith(b"From: a@example.com\r\nX-NB-Class: spam; p=0.9990\r\nX-NB-Evidence: 'term00' 3 +1.25;")
    assert head.endswith(b"\r\nSubject: s") and b"old item" not in out and b"ham; p=0.0100" not in out
    lines = head.split(b"\r\n")
    assert all(len(line) <= 78 for line in lines)  # folded before an item, never inside one
    folded = [line for line in lines if line.startswith(b"\t")]
    assert folded and b"".join(lines).count(b"'term") == 12


def test_text_from_class_names_and_terms_cannot_break_the_header():
    out = headers.with_header(b"Subject: x\n\nbody\n", "ham\r\nX-Injected: yes", evidence=["'a\nb' 1 +1.00"])
    assert out.count(b"\n") == 5 and b"\nX-Injected" not in out  # two lines added, three kept
    assert out.startswith(b"X-NB-Class: ham  X-Injected: yes\nX-NB-Evidence: 'a b' 1 +1.00\n")


def test_header_value_names_the_model_when_known():
    assert headers.header_value("spam", 0.99934) == "spam; p=0.9993"
    assert headers.header_value("ham", 0.0, "3f9a1c") == "ham; p=0.0000; model=3f9a1c"


def test_marked_puts_spamds_headers_above_ours_in_the_messages_line_ending():
    spam = Verdict("spam", "spam", 0.999, 6.9, True, model_id="3f9a1c")
    out = headers.marked(b"Subject: x\r\n\r\nbody\r\n", spam, 3.9, "spam; p=0.9990; model=3f9a1c")
    assert out == (
        b"X-Spam-Flag: YES\r\nX-Spam-Status: Yes, score=6.9 required=3.9 tests=NBCLI_SPAM model=3f9a1c\r\n"
        b"X-NB-Class: spam; p=0.9990; model=3f9a1c\r\nSubject: x\r\n\r\nbody\r\n"
    )
    ham = Verdict("ham", "ham", 0.001, -6.9, False, model_id="3f9a1c")
    out = headers.marked(b"Subject: x\n\nbody\n", ham, 3.9, "ham; p=0.0010")
    assert out.startswith(b"X-Spam-Status: No, score=-6.9 required=3.9 tests=NBCLI_HAM model=3f9a1c\nX-NB-Class: ")
    # not scored, or no header block to add to: the message comes back as it was
    assert headers.marked(b"Subject: x\n\nbody\n", unscored(), 3.9, "v") == b"Subject: x\n\nbody\n"
    only_from = b"From x Mon Jan  1 00:00:00 2024"
    assert headers.marked(only_from, spam, 3.9, "v") == only_from
