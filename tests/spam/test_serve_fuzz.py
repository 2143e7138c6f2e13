"""The spamd fuzz harness (issue 25) on a seeded sample of 300 requests
against a running `nbcli serve`: valid replies or closed connections only,
none slower than --timeout, a correct CHECK answered after each batch, no
worker crash, the model unchanged; and with TELL allowed, a journal kept,
and well-formed TELLs beside the fuzz, each checked against learning the
same messages in memory. `make fuzz-serve` runs 20,000 of each
(tools/fuzz_serve.py); the harness is tests/serve_fuzzing.py."""

from __future__ import annotations

import random
import sys

import pytest
import serve_fuzzing

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Unix sockets and /proc")


def test_the_harness_knows_a_bad_reply():
    assert serve_fuzzing.valid_reply(b"") is None
    assert serve_fuzzing.valid_reply(b"SPAMD/1.0 76 EX_PROTOCOL bad request line\r\n") is None
    assert serve_fuzzing.valid_reply(b"SPAMD/1.1 0 EX_OK\r\nSpam: True ; 9.1 / 3.9\r\n\r\n") is None
    assert serve_fuzzing.valid_reply(b"SPAMD/1.0 76 EX_PROTOCOL two\r\nlines\r\n")
    assert serve_fuzzing.valid_reply(b"SPAMD/1.1 0 EX_OK\r\nContent-length: 9\r\n\r\nshort")
    assert serve_fuzzing.valid_reply(b"SPAMD/1.1 0 EX_OK\r\nSpam: maybe\r\n\r\n")
    assert serve_fuzzing.valid_reply(b"Traceback (most recent call last):\n")


def test_cases_are_seeded():
    messages = serve_fuzzing.sample_messages()
    first, again = random.Random(3), random.Random(3)
    cases = [serve_fuzzing.make_case(first, messages).data for _ in range(20)]
    assert cases == [serve_fuzzing.make_case(again, messages).data for _ in range(20)]
    assert len(set(cases)) > 15


def test_a_seeded_sample_of_malformed_requests(tmp_path):
    model = serve_fuzzing.main_model(tmp_path)
    report = serve_fuzzing.run(model, 300, seed=25, timeout=1.0, batch=100, threads=8)
    assert report.requests == 300
    assert not report.failures and not report.crashes, report.summary() + "\n" + "\n".join(report.failures[:10])
    assert report.errors > 50 and report.ok > 50  # both kinds of reply were exercised


def test_tells_beside_malformed_requests_learn_what_learning_in_memory_learns(tmp_path):
    """--allow-tell, a journal at the sample model's size, mutated TELLs
    for many users and the oracle's well-formed ones: every oracle reply
    says DidSet / DidRemove exactly when the in-memory replay changed the
    model, the oracle's model through its journal is that model, every
    user's model compacts to itself, the shared model is untouched."""
    model = serve_fuzzing.main_model(tmp_path)
    report = serve_fuzzing.run(model, 300, seed=30, timeout=1.0, batch=100, threads=8, tell=True)
    assert not report.failures and not report.crashes, report.summary() + "\n" + "\n".join(report.failures[:10])
    assert report.tells > 20 and 0 < report.tells_changed < report.tells
    assert report.journals >= 1 and report.user_models >= 2  # the oracle's, alice's and any the fuzz's TELLs made
