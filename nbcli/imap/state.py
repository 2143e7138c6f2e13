"""The state file of `nbcli imap`: what the passes over one mailbox have
seen and done, so the next pass does only what is new.

A JSON document:

    {"format": "nbcli-imap-state", "version": 1,
     "folders": {"INBOX": {"uidvalidity": 7, "last_uid": 40},
                 "Junk": {"uidvalidity": 9, "last_uid": 12, "not_junk": [3, 5], "own": [13, 14]},
                 ...},
     "junk": ["<32 hex digits>", ...],
     "intent": {"uidvalidity": 7, "uids": [41, 44], "digests": [...]} | null}

- per folder, its UIDVALIDITY and the highest UID a pass has dealt with
  (for the junk folder also the UIDs whose user-set `$NotJunk` was
  learned, and `own`: the UIDs there of messages nbcli moved in since,
  as the server's COPYUID gave them, which the next pass need not fetch);
  a changed UIDVALIDITY makes the folder new again;
- `junk`: the content digests (the model record's, `text.identity`) of the
  messages nbcli holds to be in the junk folder: those it filed, and
  those it learned as spam there; a message whose digest is here and that
  shows up in the inbox was moved back by the user;
- `intent`: the write-ahead record of a filing: written (and made
  durable) before the messages are moved, cleared after; a pass that
  finds one completes the move it describes, so a crash between the two
  never makes nbcli take its own filing for a user's correction.

Written atomically: a temporary file in the same folder, fsync'ed, renamed
over the old one, the folder fsync'ed (`store.integrity.fsync_folder`).
Losing the file costs a re-scan: the record of the model makes learning a
message again a no-op.
"""

from __future__ import annotations

import json
import os
from contextlib import contextmanager
from dataclasses import dataclass, field

from nbcli.errors import NbcliError

FORMAT = "nbcli-imap-state"


@dataclass
class State:
    path: str
    folders: dict = field(default_factory=dict)
    junk: set = field(default_factory=set)
    intent: dict | None = None

    @classmethod
    def load(cls, path: str) -> State:
        from nbcli.store.integrity import special_kind

        kind = special_kind(path)
        if kind is not None:  # a named pipe would hang the pass (opening one waits for a writer)
            raise NbcliError(f"{path} is {kind}, not a state file", hint="give another --state file")
        try:
            with open(path, encoding="utf-8") as fh:
                doc = json.load(fh)
        except FileNotFoundError:
            return cls(path)
        except (OSError, ValueError, RecursionError) as exc:
            raise NbcliError(
                f"cannot read the state file {path}: {getattr(exc, 'strerror', None) or exc}",
                hint="remove it to start afresh (the next pass re-scans the mailbox; nothing is learned twice)",
            ) from None
        if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("folders"), dict):
            raise NbcliError(f"{path} is not an nbcli imap state file", hint="give another --state file")
        return cls(path, doc["folders"], set(doc.get("junk") or ()), doc.get("intent"))

    def folder(self, name: str, uidvalidity: int) -> dict:
        """The state of folder `name`, made afresh if its UIDVALIDITY changed
        (its UIDs then name other messages)."""
        entry = self.folders.get(name)
        if not isinstance(entry, dict) or entry.get("uidvalidity") != uidvalidity:
            entry = self.folders[name] = {"uidvalidity": uidvalidity, "last_uid": 0}
        return entry

    def save(self) -> None:
        doc = {
            "format": FORMAT,
            "version": 1,
            "folders": self.folders,
            "junk": sorted(self.junk),
            "intent": self.intent,
        }
        write_atomically(self.path, (json.dumps(doc, indent=1, sort_keys=True) + "\n").encode())


def write_atomically(path: str, data: bytes) -> None:
    from nbcli.store.integrity import replace_atomically

    path = os.path.abspath(path)
    try:
        os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
        replace_atomically(path, lambda fh: fh.write(data), 0o600)
    except OSError as exc:
        raise NbcliError(f"cannot write the state file {path}: {exc.strerror or exc}") from None


@contextmanager
def locked(path: str, wait: bool = False):
    """Hold `.NAME.lock` beside the state file for a pass: a second pass on
    the same state at once (cron overlapping a slow pass) is refused, not
    queued; with `wait` (`--idle`, which must not end because a one-off pass
    happens to run when mail comes) it waits its turn. flock(2): a killed
    pass never leaves it held."""
    import fcntl

    folder, name = os.path.split(os.path.abspath(path))
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        fd = os.open(os.path.join(folder, f".{name}.lock"), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as exc:
        raise NbcliError(f"cannot lock the state file {path}: {exc.strerror}") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if wait else fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise NbcliError(
                f"another nbcli imap pass is using {path}", hint="wait for it to end, or give another --state"
            ) from None
        yield
    finally:
        os.close(fd)
