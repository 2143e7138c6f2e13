"""The spamd fuzz harness (issue 25) on a seeded sample of 300 requests
against a running `nbcli serve`: valid replies or closed connections only,
none slower than --timeout, a correct CHECK answered after each batch, no
worker crash, the model unchanged. `make fuzz-serve` runs 20,000
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
