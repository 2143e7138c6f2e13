"""One pass of `nbcli imap` over a mailbox: learn the user's corrections,
classify and file the new inbox messages, learn the --learn-folder folders.

The order (each step saves the state file, `imap.state`, as it goes):

1. an unfinished filing of the last pass (the state's write-ahead
   `intent`) is completed: the messages it names that are still in the
   inbox are moved, and all of them count as nbcli's own filing;
2. the junk folder: a message new there (UID above the last seen) that
   nbcli did not file is the user's correction, learned as spam (and
   given `$Junk`, its `$NotJunk` and `$NbcliUnsure` taken away); a message
   seen before on which the user set `$NotJunk` is learned as ham (and
   loses `$Junk`);
3. the inbox: a message with the user's `$Junk` is learned as spam and
   filed; an unsure one (`$NbcliUnsure`) on which the user set `$NotJunk`
   is learned as ham and loses `$NbcliUnsure`; then the new messages, in
   batches of `Settings.batch`, fetched with BODY.PEEK[] (\\Seen never
   changes; only as much of each as the model reads: `_Pass.fetch`): one
   nbcli filed (or learned as spam) that shows up again with its `$Junk`
   (or the `$NotJunk` a mail program sets) was moved back by
   the user, and is learned as ham (a move in the model's record, so it
   counts once), given `$NotJunk` and not filed again; one with `$Junk` is
   learned as spam and filed; one that already carries `$NotJunk` or
   `$NbcliUnsure` was classified before (a re-scan) and is left alone;
   every other one is classified by `spam.filtering.run`, the code `nbcli
   filter` runs, so it gets the verdict filter gives it: spam gets `$Junk`
   and is moved to the junk folder, ham gets `$NotJunk`, unsure stays in
   the inbox with `$NbcliUnsure`. A message that cannot be classified is
   logged and skipped (left as it is; the pass goes on), and one the user
   deleted (\\Deleted, not expunged yet) is left alone, here and in the
   junk folder;
4. each --learn-folder FOLDER=CLASS: its messages above the last UID seen
   are learned as CLASS (the folder is opened read-only).

Keywords, decided: `$Junk` and `$NotJunk` are the keywords Thunderbird and
Apple Mail use; `$NbcliUnsure` is nbcli's own for the unsure band. nbcli
sets `$NotJunk` only on inbox messages it classified as ham, so a user's
`$NotJunk` is told from nbcli's by where it is: in the junk folder, or on
an inbox message nbcli left unsure (`$NbcliUnsure`); elsewhere it is nbcli's
(a message nbcli classified as ham and the user then moved to the junk
folder carries nbcli's `$NotJunk`: it is a new arrival there, learned as
spam, and loses that keyword before anything else looks at it). A `$Junk`
in the inbox is always the user's: nbcli sets it only right before it
moves a message out (and completes such a move after a crash first).

First contact: the junk folder of a mailbox this state file has never
seen is taken as it is (nothing in it is learned: those messages did not
"appear" since a pass; train on them with `nbcli learn` or a
--learn-folder of a copy), the inbox is classified in full. A changed
UIDVALIDITY re-scans that folder: the state's digests and the model's
record make the re-scan harmless (nothing is learned twice, nothing
classified before is classified again).

Work proportional to what is new: the UIDs the server gives the messages
nbcli moves (COPYUID, which MOVE and UIDPLUS servers send) are kept in the
junk folder's state (`own`), so the next pass does not fetch them to know
them for nbcli's own; where a server gives none, the digest tells (the
message is fetched once more).

Learning goes through `run.updating.learn_into`, the locked update
`nbcli learn` uses; the model is read again after each learning step, so
the inbox is classified with the corrections learned. Filing: MOVE where
the server has it, else UID COPY, UID STORE +FLAGS \\Deleted and UID
EXPUNGE of exactly those UIDs (UIDPLUS); a server with neither is refused
before anything changes, since a plain EXPUNGE would also remove the
user's own deleted messages. Messages are never changed or APPENDed.

--dry-run opens every folder read-only (EXAMINE), learns nothing, moves
and marks nothing and saves no state: the report says what a pass would
do now.

A dropped connection propagates (OSError, imaplib.IMAP4.abort); `Report`
says how far the pass got.
"""

from __future__ import annotations

import imaplib
import re
from dataclasses import dataclass, field

from nbcli.errors import NbcliError
from nbcli.imap import folder_names
from nbcli.imap.settings import Settings
from nbcli.imap.state import State, locked

JUNK, NOT_JUNK, UNSURE = "$Junk", "$NotJunk", "$NbcliUnsure"
DELETED = "\\deleted"  # as `Message.flags` hold it


@dataclass
class Report:
    """What a pass did (or, with --dry-run, would do), counted as it goes."""

    dry_run: bool = False
    stage: str = "starting"
    verdicts: dict = field(default_factory=lambda: {"spam": 0, "ham": 0, "unsure": 0})
    skipped: int = 0  # messages that could not be classified
    filed: int = 0
    learned: dict = field(default_factory=lambda: {"spam": 0, "ham": 0})  # the user's corrections
    folders: dict = field(default_factory=dict)  # --learn-folder FOLDER -> messages learned

    def as_dict(self) -> dict:
        return {
            "dry_run": self.dry_run,
            "classified": sum(self.verdicts.values()),
            **self.verdicts,
            "skipped": self.skipped,
            "filed": self.filed,
            "learned_spam": self.learned["spam"],
            "learned_ham": self.learned["ham"],
            "learned_folders": dict(self.folders),
        }

    def line(self) -> str:
        """One line of key=value pairs, stable for scripts: 'imap: classified=12
        spam=3 ham=8 unsure=1 skipped=0 filed=3 learned_spam=1 learned_ham=0
        learned_folders=0' (dry-run: 'imap (dry run): ...', what it would do)."""
        d = self.as_dict()
        d["learned_folders"] = sum(self.folders.values())
        del d["dry_run"]
        return f"imap{' (dry run)' if self.dry_run else ''}: " + " ".join(f"{k}={v}" for k, v in d.items())


@dataclass
class Message:
    uid: int
    flags: set  # lower case: IMAP keywords are case-insensitive
    data: bytes
    digest: str = ""


def run_pass(
    imap: imaplib.IMAP4, settings: Settings, learn, report: Report | None = None, log=None, model: tuple | None = None
) -> Report:
    """One pass over the logged-in `imap` (see the module's docstring).
    learn: `run.updating.learn_into`, given by the caller (importing it
    here would make the import chain from `nbcli` one module too long:
    tests/test_imports.py); model: `read_model`'s result, if the caller
    has one (used while the model is unchanged)."""
    report = report if report is not None else Report(dry_run=settings.dry_run)
    with locked(settings.state_path, wait=settings.wait_for_state):
        _Pass(imap, settings, report, log or (lambda text: None), learn, model).run()
    report.stage = "done"
    return report


def read_model(settings: Settings, known: tuple | None = None) -> tuple:
    """(the model at settings.model read as a view, the file stamp taken
    before reading it), or NbcliError for a model no pass could use: missing
    or unready, a table model, not a spam model, or one that cannot learn
    (unless --dry-run: a pass learns the user's corrections). `known`: an
    earlier result, given back as it is while the model file and its
    journal are unchanged: the command reads and checks the model before it
    connects (a wrong model is said before any server is asked), and its
    first pass uses that read."""
    from nbcli.spam.filtering import Verdicts, check_mail_model
    from nbcli.store import modelfile
    from nbcli.store.modelfile import file_stamp

    path, s = settings.model, settings
    try:
        stamp = file_stamp(path)
    except OSError as exc:
        raise NbcliError(f"cannot read model {path}: {exc.strerror}", hint="train one with 'nbcli train'") from None
    if known is not None and known[1] == stamp:
        return known
    raw = modelfile.load_view(path)
    raw.check_ready(path)
    check_mail_model(raw, path, "nbcli imap")
    if not s.dry_run:  # refused before the pass, not at its first correction
        from nbcli.fit.learning import check_learnable

        check_learnable(raw, path)
    verdicts = Verdicts(raw.classes, s.spam_class, s.spam_cutoff, s.ham_cutoff, raw.decision_rule(), s.cutoffs_given)
    if not verdicts.binary:
        raise NbcliError(
            f"{path} is not a spam model: its classes are {', '.join(raw.classes)}",
            hint="train it on spam and ham, or name its spam class with --spam-class",
        )
    return raw, stamp


def _uid_set(uids) -> str:
    return ",".join(str(u) for u in sorted(uids))


def _uid_list(text: bytes) -> list[int]:
    """The UIDs of a sequence set ("1:3,7"), in order; [] for what is not one."""
    out: list[int] = []
    for part in text.decode("ascii", "replace").split(","):
        low, _, high = part.partition(":")
        if not low.isdigit() or (high and not high.isdigit()):
            return []
        a, b = int(low), int(high or low)
        out.extend(range(a, b + 1) if a <= b else range(a, b - 1, -1))
    return out


_UID = re.compile(rb"\bUID (\d+)")
_FLAGS = re.compile(rb"\bFLAGS \(([^)]*)\)")


def parse_fetch(data) -> list[Message]:
    """The messages of a UID FETCH (UID FLAGS BODY.PEEK[], whole or partial) response, in the
    order given; items without a body (unsolicited FLAGS updates) are left
    out. The FLAGS may come before or after the literal."""
    parts, pending = [], None
    for item in data:
        if isinstance(item, tuple):
            if pending is not None:
                parts.append(pending)
            pending = [item[0], item[1]]
        elif isinstance(item, bytes) and pending is not None:
            pending[0] += b" " + item
            parts.append(pending)
            pending = None
    if pending is not None:
        parts.append(pending)
    out = []
    for meta, body in parts:
        uid, flags = _UID.search(meta), _FLAGS.search(meta)
        if uid is None or body is None:
            continue
        names = flags.group(1).decode("ascii", "replace").lower().split() if flags else []
        out.append(Message(int(uid.group(1)), set(names), body))
    return out


class _Pass:
    def __init__(self, imap, settings: Settings, report: Report, log, learn_into, model: tuple | None = None):
        self.imap, self.settings, self.report, self.log = imap, settings, report, log
        self.learn_into = learn_into
        self.read = model  # (the model as read, its file stamp): `read_model`
        self.moved_into: int | None = None  # the UIDVALIDITY of the last COPYUID
        self.dry = settings.dry_run
        self.where = settings.host

    # -- the server ------------------------------------------------------------------

    def _ok(self, answer, what: str):
        typ, data = answer
        if typ != "OK":
            text = b" ".join(d for d in data if isinstance(d, bytes)).decode("utf-8", "replace")
            raise NbcliError(f"{self.where}: {what} failed: {typ} {text}".rstrip(), hint="see the server's log")
        return data

    def select(self, folder: str, readonly: bool = False) -> int:
        typ, data = self.imap.select(folder_names.quoted(folder), readonly=readonly or self.dry)
        if typ != "OK":
            names = self._folders()
            raise NbcliError(
                f"{self.where} has no folder {folder!r}",
                hint=f"its folders: {', '.join(names)}" if names else "check the folder's name",
            )
        uidvalidity = self.imap.response("UIDVALIDITY")[1]
        if not uidvalidity or uidvalidity[-1] is None:
            raise NbcliError(f"{self.where} gave no UIDVALIDITY for {folder!r}", hint="the server is not IMAP4rev1")
        self.folder = folder
        return int(uidvalidity[-1])

    def _folders(self) -> list[str]:
        typ, data = self.imap.list()
        names = []
        for line in data if typ == "OK" else []:
            if isinstance(line, bytes):
                found = re.search(rb'\) (?:"[^"]*"|NIL) "?(.*?)"?$', line)
                if found:
                    wire = found.group(1).decode("utf-8", "replace").replace('\\"', '"').replace("\\\\", "\\")
                    names.append(folder_names.decoded(wire))
        return names

    def search(self, *criteria: str) -> list[int]:
        data = self._ok(self.imap.uid("SEARCH", *criteria), "SEARCH")
        return sorted({int(x) for line in data if line for x in line.split()})

    def above(self, last: int) -> list[int]:
        return [u for u in self.search("UID", f"{last + 1}:*") if u > last]  # n:* names the last message too

    def fetch(self, uids: list[int]):
        """The messages `uids` in batches (lists of `Message`), in UID order.

        Each message is fetched only as far as the model reads it: the mail
        analyser cuts a message at its `max_message_bytes` (and notes that
        it did), so the first max_message_bytes + 1 bytes (a partial fetch,
        BODY.PEEK[]<0.N>) give the same tokens, verdict and digest as the
        whole message, and a pass holds at most a batch times that, however
        large the mail an attacker sends. A model whose analyser is not the
        mail one reads a document whole, so it gets messages whole. The
        larger of two caps: --max-message-bytes's, for classifying, and the
        model's own, for learning (`learn`)."""
        size = max(1, self.settings.batch)
        read = (self.classifier.analyzer.options, self.read[0].analyzer.options)  # classified, learned
        most = max(options.max_message_bytes for options in read)
        item = f"BODY.PEEK[]<0.{most + 1}>" if all(options.mail for options in read) else "BODY.PEEK[]"
        for i in range(0, len(uids), size):
            chunk = uids[i : i + size]
            data = self._ok(self.imap.uid("FETCH", _uid_set(chunk), f"(UID FLAGS {item})"), "FETCH")
            wanted = set(chunk)
            yield [m for m in parse_fetch(data) if m.uid in wanted]

    def store(self, uids, change: str, flags: tuple[str, ...]) -> None:
        if uids and not self.dry:
            self._ok(self.imap.uid("STORE", _uid_set(uids), f"{change}FLAGS.SILENT", f"({' '.join(flags)})"), "STORE")

    def move(self, uids, folder: str) -> dict[int, int]:
        """Move `uids` to `folder`; returns {old UID: new UID} as far as the
        server said (COPYUID, UIDPLUS; {} where it did not)."""
        if not uids or self.dry:
            return {}
        self.imap.untagged_responses.pop("COPYUID", None)
        if "MOVE" in self.imap.capabilities:
            self._ok(self.imap.uid("MOVE", _uid_set(uids), folder_names.quoted(folder)), "MOVE")
        else:
            self._ok(self.imap.uid("COPY", _uid_set(uids), folder_names.quoted(folder)), "COPY")
            self.store(uids, "+", ("\\Deleted",))
            self._ok(self.imap.uid("EXPUNGE", _uid_set(uids)), "UID EXPUNGE")
        moved = {}
        for said in self.imap.untagged_responses.pop("COPYUID", None) or ():
            parts = said.split() if isinstance(said, bytes) else []
            if len(parts) == 3 and parts[0].isdigit():
                pairs = zip(_uid_list(parts[1]), _uid_list(parts[2]))
                moved.update({old: new for old, new in pairs if old in set(uids)})
                self.moved_into = int(parts[0])  # the target's UIDVALIDITY
        return moved

    # -- the model ---------------------------------------------------------------------

    def load_model(self) -> None:
        from nbcli.spam.filtering import Verdicts

        s = self.settings
        self.read = read_model(s, self.read)
        raw = self.read[0]
        self.classifier = raw.with_message_cap(s.max_message_bytes)
        self.verdicts = Verdicts(
            raw.classes, s.spam_class, s.spam_cutoff, s.ham_cutoff, raw.decision_rule(), s.cutoffs_given
        )
        self.class_of = {"spam": s.spam_class, "ham": self.verdicts.ham_name}

    def digests(self, messages: list[Message]) -> None:
        """Each message's content digest, the model record's (text.identity):
        as the model analyses what it learns (its own max_message_bytes, as
        `learn`), never --max-message-bytes, which is for classifying. The
        state's junk digests then stay the same whatever --max-message-bytes
        a pass is given (with a smaller one, a message nbcli filed and the
        user moved back read as another message, and was learned as spam and
        filed again). A message the analyzer cannot take keeps the digest ''."""
        from nbcli.text.identity import digests

        def one(batch):  # the analysis and the digest only: what learning adds to it is not needed here
            tokens = self.read[0].analyzer.analyze([m.data for m in batch], ["mail"] * len(batch))
            for m, d in zip(batch, digests(tokens.hashes, tokens.doc_ptr)):
                m.digest = d.tobytes().hex()

        try:
            one(messages)
        except Exception:  # an odd message: the others one at a time
            for m in messages:
                try:
                    one([m])
                except Exception as exc:
                    self.log(f"{self.folder} UID {m.uid}: cannot be read ({exc}); skipped")

    def learn(self, messages: list[Message], cls: str) -> int:
        """Learn `messages` as cls ("spam", "ham") through the locked update
        `nbcli learn` uses; the model is then read again. They are analysed
        as the model analyses what it learns (its own max_message_bytes, not
        --max-message-bytes, which is for classifying), as `nbcli learn` and
        spamd's TELL do: the same message is then the same document in the
        model's record whoever taught it, and counts once."""
        if not messages or self.dry:
            return len(messages)
        from nbcli.fit.analysed import analyse_batch

        label = self.class_of[cls]
        analysed = analyse_batch(
            self.read[0].analyzer,
            [str(m.uid) for m in messages],
            [m.data for m in messages],
            ["mail"] * len(messages),
            [label] * len(messages),
        )
        self.learn_into(self.settings.model, analysed, self.read[0].analyzer_options, self.read)
        self.load_model()
        return len(messages)

    def classify(self, messages: list[Message]) -> list[str]:
        from nbcli.spam.filtering import run

        numbered = {str(i): m for i, m in enumerate(messages, 1)}

        def warn(text: str) -> None:
            found = re.match(r"message (\d+): (.*); passed through unchanged$", text)
            m = numbered.get(found.group(1)) if found else None
            reason = found.group(2) if found else text
            self.log(f"{self.folder} UID {m.uid if m else '?'}: cannot be classified ({reason}); skipped")

        return run([m.data for m in messages], self.classifier, self.verdicts, lambda verdict, out: None, warn)

    # -- the pass ----------------------------------------------------------------------

    def run(self) -> None:
        s = self.settings
        self.load_model()
        self.state = State.load(s.state_path)
        caps = self.imap.capabilities
        if not self.dry and "MOVE" not in caps and "UIDPLUS" not in caps:
            raise NbcliError(
                f"{self.where} has neither MOVE nor UIDPLUS, so nbcli cannot move a message without "
                "expunging the user's other deleted messages",
                hint="use a server with MOVE or UIDPLUS (Dovecot, Cyrus, Gmail and Exchange have them)",
            )
        self.refile: set[str] = set()
        self.another_mailbox()
        self.report.stage = "completing the last pass's filing"
        self.recover()
        self.report.stage = f"reading the junk folder {s.junk}"
        self.junk_folder()
        self.report.stage = f"classifying the inbox {s.inbox}"
        self.inbox()
        for folder, cls in s.learn_folders:
            self.report.stage = f"learning the folder {folder}"
            self.learn_folder(folder, cls)

    def save(self) -> None:
        if not self.dry:
            self.state.save()

    def another_mailbox(self) -> None:
        """A state whose inbox and junk folder both have another UIDVALIDITY
        than the server's is another mailbox's (a --state shared by mistake,
        a server rebuilt or moved): its UIDs and junk digests say nothing of
        this one, where the pass would take every message in the junk folder
        for the user's correction and learn it as spam (and a message in the
        inbox it had filed elsewhere as moved back, and learn it as ham).
        Such a state is dropped, with a line saying so, and the pass is a
        first contact (nothing in the junk folder learned). One folder's new
        UIDVALIDITY (a folder recreated) keeps the rest: that folder alone
        is new again."""
        s = self.settings
        known = {name: self.state.folders.get(name) for name in (s.inbox, s.junk)}
        if not all(isinstance(entry, dict) for entry in known.values()):
            return
        if any(self.select(name, readonly=True) == entry.get("uidvalidity") for name, entry in known.items()):
            return
        self.log(
            f"{s.state_path} is another mailbox's (its folders' UIDVALIDITY differ from {self.where}'s): "
            "starting afresh, as a first contact"
        )
        self.state = State(self.state.path)

    def recover(self) -> None:
        intent = self.state.intent
        if not intent:
            return
        uidvalidity = self.select(self.settings.inbox)
        digests = set(intent.get("digests") or ())
        if intent.get("uidvalidity") == uidvalidity:
            still = [u for u in self.search("UID", _uid_set(intent["uids"])) if u in set(intent["uids"])]
            if still:
                self.log(f"{self.settings.inbox}: completing the filing of {len(still)} message(s) a pass left undone")
                self.mark_and_move(still)
        else:  # the UIDs name other messages now: the re-scan files them by digest
            self.refile = digests
        if not self.dry:
            self.state.junk |= digests
            self.state.intent = None
            self.save()

    def file(self, messages: list[Message], uidvalidity: int) -> None:
        """Move `messages` (in the selected inbox) to the junk folder, with
        the write-ahead intent saved first."""
        if not messages:
            return
        uids = [m.uid for m in messages]
        digests = sorted({m.digest for m in messages if m.digest})
        if not self.dry:
            self.state.intent = {"uidvalidity": uidvalidity, "uids": uids, "digests": digests}
            self.save()
        moved = self.mark_and_move(uids)
        self.report.filed += len(uids)
        if not self.dry:
            self.state.junk |= set(digests)
            junk = self.state.folders.get(self.settings.junk)
            if moved and junk is not None and junk.get("uidvalidity") == self.moved_into:
                # the next pass need not fetch these to know them for nbcli's own
                junk["own"] = sorted(set(junk.get("own", ())) | set(moved.values()))
            self.state.intent = None  # saved with the folder's progress, by the caller

    def mark_and_move(self, uids: list[int]) -> dict[int, int]:
        """Filing's changes, the same when a pass completes one cut short:
        nbcli's $NotJunk and $NbcliUnsure off (in the junk folder a
        $NotJunk is the user's), $Junk on, moved."""
        self.store(uids, "-", (NOT_JUNK, UNSURE))
        self.store(uids, "+", (JUNK,))
        return self.move(uids, self.settings.junk)

    def junk_folder(self) -> None:
        s = self.settings
        known = s.junk in self.state.folders
        uidvalidity = self.select(s.junk)
        place = self.state.folder(s.junk, uidvalidity)
        last = place["last_uid"]
        new = self.above(last)
        if not known and not self.state.junk and last == 0:  # first contact: take the folder as it is
            place["last_uid"] = max(new, default=0)
            self.save()
            return
        own = set(place.get("own", ()))  # what nbcli moved here (COPYUID): not fetched again
        arrivals = [u for u in new if u not in own]
        done = set(place.get("not_junk", ()))
        marked = [u for u in self.search("KEYWORD", NOT_JUNK) if (u <= last or u in own) and u not in done]
        for batch in self.fetch(marked):
            self.digests(batch)
            done = self.not_junk(batch, place, done)
        for batch in self._progress(self.fetch(arrivals), len(arrivals), s.junk):
            self.digests(batch)
            top = max((m.uid for m in batch), default=0)
            # learned as ham already (a pass cut short), or deleted by the user: left alone
            batch = [m for m in batch if m.uid not in done and DELETED not in m.flags]
            theirs = [m for m in batch if m.digest and m.digest not in self.state.junk]
            mine = [m for m in batch if m.digest in self.state.junk and NOT_JUNK.lower() in m.flags]
            done = self.not_junk(mine, place, done)  # nbcli's filing takes $NotJunk away: this one is the user's
            self.store([m.uid for m in theirs], "-", (NOT_JUNK, UNSURE))
            self.store([m.uid for m in theirs], "+", (JUNK,))
            self.report.learned["spam"] += self.learn(theirs, "spam")
            self.state.junk |= {m.digest for m in theirs}
            self.advance(place, top)
        place["own"] = sorted(u for u in own if u > max(new, default=last))
        self.advance(place, max(new, default=0))

    def not_junk(self, messages: list[Message], place: dict, done: set) -> set:
        """The user's $NotJunk on messages in the junk folder: learned as ham,
        $Junk taken away, their UIDs kept so they are learned once."""
        if not messages:
            return done
        self.store([m.uid for m in messages], "-", (JUNK,))
        self.report.learned["ham"] += self.learn(messages, "ham")
        if not self.dry:
            self.state.junk -= {m.digest for m in messages}
        done = done | {m.uid for m in messages}
        place["not_junk"] = sorted(done)
        self.save()
        return done

    def inbox(self) -> None:
        s = self.settings
        uidvalidity = self.select(s.inbox)
        place = self.state.folder(s.inbox, uidvalidity)
        last = place["last_uid"]
        flagged = [u for u in self.search("KEYWORD", JUNK) if u <= last]
        for batch in self.fetch(flagged):  # the user's $Junk on a message classified before
            self.digests(batch)
            self.report.learned["spam"] += self.learn(batch, "spam")
            self.file(batch, uidvalidity)
            self.save()
        settled = [u for u in self.search("KEYWORD", UNSURE, "KEYWORD", NOT_JUNK) if u <= last]
        for batch in self.fetch(settled):  # the user's $NotJunk on an unsure message: ham
            self.digests(batch)
            self.report.learned["ham"] += self.learn(batch, "ham")
            self.store([m.uid for m in batch], "-", (UNSURE,))  # after learning: a crash before it learns again
        new = self.above(last)
        for batch in self._progress(self.fetch(new), len(new), s.inbox):
            self.digests(batch)
            to_file, moved_back, marked, fresh = [], [], [], []
            for m in batch:
                if DELETED in m.flags:  # the user deleted it (not expunged yet): left alone
                    continue
                if m.digest and m.digest in self.refile:
                    to_file.append(m)
                elif m.digest in self.state.junk and m.flags & {JUNK.lower(), NOT_JUNK.lower()}:
                    moved_back.append(m)  # a fresh copy of the same mail carries no keyword: classified
                elif JUNK.lower() in m.flags:
                    marked.append(m)
                elif not m.flags & {NOT_JUNK.lower(), UNSURE.lower()}:
                    fresh.append(m)
            if moved_back:
                # $NotJunk first: cut short between the two, the message still counts as moved back
                self.store([m.uid for m in moved_back], "+", (NOT_JUNK,))
                self.store([m.uid for m in moved_back], "-", (JUNK, UNSURE))
                self.report.learned["ham"] += self.learn(moved_back, "ham")
                if not self.dry:
                    self.state.junk -= {m.digest for m in moved_back}
            self.report.learned["spam"] += self.learn(marked, "spam")
            verdicts = self.classify(fresh) if fresh else []
            by_verdict: dict[str, list[Message]] = {}
            for m, verdict in zip(fresh, verdicts):
                by_verdict.setdefault(verdict, []).append(m)
                if verdict in self.report.verdicts:
                    self.report.verdicts[verdict] += 1
            self.report.skipped += len(by_verdict.get("error", []))
            self.store([m.uid for m in by_verdict.get("ham", [])], "+", (NOT_JUNK,))
            self.store([m.uid for m in by_verdict.get("unsure", [])], "+", (UNSURE,))
            self.file(to_file + marked + by_verdict.get("spam", []), uidvalidity)
            self.advance(place, max((m.uid for m in batch), default=0))
        self.advance(place, max(new, default=0))

    def learn_folder(self, folder: str, cls: str) -> None:
        uidvalidity = self.select(folder, readonly=True)
        place = self.state.folder(folder, uidvalidity)
        new = self.above(place["last_uid"])
        self.report.folders.setdefault(folder, 0)
        for batch in self._progress(self.fetch(new), len(new), folder):
            self.digests(batch)
            readable = [m for m in batch if m.digest]
            self.report.folders[folder] += self.learn(readable, cls)
            if cls == "spam" and not self.dry:
                self.state.junk |= {m.digest for m in readable}
            self.advance(place, max((m.uid for m in batch), default=0))

    def advance(self, place: dict, uid: int) -> None:
        """The folder is dealt with up to `uid`: saved (never moves back)."""
        place["last_uid"] = max(place["last_uid"], uid)
        self.save()

    def _progress(self, batches, total: int, folder: str):
        done = 0
        for batch in batches:
            yield batch
            done += len(batch)
            if total > self.settings.batch:
                self.log(f"{folder}: {done}/{total} messages")
