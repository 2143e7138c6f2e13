"""`nbcli imap` passes against a real Dovecot (tests/dovecot.py): what is
classified, filed and marked, the user's corrections learned once, the
state, --learn-folder and --dry-run. The test acts as the user's mail
program with plain IMAP commands and looks at the folders, keywords,
\\Seen flags and the model's record after each pass."""

from __future__ import annotations

import json
import re

import pytest
from imap_helpers import append, folder, imap_args, imap_pass, samples, summary

from conftest import model_info, run


def per_class(model) -> dict:
    return model_info(model)["record"]["per_class"]


def filter_verdict(model, path) -> str:
    result = run(["filter", model, path])
    return re.search(rb"X-NB-Class: (\w+);", result.stdout_bytes).group(1).decode()


def keyword_verdict(flags: set) -> str | None:
    found = [v for k, v in (("$junk", "spam"), ("$notjunk", "ham"), ("$nbcliunsure", "unsure")) if k in flags]
    assert len(found) <= 1, flags
    return found[0] if found else None


def test_a_pass_files_spam_marks_ham_and_unsure_as_filter_decides(dovecot, mail_model_copy, tmp_path):
    from conftest import SAMPLES

    files = sorted((SAMPLES / "mail" / "test" / "spam").iterdir())[:12]
    files += sorted((SAMPLES / "mail" / "test" / "ham").iterdir())[:18]
    with dovecot.client() as imap:
        for i, f in enumerate(files):  # every third one read already: \Seen must stay as it was
            assert imap.append("INBOX", "(\\Seen)" if i % 3 == 0 else None, None, f.read_bytes())[0] == "OK"
    before = folder(dovecot, "INBOX")
    seen_before = {data: "\\seen" in flags for flags, data in before.values()}
    before_model = mail_model_copy.read_bytes()
    result = imap_pass(dovecot, mail_model_copy, tmp_path / "state.json")
    said = summary(result)
    expected = {f.read_bytes(): filter_verdict(mail_model_copy, f) for f in files}
    inbox, junk = folder(dovecot, "INBOX"), folder(dovecot, "Junk")
    got = {}
    for place, messages in (("INBOX", inbox), ("Junk", junk)):
        for flags, data in messages.values():
            verdict = keyword_verdict(flags)
            assert (place == "Junk") == (verdict == "spam")
            assert ("\\seen" in flags) == seen_before[data]  # \Seen untouched, the message unchanged
            got[data] = verdict
    by_text = {data.replace(b"\r\n", b"\n"): v for data, v in got.items()}
    assert {data.replace(b"\r\n", b"\n"): v for data, v in expected.items()} == by_text
    counts = {v: list(expected.values()).count(v) for v in ("spam", "ham", "unsure")}
    assert counts["spam"] >= 5 and counts["ham"] >= 5
    assert said == {
        "classified": 30,
        **counts,
        "skipped": 0,
        "filed": counts["spam"],
        "learned_spam": 0,
        "learned_ham": 0,
        "learned_folders": 0,
    }
    assert mail_model_copy.read_bytes() == before_model  # classifying learns nothing
    state = json.loads((tmp_path / "state.json").read_text())
    assert state["folders"]["INBOX"]["last_uid"] == 30 and state["intent"] is None
    assert len(state["junk"]) == counts["spam"]

    again = summary(imap_pass(dovecot, mail_model_copy, tmp_path / "state.json"))
    assert again["classified"] == 0 and again["filed"] == 0 and again["learned_spam"] == 0
    append(dovecot, "INBOX", samples("spam", 14)[12:])
    third = summary(imap_pass(dovecot, mail_model_copy, tmp_path / "state.json"))
    assert third["classified"] == 2  # only the new ones
    assert len(folder(dovecot, "INBOX")) + len(folder(dovecot, "Junk")) == 32


def test_corrections_are_learned_once_and_moved_back_mail_is_not_filed_again(dovecot, mail_model_copy, tmp_path):
    state = tmp_path / "state.json"
    append(dovecot, "INBOX", samples("spam", 8) + samples("ham", 12))
    imap_pass(dovecot, mail_model_copy, state)
    base = per_class(mail_model_copy)
    junk = folder(dovecot, "Junk")
    inbox = folder(dovecot, "INBOX")
    hams = [u for u, (flags, _) in inbox.items() if "$notjunk" in flags]
    assert len(junk) >= 3 and len(hams) >= 4
    back = sorted(junk)[:2]
    with dovecot.client() as imap:
        imap.select("Junk")
        assert imap.uid("MOVE", ",".join(map(str, back)), "INBOX")[0] == "OK"  # "not spam": back to the inbox
        nj = sorted(junk)[2]
        assert imap.uid("STORE", str(nj), "+FLAGS", "($NotJunk)")[0] == "OK"  # "not spam", left in Junk
        imap.select("INBOX")
        assert imap.uid("MOVE", str(hams[0]), "Junk")[0] == "OK"  # "spam" that was let through
        assert imap.uid("STORE", str(hams[1]), "+FLAGS", "($Junk)")[0] == "OK"  # "spam", marked in the inbox
    said = summary(imap_pass(dovecot, mail_model_copy, state))
    assert said["learned_ham"] == 3 and said["learned_spam"] == 2 and said["classified"] == 0
    assert said["filed"] == 1  # the one marked $Junk; the moved-back ones are not filed again
    after = per_class(mail_model_copy)
    assert after == {"ham": base["ham"] + 3, "spam": base["spam"] + 2}
    inbox, junk = folder(dovecot, "INBOX"), folder(dovecot, "Junk")
    back_flags = [flags for u, (flags, _) in inbox.items() if u > 20]
    assert len(back_flags) == 2 and all("$notjunk" in f and "$junk" not in f for f in back_flags)
    assert not any("$junk" in flags for flags, _ in inbox.values())
    assert all("$junk" in flags for u, (flags, _) in junk.items() if u != nj)
    assert "$junk" not in junk[nj][0] and "$notjunk" in junk[nj][0]
    again = summary(imap_pass(dovecot, mail_model_copy, state))  # nothing new: nothing learned again
    assert again["learned_ham"] == again["learned_spam"] == again["filed"] == again["classified"] == 0
    assert per_class(mail_model_copy) == after


def test_the_users_not_junk_on_an_unsure_message_is_learned_as_ham(dovecot, mail_model_copy, tmp_path):
    state, band = tmp_path / "state.json", ["--spam-cutoff", "0.999999", "--ham-cutoff", "0.000001"]
    append(dovecot, "INBOX", samples("ham", 6))
    assert summary(imap_pass(dovecot, mail_model_copy, state, *band))["unsure"] >= 2
    unsure = sorted(u for u, (flags, _) in folder(dovecot, "INBOX").items() if "$nbcliunsure" in flags)
    base = per_class(mail_model_copy)
    with dovecot.client() as imap:
        imap.select("INBOX")
        assert imap.uid("STORE", str(unsure[0]), "+FLAGS", "($NotJunk)")[0] == "OK"
    said = summary(imap_pass(dovecot, mail_model_copy, state, *band))
    assert said["learned_ham"] == 1 and said["classified"] == 0
    assert per_class(mail_model_copy) == {"ham": base["ham"] + 1, "spam": base["spam"]}
    inbox = folder(dovecot, "INBOX")
    assert "$nbcliunsure" not in inbox[unsure[0]][0] and "$notjunk" in inbox[unsure[0]][0]
    assert "$nbcliunsure" in inbox[unsure[1]][0]
    assert summary(imap_pass(dovecot, mail_model_copy, state, *band))["learned_ham"] == 0


def test_a_correction_is_the_document_nbcli_learn_would_learn(dovecot, mail_model_copy, tmp_path):
    """imap learns a message under the digest `nbcli learn` gives the same
    file (CRLF from the server or not): learning it again from the file
    changes nothing, and learning it as the other class is a move."""
    from conftest import SAMPLES

    state = tmp_path / "state.json"
    ham = sorted((SAMPLES / "mail" / "test" / "ham").iterdir())[0]
    append(dovecot, "INBOX", [ham.read_bytes()])
    imap_pass(dovecot, mail_model_copy, state)
    with dovecot.client() as imap:
        imap.select("INBOX")
        assert imap.uid("MOVE", "1", "Junk")[0] == "OK"
    assert summary(imap_pass(dovecot, mail_model_copy, state))["learned_spam"] == 1
    again = run(["learn", mail_model_copy, "--spam", ham])
    assert "1 document(s) already learned as spam; not counted again" in again.stderr
    moved = run(["learn", mail_model_copy, "--ham", ham])
    assert "moved 1 document(s) from spam to ham" in moved.stderr


@pytest.mark.parametrize("capabilities", [None, "IMAP4rev1 LITERAL+ UIDPLUS"], ids=["move", "copy-expunge"])
def test_a_second_pass_fetches_only_what_is_new(make_dovecot, mail_model_copy, tmp_path, monkeypatch, capabilities):
    """nbcli's own filings are known by the UIDs the server gave them
    (COPYUID), so the next pass does not fetch them again: its work is
    the new messages', not the mailbox's."""
    from nbcli.imap import passes

    server, state = make_dovecot(capabilities=capabilities), tmp_path / "state.json"
    append(server, "INBOX", samples("spam", 8) + samples("ham", 4))
    assert summary(imap_pass(server, mail_model_copy, state))["filed"] >= 5
    fetched = []
    fetch = passes._Pass.fetch

    def counted(self, uids):
        fetched.extend((self.folder, u) for u in uids)
        return fetch(self, uids)

    monkeypatch.setattr(passes._Pass, "fetch", counted)
    append(server, "INBOX", samples("ham", 5)[4:])
    assert summary(imap_pass(server, mail_model_copy, state))["classified"] == 1
    assert fetched == [("INBOX", 13)]


def test_folders_named_in_any_language(dovecot, mail_model_copy, tmp_path):
    """Folder names are sent as IMAP wants them, modified UTF-7 (RFC 3501,
    5.1.3): a French mailbox's "Courrier indésirable" as its junk folder,
    a German "Erledigt & Archiv" (an ampersand: '&-' on the wire) learned
    as ham. Non-ASCII names were an 'internal error' (imaplib sends ASCII)."""
    junk, archive = "Courrier indésirable", "Erledigt & Archiv.Büro"  # this Dovecot's separator: "."
    with dovecot.client() as imap:
        for wire in ('"Courrier ind&AOk-sirable"', '"Erledigt &- Archiv"', '"Erledigt &- Archiv.B&APw-ro"'):
            assert imap.create(wire)[0] == "OK"
    append(dovecot, "Erledigt &- Archiv.B&APw-ro", samples("ham", 3))
    append(dovecot, "INBOX", samples("spam", 6) + samples("ham", 2))
    state = tmp_path / "state.json"
    said = summary(imap_pass(dovecot, mail_model_copy, state, "--junk", junk, "--learn-folder", f"{archive}=ham"))
    assert said["filed"] >= 4 and said["learned_folders"] == 3
    assert len(folder(dovecot, "Courrier ind&AOk-sirable")) == said["filed"]
    assert set(json.loads(state.read_text())["folders"]) == {"INBOX", junk, archive}
    # a folder that is not there is named as the user wrote it, and the hint lists the others decoded
    missing = run(imap_args(dovecot, mail_model_copy, state, "--junk", "Spämm"))
    assert missing.exit_code == 1
    assert "has no folder 'Spämm'" in missing.stderr and "Courrier indésirable" in missing.stderr


def test_a_large_message_is_fetched_only_as_far_as_the_model_reads_it(dovecot, mail_model_copy, tmp_path, monkeypatch):
    """A message past the model's max_message_bytes (512 KB) is fetched as
    its first 512 KB + 1 bytes, so a pass never holds an attacker's
    hundred-megabyte mail; the analyser reads no more of a whole one, so
    the verdict is filter's on the whole file, and a correction is learned
    under the digest `nbcli learn` gives the whole file (the extra byte
    keeps the 'truncated' mark the whole message gets)."""
    from nbcli.defaults import DEFAULT_MAX_MESSAGE_BYTES
    from nbcli.imap import passes

    ham = samples("ham", 1)[0]
    big = tmp_path / "big.eml"
    big.write_bytes(ham.rstrip(b"\n") + b"\n" + b"meeting notes agenda minutes budget review\n" * 40_000)
    assert big.stat().st_size > 3 * DEFAULT_MAX_MESSAGE_BYTES
    append(dovecot, "INBOX", [big.read_bytes()])
    sizes = []
    fetch = passes._Pass.fetch

    def measured(self, uids):
        for batch in fetch(self, uids):
            sizes.extend(len(m.data) for m in batch)
            yield batch

    monkeypatch.setattr(passes._Pass, "fetch", measured)
    state = tmp_path / "state.json"
    assert summary(imap_pass(dovecot, mail_model_copy, state))["classified"] == 1
    assert sizes == [DEFAULT_MAX_MESSAGE_BYTES + 1]
    ((flags, _),) = folder(dovecot, "INBOX").values()
    assert keyword_verdict(flags) == filter_verdict(mail_model_copy, big)
    with dovecot.client() as imap:
        imap.select("INBOX")
        assert imap.uid("MOVE", "1", "Junk")[0] == "OK"
    assert summary(imap_pass(dovecot, mail_model_copy, state))["learned_spam"] == 1
    assert sizes[-1] == DEFAULT_MAX_MESSAGE_BYTES + 1
    again = run(["learn", mail_model_copy, "--spam", big])
    assert "1 document(s) already learned as spam; not counted again" in again.stderr


def test_a_correction_is_learned_as_the_model_reads_whatever_max_message_bytes_classifies(
    dovecot, mail_model_copy, tmp_path
):
    """--max-message-bytes bounds classifying; a correction is analysed as
    `nbcli learn` and spamd's TELL analyse it (the model's own cap), so the
    same long message taught again from its file counts once (with the
    pass's cap it was another document, counted twice)."""
    ham = samples("ham", 1)[0]
    big = tmp_path / "long.eml"
    big.write_bytes(ham.rstrip(b"\n") + b"\n" + b"meeting notes agenda minutes budget review\n" * 2_000)
    append(dovecot, "INBOX", [big.read_bytes()])
    state = tmp_path / "state.json"
    assert summary(imap_pass(dovecot, mail_model_copy, state, "--max-message-bytes", "4K"))["classified"] == 1
    with dovecot.client() as imap:
        imap.select("INBOX")
        assert imap.uid("MOVE", "1", "Junk")[0] == "OK"
    assert summary(imap_pass(dovecot, mail_model_copy, state, "--max-message-bytes", "4K"))["learned_spam"] == 1
    again = run(["learn", mail_model_copy, "--spam", big])
    assert "1 document(s) already learned as spam; not counted again" in again.stderr


def test_a_message_moved_back_stays_ham_whatever_max_message_bytes_the_passes_are_given(
    dovecot, mail_model_copy, tmp_path
):
    """The state's digests were the cut message's under --max-message-bytes:
    a long spam filed by a pass with 10K, moved back by the user, read as
    another message to a pass without it, and was learned as spam and filed
    again. It is learned as ham and stays in the inbox, as with one cap."""
    spam = samples("spam", 4)[3]
    append(dovecot, "INBOX", [spam + b"\n" + b"filler text lorem ipsum dolor sit amet consectetur\n" * 400])
    state = tmp_path / "state.json"
    said = summary(imap_pass(dovecot, mail_model_copy, state, "--max-message-bytes", "10K"))
    assert said["spam"] == 1 and said["filed"] == 1
    with dovecot.client() as imap:
        imap.select("Junk")
        assert imap.uid("MOVE", "1:*", "INBOX")[0] == "OK"  # the user: not junk
    said = summary(imap_pass(dovecot, mail_model_copy, state))
    assert said["learned_ham"] == 1 and said["learned_spam"] == 0 and said["filed"] == 0
    assert len(folder(dovecot, "INBOX")) == 1 and not folder(dovecot, "Junk")
