"""Raw messages for `nbcli filter` (nbcli/text/raw_messages.py): whole,
byte for byte, never cut at --max-doc-bytes; a bad INPUT is an error naming
it before anything is read, a bad file inside a folder a warning."""

import os

import pytest

from nbcli.errors import NbcliError
from nbcli.text.documents import Skipped, Unreadable
from nbcli.text.raw_messages import read_messages

from mailfixtures import MESSAGES, mbox_of

ALL = [MESSAGES[k] for k in sorted(MESSAGES)]


def test_read_messages_for_filter_never_cuts(tmp_path):
    big = MESSAGES["crlf"] + b"x" * (3 << 20)
    (tmp_path / "big.eml").write_bytes(big)
    assert list(read_messages(str(tmp_path / "big.eml"))) == [big]
    (tmp_path / "box").write_bytes(mbox_of(ALL))
    assert b"".join(read_messages(str(tmp_path / "box"))) == mbox_of(ALL)


def test_a_missing_input_is_an_error_naming_it_at_once(tmp_path):
    with pytest.raises(NbcliError, match="no such file or folder") as caught:
        read_messages(str(tmp_path / "nope.mbox"))  # raised before the first message is asked for
    assert str(tmp_path / "nope.mbox") in caught.value.message


def test_a_folder_gives_each_file_s_messages_in_order_and_warns_about_the_rest(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.eml").write_bytes(MESSAGES["crlf"])
    (folder / "b.mbox").write_bytes(mbox_of(ALL[:2]))
    (folder / "c.eml").write_bytes(b"")  # an empty file: no message
    os.mkfifo(folder / "d.fifo")  # listed as a FIFO: skipped, never opened
    warnings = []
    got = list(read_messages(str(folder), warn=warnings.append))
    assert len(got) == 3 and got[0] == MESSAGES["crlf"]
    assert b"".join(got[1:]) == mbox_of(ALL[:2])
    assert len(warnings) == 1 and isinstance(warnings[0], Skipped) and "d.fifo" in warnings[0]


def test_an_unreadable_file_in_a_folder_is_an_unreadable_warning(tmp_path, monkeypatch):
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.eml").write_bytes(MESSAGES["crlf"])
    (folder / "b.eml").write_bytes(MESSAGES["crlf"])
    real_open = os.open

    def deny_b(name, flags, *args):
        if str(name).endswith("b.eml"):
            raise PermissionError(13, "Permission denied", name)
        return real_open(name, flags, *args)

    monkeypatch.setattr(os, "open", deny_b)
    warnings = []
    got = list(read_messages(str(folder), warn=warnings.append))
    monkeypatch.undo()
    assert got == [MESSAGES["crlf"]]
    assert warnings == [f"skipping {folder / 'b.eml'}: Permission denied"] and isinstance(warnings[0], Unreadable)
