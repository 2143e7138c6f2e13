"""What the `nbcli imap` tests share: sample messages put on the server,
a pass run through the command line, and a look at the folders as a
user's client would take one."""

from __future__ import annotations

import re

from conftest import SAMPLES, run


def samples(kind: str, n: int) -> list[bytes]:
    """The first n sample test messages of kind spam or ham, as bytes."""
    files = sorted((SAMPLES / "mail" / "test" / kind).iterdir())[:n]
    return [f.read_bytes() for f in files]


def append(server, folder: str, messages, flags=None) -> None:
    with server.client() as imap:
        for data in messages:
            typ, _ = imap.append(f'"{folder}"', flags, None, data)
            assert typ == "OK"


def settings_for(server, model, state):
    """The library's Settings of a pass over `server` (TLS, its CA), as the command makes them."""
    from nbcli.imap.settings import Settings

    return Settings(
        "localhost",
        server.user,
        server.password,
        str(model),
        port=server.tls_port,
        cafile=str(server.cafile),
        state=str(state),
    )


def imap_args(server, model, state, *more, tls: bool = True) -> list:
    connection = ["--port", server.tls_port, "--tls"] if tls else ["--port", server.port, "--no-tls"]
    return [
        "imap",
        model,
        "--host",
        "localhost" if tls else "127.0.0.1",
        *connection,
        "--cafile",
        server.cafile,
        "--user",
        server.user,
        "--password-file",
        server.password_file(),
        "--state",
        state,
        *more,
    ]


def imap_pass(server, model, state, *more, code: int = 0, tls: bool = True):
    """One `nbcli imap` pass, checked to exit with `code`."""
    result = run(imap_args(server, model, state, *more, tls=tls))
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr)
    return result


def summary(result) -> dict:
    """The key=value pairs of the summary line on stdout."""
    line = result.stdout.strip().splitlines()[-1]
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}


def folder(server, name: str) -> dict[int, tuple[set, bytes]]:
    """UID -> (flags, message) of every message in a folder, read with
    BODY.PEEK[] so the look changes nothing."""
    from nbcli.imap.passes import parse_fetch

    with server.client() as imap:
        typ, _ = imap.select(f'"{name}"', readonly=True)
        assert typ == "OK"
        typ, data = imap.uid("FETCH", "1:*", "(UID FLAGS BODY.PEEK[])")
        if data == [None]:
            return {}
        return {m.uid: (m.flags, m.data) for m in parse_fetch(data)}


class SlowProxy:
    """A TCP relay to a server that holds every chunk the server sends for
    `delay` seconds: a slow network, so that a pass lasts long enough to be
    killed at many points (tests/imap/test_imap_crash.py). Plain text: the
    client connects with --no-tls to 127.0.0.1:port."""

    def __init__(self, port: int, delay: float):
        import socket
        import threading

        self.target, self.delay = port, delay
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket
        import threading

        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self._pump, args=(client, server, 0.0), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, self.delay), daemon=True).start()

    @staticmethod
    def _pump(source, sink, delay: float) -> None:
        import socket
        import time

        try:
            while chunk := source.recv(65536):
                if delay:
                    time.sleep(delay)
                sink.sendall(chunk)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def close(self) -> None:
        self.listener.close()
