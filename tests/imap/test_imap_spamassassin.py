"""`nbcli imap` on real mail: 300 messages of the SpamAssassin public
corpus (when benchmarks/fetch.py has fetched it; skipped otherwise, since
tests never need the network) APPENDed to a real Dovecot, one pass, and
every message's verdict compared with `nbcli filter` on the same bytes."""

from __future__ import annotations

import mailbox
import random
import re

import pytest
from imap_helpers import folder, imap_pass, summary

from conftest import run
from fuzzing import spamassassin_messages


def _tagged(n: int, data: bytes) -> bytes:
    """The message with a header naming it, so that its copies in the
    folders and in filter's split mboxes can be told apart."""
    return f"X-Nbcli-Test: m{n}\n".encode() + data.replace(b"\r\n", b"\n")


def _tag(data: bytes) -> str:
    return re.search(rb"X-Nbcli-Test: (m\d+)", data).group(1).decode()


def test_a_pass_over_spamassassin_mail_gives_filters_verdicts(dovecot, tmp_path):
    corpus = spamassassin_messages()
    if not corpus:
        pytest.skip("the SpamAssassin corpus is not fetched (make bench-accuracy fetches it)")
    rng = random.Random(29)
    rng.shuffle(corpus)
    test, train = corpus[:300], corpus[300:2300]
    for kind in ("ham", "spam"):
        (tmp_path / "train" / kind).mkdir(parents=True)
    for i, (name, data) in enumerate(train):
        kind = "spam" if name.startswith("spam") else "ham"
        (tmp_path / "train" / kind / f"{i}.eml").write_bytes(data)
    model = tmp_path / "sa.nb"
    assert run(["train", tmp_path / "train", "-o", model, "-q"]).exit_code == 0
    messages = [_tagged(n, data) for n, (_, data) in enumerate(test)]
    with dovecot.client() as imap:
        for i, data in enumerate(messages):  # every fifth one read already
            assert imap.append("INBOX", "(\\Seen)" if i % 5 == 0 else None, None, data)[0] == "OK"

    said = summary(imap_pass(dovecot, model, tmp_path / "state.json"))

    box = mailbox.mbox(tmp_path / "inbox.mbox")
    for data in messages:
        box.add(mailbox.mboxMessage(data))
    box.close()
    split = tmp_path / "split"
    run(["filter", model, tmp_path / "inbox.mbox", "--split", split, "-q"])
    expected = {}
    for verdict in ("spam", "ham", "unsure"):
        path = split / f"{verdict}.mbox"
        for message in mailbox.mbox(path) if path.exists() else []:
            expected[_tag(message.as_bytes())] = verdict
    got = {}
    for place, found in (("INBOX", folder(dovecot, "INBOX")), ("Junk", folder(dovecot, "Junk"))):
        for flags, data in found.values():
            verdict = {"$junk": "spam", "$notjunk": "ham", "$nbcliunsure": "unsure"}
            (mark,) = [v for k, v in verdict.items() if k in flags]
            assert (place == "Junk") == (mark == "spam")
            n = int(_tag(data)[1:])
            assert ("\\seen" in flags) == (n % 5 == 0)  # \Seen as it was
            assert data.replace(b"\r\n", b"\n") == messages[n]  # never changed
            got[_tag(data)] = mark
    assert len(expected) == len(got) == 300
    assert got == expected
    assert said["classified"] == 300 and said["filed"] == said["spam"] == list(got.values()).count("spam")
    assert said["spam"] > 50 and said["ham"] > 100  # the corpus is a third spam
