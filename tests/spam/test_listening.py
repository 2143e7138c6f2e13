"""`nbcli serve`'s listening sockets (`spam/listening.py`): a socket path
holding anything but a dead socket is left alone, and the default socket
folder must be this user's and private."""

from __future__ import annotations

import os
import socket
import stat
import sys

import pytest

from nbcli.errors import NbcliError
from nbcli.spam import listening
from nbcli.spam.settings import Settings

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="Unix sockets")


def settings(path: str, private: bool = False) -> Settings:
    out = Settings("m.nb", path, None, [], 1)
    out.private_socket_folder = private
    return out


def test_socket_path_that_is_a_file_is_left_alone(tmp_path):
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    with pytest.raises(NbcliError, match="exists and is not a socket"):
        listening.bind(settings(str(notes)))
    assert notes.read_text() == "my notes\n"
    elsewhere = tmp_path / "target"
    elsewhere.write_text("theirs\n")
    (tmp_path / "link.sock").symlink_to(elsewhere)
    with pytest.raises(NbcliError, match="exists and is not a socket"):
        listening.bind(settings(str(tmp_path / "link.sock")))
    assert (tmp_path / "link.sock").is_symlink() and elsewhere.read_text() == "theirs\n"


def test_a_dead_socket_is_replaced_and_a_live_one_refused(tmp_path):
    path = str(tmp_path / "s.sock")
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(path)
    dead.close()  # bound, never listened: refuses connections, as a socket left by a daemon that died
    sockets = listening.bind(settings(path))
    try:
        assert stat.S_ISSOCK(os.lstat(path).st_mode) and stat.S_IMODE(os.lstat(path).st_mode) == 0o660
        with pytest.raises(NbcliError, match="another server is listening there"):
            listening.bind(settings(path))
    finally:
        for sock in sockets:
            sock.close()


def test_the_default_folder_is_made_private(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    path = listening.default_socket()
    assert path == str(tmp_path / "nbcli" / "spamd.sock")
    for sock in listening.bind(settings(path, private=True)):
        sock.close()
    st = os.lstat(tmp_path / "nbcli")
    assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.getuid()


def test_without_xdg_the_default_is_per_uid_in_tmp(monkeypatch):
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    assert listening.default_socket() == f"/tmp/nbcli-{os.getuid()}/spamd.sock"


@pytest.mark.parametrize("how", ["link", "open-mode", "other-owner", "file"])
def test_a_default_folder_that_is_not_private_is_refused(tmp_path, monkeypatch, how):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    folder = tmp_path / "nbcli"
    theirs = tmp_path / "theirs"
    theirs.mkdir(mode=0o700)
    if how == "link":  # another user's folder, through a link in our place
        folder.symlink_to(theirs)
    elif how == "open-mode":
        folder.mkdir()
        folder.chmod(0o755)
    elif how == "file":
        folder.write_text("")
    else:
        if os.geteuid() != 0:
            pytest.skip("giving a folder to another user needs root")
        folder.mkdir(mode=0o700)
        os.chown(folder, 65534, 65534)
    with pytest.raises(NbcliError, match=f"refusing the socket folder {folder}"):
        listening.bind(settings(listening.default_socket(), private=True))
    assert list(theirs.iterdir()) == []


def test_addresses_name_the_unix_socket_and_tcp_ports(tmp_path):
    path = str(tmp_path / "s.sock")
    options = settings(path)
    options.port, options.listen = 0, ["127.0.0.1"]
    sockets = listening.bind(options)
    try:
        unix, tcp = listening.addresses(sockets)
        assert unix == f"unix:{path}" and tcp.startswith("tcp:127.0.0.1:") and int(tcp.rsplit(":", 1)[1]) > 0
        assert all(not sock.getblocking() for sock in sockets)
        ours = listening.socket_identity(path)
        assert ours is not None
    finally:
        for sock in sockets:
            sock.close()
    listening.remove_socket(path, None)  # bound by no one here: left alone
    listening.remove_socket(path, (ours[0], ours[1] + 1))  # another socket than ours: left alone
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
    listening.remove_socket(path, ours)
    assert not os.path.exists(path)


def test_a_socket_path_too_long_for_a_unix_socket_says_so(tmp_path):
    # bind raises OSError("AF_UNIX path too long") with no strerror: the line said 'cannot listen on ...: None'
    path = str(tmp_path / ("s" * 150 + ".sock"))
    with pytest.raises(NbcliError) as cannot:
        listening.bind(settings(path))
    n = len(os.fsencode(path))
    said = f"cannot listen on {path}: it is {n} bytes long, more than a Unix socket's path can be (107)"
    assert str(cannot.value).startswith(said)
    assert cannot.value.hint == "give socket_path a shorter path"


def test_a_socket_in_a_folder_that_is_not_there_is_refused_not_made(tmp_path):
    """--socket's folder was made, mode 0700: as root that locked out the
    mail server's user the socket's 0660 lets in, and a typo made a folder
    anywhere. The administrator makes it (its mode says who connects)."""
    path = tmp_path / "run" / "nbcli" / "spamd.sock"
    with pytest.raises(NbcliError) as cannot:
        listening.bind(settings(str(path)))
    assert str(cannot.value).startswith(f"cannot listen on {path}: there is no folder {path.parent}")
    assert f"mkdir -m 755 {path.parent}" in cannot.value.hint
    assert not (tmp_path / "run").exists()
    path.parent.mkdir(parents=True)
    for sock in listening.bind(settings(str(path))):
        sock.close()
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_the_refusals_name_the_socket_path_and_the_cli_says_socket(tmp_path):
    """The library names the parameter (socket_path); `nbcli serve` says
    --socket (its error boundary renders the ParameterError)."""
    from nbcli.cli.options import in_flag_terms
    from nbcli.errors import ParameterError

    from conftest import SAMPLES, one_line_error, run

    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    with pytest.raises(ParameterError) as refused:
        listening.bind(settings(str(notes)))
    assert refused.value.parameter == "socket_path"
    assert refused.value.hint == "give socket_path a path of its own"
    assert in_flag_terms(refused.value).hint == "give --socket a path of its own"
    with pytest.raises(ParameterError) as cannot:
        listening.bind(settings(str(notes / "s.sock")))  # under a file: no folder can be made there
    assert str(cannot.value).startswith(f"cannot listen on {notes / 's.sock'}: ")
    assert cannot.value.hint == "give socket_path a writable place"
    assert in_flag_terms(cannot.value).hint == "give --socket a writable place"
    model = tmp_path / "mail.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", model, "-q"]).exit_code == 0
    line = one_line_error(run(["serve", model, "--socket", notes]))
    assert (
        line == f"nbcli: error: {notes} exists and is not a socket; nbcli serve replaces only a socket left by a "
        "daemon that died; give --socket a path of its own"
    )
