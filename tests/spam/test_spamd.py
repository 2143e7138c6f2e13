"""`spam/spamd.py`: SpamAssassin's spamd protocol as bytes, without
sockets: request heads, the score and threshold, the reply layouts old and
new clients parse, and zlib bodies."""

from __future__ import annotations

import zlib

import pytest

from nbcli.spam import spamd


def test_a_request_head_is_parsed_and_its_bad_forms_are_one_error_each():
    head = b"REPORT SPAMC/1.2\r\nUser: alice\r\nContent-length: 42\r\n\r\n"
    assert spamd.head_end(head + b"body") == len(head) and spamd.head_end(b"CHECK SPAMC/1.5\r\n") == -1
    assert spamd.head_end(b"PING SPAMC/1.5\n\n") == len(b"PING SPAMC/1.5\n\n")
    request = spamd.parse_head(head)
    assert (request.verb, request.version, request.old_layout) == ("REPORT", (1, 2), True)
    assert request.headers == {"user": "alice", "content-length": "42"} and request.content_length() == 42
    for bad, why in [
        (b"FETCH SPAMC/1.5\r\n\r\n", "unknown verb FETCH"),
        (b"CHECK HTTP/1.1\r\n\r\n", "bad request line"),
        (b"CHECK SPAMC/1.5\r\nUser: a\r\nuser: b\r\n\r\n", "header user given twice"),
        (b"CHECK SPAMC/1.5\r\nno colon here\r\n\r\n", "bad header line"),
    ]:
        with pytest.raises(spamd.ProtocolError, match=why):
            spamd.parse_head(bad)
    with pytest.raises(spamd.ProtocolError, match="bad Content-length '-1'"):
        spamd.parse_head(b"CHECK SPAMC/1.5\r\nContent-length: -1\r\n\r\n").content_length()
    arabic_five = "\u0665".encode()  # int() reads it as 5; the protocol's digits are ASCII
    with pytest.raises(spamd.ProtocolError, match="bad Content-length"):
        spamd.parse_head(b"CHECK SPAMC/1.5\r\nContent-length: " + arabic_five + b"\r\n\r\n").content_length()


def test_the_score_is_the_log_odds_and_the_threshold_the_cutoffs():
    assert spamd.score_text(spamd.threshold(0.98)) == "3.9"
    assert spamd.score_text(spamd.threshold(0.5)) == "0.0"
    assert spamd.score_text(1e9) == "999.9" and spamd.score_text(-1e9) == "-999.9"
    assert spamd.score_text(float("nan")) == "0.0"
    assert spamd.threshold(1.0) == spamd.SCORE_LIMIT and spamd.threshold(0.0) == -spamd.SCORE_LIMIT


def test_new_clients_get_a_spam_header_and_exims_old_layout_starts_with_the_scores():
    verdict = spamd.Verdict("spam", "spam", 0.999, 6.94, True, [("viagra", 2.5)], "3f9a1c")
    new = spamd.answer(spamd.parse_head(b"CHECK SPAMC/1.5\r\n\r\n"), verdict, 3.89)
    assert new == b"SPAMD/1.1 0 EX_OK\r\nSpam: True ; 6.9 / 3.9\r\n\r\n"
    old = spamd.answer(spamd.parse_head(b"REPORT SPAMC/1.2\r\n\r\n"), verdict, 3.89)
    head, _, body = old.partition(b"\r\n\r\n")
    assert head == b"SPAMD/1.1 0 EX_OK\r\nContent-length: %d" % len(body)
    assert body.startswith(b"6.9/3.9\r\nnbcli Naive Bayes: spam (P(spam) = 0.9990, score 6.9, required 3.9")
    symbols = spamd.answer(spamd.parse_head(b"SYMBOLS SPAMC/1.5\r\n\r\n"), verdict, 3.89)
    assert symbols.endswith(b"\r\n\r\nNBCLI_SPAM,NBCLI_MODEL_3f9a1c,NB_viagra\r\n")
    unscored = spamd.answer(spamd.parse_head(b"CHECK SPAMC/1.5\r\n\r\n"), spamd.unscored(), 3.89)
    assert unscored == b"SPAMD/1.1 0 EX_OK\r\nSpam: False ; 0.0 / 3.9\r\n\r\n"


def test_errors_are_one_line_with_spamds_exit_code():
    assert (
        spamd.error("EX_TEMPFAIL", "too many\r\nconnections") == b"SPAMD/1.0 75 EX_TEMPFAIL too many  connections\r\n"
    )
    assert spamd.tell_reply(True, False) == b"SPAMD/1.1 0 EX_OK\r\nDidSet: local\r\n\r\n"
    assert spamd.valid_user("alice.b@example") and not spamd.valid_user("..") and not spamd.valid_user("a/b")


def test_a_zlib_body_inflates_within_the_limit_only():
    message = b"Subject: x\n\n" + b"spam " * 1000
    assert spamd.inflate(zlib.compress(message), "zlib", len(message)) == message
    with pytest.raises(spamd.ProtocolError, match="inflates to more than 100 bytes") as bomb:
        spamd.inflate(zlib.compress(message), "zlib", 100)
    assert bomb.value.reply().startswith(b"SPAMD/1.0 65 EX_DATAERR ")
    with pytest.raises(spamd.ProtocolError, match="unknown Compress 'gzip'; only zlib is known"):
        spamd.inflate(message, "gzip", 100)
    with pytest.raises(spamd.ProtocolError, match="the zlib body does not inflate"):
        spamd.inflate(b"not zlib at all", "zlib", 100)
