"""What one `nbcli imap` pass needs to know: the server, the account, the
folders, the model and the state file (`Settings`), and the checks that
refuse what cannot work before anything connects.

Decisions:
- security: "tls" (implicit TLS, the default; port 993), "starttls"
  (plain connection upgraded before login; port 143) or "none" (plain
  text; port 143), which is refused for a host that is not a loopback
  address unless `allow_plaintext` says the user means it: the password
  would cross the network readable.
- the state file defaults to one per account in the XDG state folder,
  `$XDG_STATE_HOME/nbcli/imap/USER@HOST.json` (else
  `~/.local/state/...`): it describes the mailbox, not the model, and one
  model may filter several accounts.
- the password is a field that no repr, log or error shows.
"""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from dataclasses import dataclass, field

from nbcli.defaults import DEFAULT_HAM_CUTOFF, DEFAULT_SPAM_CUTOFF
from nbcli.errors import NbcliError

SECURITY = ("tls", "starttls", "none")
CLASSES = ("spam", "ham")  # what --learn-folder may name (a spam model's classes; spam_class for spam)


@dataclass
class Settings:
    host: str
    user: str
    password: str = field(repr=False)
    model: str
    port: int | None = None  # None: 993 for tls, else 143
    security: str = "tls"
    cafile: str | None = None
    inbox: str = "INBOX"
    junk: str = "Junk"
    state: str | None = None  # None: `default_state_path`
    learn_folders: tuple = ()  # ((folder, "spam" | "ham"), ...)
    dry_run: bool = False
    batch: int = 50  # messages per FETCH
    timeout: float = 60.0  # seconds a socket operation may take
    spam_class: str = "spam"
    spam_cutoff: float = DEFAULT_SPAM_CUTOFF
    ham_cutoff: float = DEFAULT_HAM_CUTOFF
    cutoffs_given: bool = False
    max_message_bytes: int | None = None
    allow_plaintext: bool = False
    wait_for_state: bool = False  # --idle: wait for another pass on the state file, not refuse

    @property
    def port_number(self) -> int:
        if self.port is not None:
            return self.port
        return 993 if self.security == "tls" else 143

    @property
    def state_path(self) -> str:
        return self.state or default_state_path(self.user, self.host)

    def checked(self) -> Settings:
        """These settings, or an NbcliError naming what cannot work."""
        if self.security not in SECURITY:
            raise NbcliError(f"unknown security {self.security!r}", hint=f"one of {', '.join(SECURITY)}")
        if not 0 < self.port_number < 65536:
            raise NbcliError(f"--port {self.port_number} is not a port number", hint="give 1 to 65535")
        if not self.host.strip():
            raise NbcliError("--host is empty", hint="give the IMAP server's name or address, such as imap.example.org")
        if not self.user:
            raise NbcliError("--user is empty", hint="give the name you log in to the IMAP server with")
        if self.security == "none" and not self.allow_plaintext and not is_loopback(self.host):
            raise NbcliError(
                f"--no-tls would send the password to {self.host} as plain text",
                hint="use --tls or --starttls, or add --allow-plaintext if you mean it",
            )
        if self.cafile is not None and not os.path.isfile(self.cafile):
            raise NbcliError(f"--cafile {self.cafile}: no such file", hint="give the PEM file of your CA's certificate")
        for name, option in ((self.inbox, "--inbox"), (self.junk, "--junk")):
            if not name:  # it reached SELECT "" on the server before
                raise NbcliError(f"{option} is empty", hint="give the folder's name as your mail program shows it")
        names = [self.inbox, self.junk] + [f for f, _ in self.learn_folders]
        for folder, cls in self.learn_folders:
            if folder in (self.inbox, self.junk):
                raise NbcliError(
                    f"--learn-folder {folder}={cls}: {folder} is the inbox or the junk folder, which nbcli "
                    "learns from the user's corrections",
                    hint="name another folder (an archive, say)",
                )
        if len(set(names)) != len(names):
            raise NbcliError("a folder is named twice (--inbox, --junk, --learn-folder)", hint="name each once")
        return self


def is_loopback(host: str) -> bool:
    """Whether `host` is a loopback address, or a name that resolves only
    to loopback addresses (localhost)."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(i[4][0].split("%")[0]).is_loopback for i in infos)


def default_state_path(user: str, host: str) -> str:
    base = os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")
    name = re.sub(r"[^\w.@-]", "_", f"{user}@{host}")
    return os.path.join(base, "nbcli", "imap", f"{name}.json")


def parse_learn_folder(text: str, spam_class: str = "spam") -> tuple[str, str]:
    """FOLDER=CLASS (CLASS spam or ham) as (folder, class)."""
    folder, sep, cls = text.rpartition("=")
    if not sep or not folder or cls not in (spam_class, "ham", "spam"):
        raise NbcliError(
            f"--learn-folder {text}: give FOLDER=spam or FOLDER=ham", hint="for instance --learn-folder Archive=ham"
        )
    return folder, ("spam" if cls == spam_class else cls)


def read_password(path: str | None) -> str:
    """The password: the first line of `path` (a file nobody else may
    read: one readable by its group or others is refused, as ssh refuses
    such a key), else the environment variable NBCLI_IMAP_PASSWORD."""
    import stat

    if path is None:
        password = os.environ.get("NBCLI_IMAP_PASSWORD")
        if not password:
            raise NbcliError(
                "no password: give --password-file FILE or set NBCLI_IMAP_PASSWORD",
                hint="keep the password in a file only you can read (chmod 600)",
            )
        return password
    try:
        with open(path, "rb") as fh:
            mode = os.fstat(fh.fileno()).st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):  # /dev/null's mode 666 would have us say 'chmod 600 /dev/null'
                raise NbcliError(
                    f"--password-file {path} is a device, not a file", hint="give the file that holds the password"
                )
            if mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise NbcliError(
                    f"--password-file {path} may be read by others (mode {stat.S_IMODE(mode):o})",
                    hint=f"chmod 600 {path}",
                )
            first = fh.read(4096).split(b"\n", 1)[0].rstrip(b"\r")
    except OSError as exc:
        raise NbcliError(f"--password-file {path}: {exc.strerror}") from None
    if not first:
        raise NbcliError(f"--password-file {path} is empty", hint="write the password on its first line")
    return first.decode("utf-8", "surrogateescape")
