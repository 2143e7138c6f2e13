"""`nbcli imap` (issue 29): filter and learn a mailbox on an IMAP server.

It sits beside `spam` (whose classification it shares with `filter`, so a
message gets the same verdict in both) and imports only `spam` and what is
below it; the command itself is cli/imap.py.

The library, for the command's --once and for a loop that runs passes
(--idle):

    from nbcli.imap.settings import Settings
    from nbcli.imap.connection import connect, logout
    from nbcli.imap.passes import Report, run_pass
    from nbcli.run.updating import learn_into

    Settings(host, user, password, model, port=None, security="tls",
             cafile=None, inbox="INBOX", junk="Junk", state=None,
             learn_folders=(), dry_run=False, batch=50, timeout=60.0,
             spam_class="spam", spam_cutoff=..., ham_cutoff=...,
             cutoffs_given=False, max_message_bytes=None, allow_plaintext=False)
        security: "tls" | "starttls" | "none"; learn_folders: ((folder,
        "spam" | "ham"), ...); state None: `settings.state_path` is the
        default. `Settings.checked()` refuses what cannot work (plain text
        to a host that is not loopback without allow_plaintext, ...).

    connect(settings: Settings) -> imaplib.IMAP4
        Connected (TLS verified against settings.cafile or the system's
        CAs), logged in, `capabilities` read again after login. Failures
        are NbcliError (one line with a hint; the password never in it).
    logout(imap) -> None
        Log out, ignoring a connection that is gone.

    run_pass(imap: imaplib.IMAP4, settings: Settings, learn,
             report: Report | None = None,
             log: Callable[[str], None] | None = None) -> Report
        One pass over the logged-in `imap` (imap/passes.py says what, in
        which order): corrections learned, new inbox messages classified
        and filed, --learn-folder folders learned; the state file saved
        after each batch and locked for the pass (a second pass on it at
        once is an NbcliError). learn: `learn_into`, the locked update
        `nbcli learn` uses, passed in by the caller (see "Import depth").
        `report` (made here if None) is filled in as the pass goes, so a
        caller that catches an exception can say how far it got
        (`report.stage`, `report.line()`); `log` takes progress and
        skipped messages (stderr). A dropped connection propagates as
        OSError or imaplib.IMAP4.abort (never swallowed here); other
        failures are NbcliError. Returns the report; `report.line()` is
        the summary line, `report.as_dict()` the --json object.

Import depth: tests/test_imports.py allows chains of at most 9 modules
from `nbcli.__main__`; `imap.passes` is 6 deep (it loads models through
`store.modelfile`) and cli/imap.py imports it, so no module between them
may import it or `run.updating`: a loop module (imap/watch.py) takes
`run_pass` and `learn_into` as arguments from cli/imap.py. `connect`,
`logout` and `Settings` (imap.connection, imap.settings) are shallow and
may be imported anywhere in the package.
"""
