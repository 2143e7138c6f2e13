"""A throw-away Dovecot IMAP server for the tests and benchmarks of
`nbcli imap` (issue 29): Debian's `dovecot-imapd`, installed by
`conftest.debian_tool` when missing, started in the foreground with a
configuration written into a temporary folder, on free loopback ports.

- one passwd-file user per server (`user`, `password`), Maildir storage
  under `root/mail/USER`, folders INBOX and Junk (special-use \\Junk);
- plain IMAP with STARTTLS on `port`, implicit TLS on `tls_port`, with a
  self-signed certificate for localhost and 127.0.0.1 made here (`cafile`
  verifies it);
- `capabilities` replaces what the server announces after login (to test a
  server without MOVE or IDLE, say); None keeps Dovecot's own;
- `stop()` and `start()` again keep the mail, to test a dropped connection.

As root (CI), Dovecot's own accounts run the login processes and the mail
belongs to the `dovecot` account (Dovecot refuses uid 0 for mail); as
another user, everything runs as that user.

    server = Dovecot()                # started, in a new folder of its own
    with server.client() as imap:     # an imaplib.IMAP4, logged in
        imap.append("INBOX", None, None, message_bytes)
    server.close()
"""

from __future__ import annotations

import contextlib
import imaplib
import os
import pwd
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import time
from pathlib import Path


def free_port() -> int:
    return free_ports(1)[0]


def free_ports(n: int) -> list[int]:
    """n distinct free loopback ports: the sockets are held until all are
    bound (one closed before the next bind can be handed out again, which
    gave Dovecot two listeners on one port)."""
    with contextlib.ExitStack() as stack:
        socks = [stack.enter_context(socket.socket()) for _ in range(n)]
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]


def _certificate(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        [
            "openssl",
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(key),
            "-out",
            str(cert),
            "-days",
            "2",
            "-subj",
            "/CN=localhost",
            "-addext",
            "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        check=True,
        capture_output=True,
    )
    return cert, key


class Dovecot:
    def __init__(
        self, root: Path | None = None, dovecot: str = "dovecot", user: str = "alice", capabilities: str | None = None
    ):
        # Dovecot's own accounts must reach the files: pytest's folders are 0700 to root
        self.own_root = root is None
        self.root = Path(tempfile.mkdtemp(prefix="nbcli-dovecot-")) if root is None else Path(root)
        self.root.chmod(0o711)
        self.binary = dovecot
        self.user, self.password = user, "s3cret-pass phrase"
        self.capabilities = capabilities
        self.port, self.tls_port = free_ports(2)
        self.process: subprocess.Popen | None = None
        for sub in ("run", "state", "mail", "home"):
            (self.root / sub).mkdir(parents=True, exist_ok=True)
        self.cafile, key = _certificate(self.root)
        (self.root / "users").write_text(f"{self.user}:{{PLAIN}}{self.password}\n")
        if os.geteuid() == 0:
            login, internal, mail = "dovenull", "dovecot", "dovecot"
            account = pwd.getpwnam(mail)
            for sub in ("mail", "home"):
                os.chown(self.root / sub, account.pw_uid, account.pw_gid)
        else:
            login = internal = mail = pwd.getpwuid(os.geteuid()).pw_name
        lines = [
            f"base_dir = {self.root}/run",
            f"state_dir = {self.root}/state",
            f"log_path = {self.root}/dovecot.log",
            "protocols = imap",
            "listen = 127.0.0.1",
            "ssl = yes",
            f"ssl_cert = <{self.cafile}",
            f"ssl_key = <{key}",
            "disable_plaintext_auth = no",
            "auth_mechanisms = plain login",
            f"default_login_user = {login}",
            f"default_internal_user = {internal}",
            f"mail_location = maildir:{self.root}/mail/%u",
            "first_valid_uid = 1",
            "passdb {",
            "  driver = passwd-file",
            f"  args = scheme=PLAIN username_format=%u {self.root}/users",
            "}",
            "userdb {",
            "  driver = static",
            f"  args = uid={mail} gid={mail} home={self.root}/home/%u",
            "}",
            "service imap-login {",
            f"  inet_listener imap {{\n    port = {self.port}\n  }}",
            f"  inet_listener imaps {{\n    port = {self.tls_port}\n  }}",
            "}",
            "namespace inbox {",
            "  inbox = yes",
            "  mailbox Junk {\n    special_use = \\Junk\n    auto = subscribe\n  }",
            "}",
        ]
        if capabilities is not None:
            lines.append(f"imap_capability = {capabilities}")
        self.config = self.root / "dovecot.conf"
        self.config.write_text("\n".join(lines) + "\n")
        self.start()

    @property
    def maildir(self) -> Path:
        """The user's Maildir (INBOX; other folders are `.NAME` inside)."""
        return self.root / "mail" / self.user

    def start(self) -> None:
        log = open(self.root / "stderr.log", "ab")
        self.process = subprocess.Popen([self.binary, "-F", "-c", str(self.config)], stdout=log, stderr=log)
        log.close()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"dovecot exited at start: {self.log()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=1) as s:
                    if s.recv(100).startswith(b"* OK"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"dovecot did not answer on port {self.port}: {self.log()[-2000:]}")

    def stop(self, at_once: bool = False) -> None:
        """Stop the server (every connection drops); the mail stays. at_once:
        kill -9 rather than SIGTERM (a graceful stop takes 1-3 s)."""
        children = _children(self.process.pid) if self.process is not None else []
        if self.process is not None and self.process.poll() is None:
            self.process.kill() if at_once else self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None
        # the master leaves its imap (and log, stats) processes running: a
        # client would keep its session across the "restart"
        for pid in children:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL if at_once else signal.SIGTERM)
        deadline = time.monotonic() + 10
        while any(map(_running, children)) and time.monotonic() < deadline:
            time.sleep(0.01)
        with contextlib.suppress(FileNotFoundError):  # a master that was killed leaves its pid file
            (self.root / "run" / "master.pid").unlink()

    def close(self) -> None:
        """End the server at once (a test's server: nothing is kept) and
        remove its folder when it made it."""
        self.stop(at_once=True)
        if self.own_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def log(self) -> str:
        parts = [
            p.read_text(errors="replace") for p in (self.root / "dovecot.log", self.root / "stderr.log") if p.exists()
        ]
        return "\n".join(parts)

    def password_file(self) -> Path:
        """A file holding the password, readable by its owner only, as a
        user would keep it for --password-file."""
        path = self.root / "password"
        path.write_text(self.password + "\n")
        path.chmod(0o600)
        return path

    def tls_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.cafile))

    @contextlib.contextmanager
    def client(self, tls: bool = False):
        """A logged-in imaplib client, as a user's mail program would be;
        logged out at the end."""
        if tls:
            imap = imaplib.IMAP4_SSL("localhost", self.tls_port, ssl_context=self.tls_context())
        else:
            imap = imaplib.IMAP4("127.0.0.1", self.port)
        imap.login(self.user, self.password)
        try:
            yield imap
        finally:
            with contextlib.suppress(imaplib.IMAP4.error, OSError):
                imap.logout()


def _running(pid: int) -> bool:
    """Whether process `pid` still runs (a zombie, dead but not yet reaped
    by whoever adopted it, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return False


def _children(parent: int) -> list[int]:
    """The processes whose parent is `parent` (Linux's /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == parent:
                found.append(int(stat.parent.name))
    return found


def dovecot_binary() -> str:
    """The dovecot binary (Debian's dovecot-imapd), installed when missing
    or the test skipped with the reason. For tests only (uses conftest)."""
    from conftest import debian_tool

    (binary,) = debian_tool("dovecot-imapd", "dovecot", usable=lambda paths: _has_imap())
    return binary


def _has_imap() -> bool:
    """dovecot-core alone has no imap binary; dovecot-imapd brings it."""
    return any(Path(d, "imap").exists() for d in ("/usr/lib/dovecot", "/usr/libexec/dovecot"))
