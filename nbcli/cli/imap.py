"""`nbcli imap`: filter and learn a mailbox on an IMAP server (issue 29);
the work is nbcli.imap's (settings, connection, passes, state).

Decisions: without --idle a run is one pass (--once, the default: for
cron). The transport is --tls unless --starttls or --no-tls is given, or
--port is 143 (then STARTTLS). The password comes from --password-file (a
file its group or others may read is refused) or NBCLI_IMAP_PASSWORD,
never from the command line. A pass that loses its connection exits 1 with
one line saying how far it got; the next pass goes on from there (the
state file is saved as the pass goes). --idle is nbcli.imap.watch's loop
(what wakes a pass, reconnecting, stopping: its docstring), with each
pass's summary line printed as the pass ends; --poll-seconds is both its
Junk check and its polling interval, one knob, since both are "how stale
may a change be"; it is a float from 1 to 3600. A message that cannot be classified
is a warning (the pass goes on, exit 0): the summary line counts it.
"""

from __future__ import annotations

import click

from nbcli.cli.option_bundles import cutoff_options, json_option, message_cap_option, quiet_option
from nbcli.cli.options import check_cutoffs, cutoffs_given, is_given, make_diagnostics
from nbcli.cli.param_types import FloatRange
from nbcli.errors import NbcliError


@click.command("imap")
@click.argument("model")
@click.option("--host", required=True, help="The IMAP server.")
@click.option("--port", type=click.IntRange(1, 65535), help="Its port (default 993 with TLS, else 143).")
@click.option("--tls", "security", flag_value="tls", help="Implicit TLS (the default, but with --port 143; port 993).")
@click.option(
    "--starttls",
    "security",
    flag_value="starttls",
    help="A plain connection upgraded to TLS (port 143; the default with --port 143).",
)
@click.option(
    "--no-tls",
    "security",
    flag_value="none",
    help="Plain text: refused for a host that is not loopback, unless --allow-plaintext.",
)
@click.option("--allow-plaintext", is_flag=True, help="Let --no-tls send the password to a host that is not loopback.")
@click.option("--cafile", metavar="PEM", help="Verify the server's certificate with this CA (a private CA).")
@click.option("--user", required=True, help="The account to log in as.")
@click.option(
    "--password-file",
    metavar="FILE",
    help="The password, on the first line of a file only you may read (else $NBCLI_IMAP_PASSWORD).",
)
@click.option("--inbox", default="INBOX", show_default=True, help="The folder whose new messages are classified.")
@click.option("--junk", default="Junk", show_default=True, help="The folder spam is moved to.")
@click.option(
    "--state",
    metavar="FILE",
    help="The state file (default: $XDG_STATE_HOME/nbcli/imap/USER@HOST.json).",
)
@click.option("--once", is_flag=True, help="One pass, then exit (the default).")
@click.option(
    "--idle",
    is_flag=True,
    help="Stay connected: a pass at start and whenever the inbox or the junk folder changes, until SIGTERM.",
)
@click.option(
    "--poll-seconds",
    type=FloatRange(1, 3600),
    default=60,
    show_default=True,
    help="With --idle: seconds between checks of the junk folder, and of the inbox where the server has no IDLE.",
)
@click.option(
    "--learn-folder",
    "learn_folders",
    multiple=True,
    metavar="FOLDER=CLASS",
    help="Also learn FOLDER's new messages as CLASS (spam or ham); repeatable.",
)
@click.option("--dry-run", is_flag=True, help="Say what a pass would do; change nothing (server, model, state).")
@click.option("--batch", type=click.IntRange(1, 1000), default=50, show_default=True, help="Messages per FETCH.")
@cutoff_options
@message_cap_option
@json_option
@quiet_option
def imap(
    model,
    host,
    port,
    security,
    allow_plaintext,
    cafile,
    user,
    password_file,
    inbox,
    junk,
    state,
    once,
    idle,
    poll_seconds,
    learn_folders,
    dry_run,
    batch,
    spam_cutoff,
    ham_cutoff,
    spam_class,
    max_message_bytes,
    as_json,
    quiet,
):
    """Filter and learn a mailbox on an IMAP server: for cron.

    One pass: first the user's corrections since the last pass are learned
    (a message that appeared in the junk folder that nbcli did not put
    there: spam; a message nbcli filed that is back in the inbox: ham, a
    move in the model's record; $Junk set on an inbox message: spam, and it
    is filed; $NotJunk set on a message in the junk folder, or on an unsure
    one: ham). Then the inbox's new messages (UIDs above the last seen) are
    classified as 'nbcli filter' classifies them: spam gets the keyword
    $Junk and is moved to the junk folder, ham gets $NotJunk, unsure stays
    with $NbcliUnsure. Messages are read with BODY.PEEK[] (never marked
    read) and never changed. Then each --learn-folder is learned.

    Learning takes the model's lock as 'nbcli learn' does; the state file
    (what was seen and filed) is written atomically, with the intent to
    file saved before messages move, so a pass killed at any point is
    finished by the next without learning or filing anything twice.

    With --idle it stays connected: a pass at start, then one whenever the
    server says the inbox changed (IDLE; a server without IDLE is asked
    every --poll-seconds) or the junk folder changed (looked at every
    --poll-seconds). A lost connection is tried again after a growing
    delay, one line on stderr each time; a refused login ends it. SIGTERM
    or Ctrl-C lets the pass in progress finish, logs out and exits 0.

    The summary goes to stdout as one line of key=value pairs (--json: a
    JSON object), one per pass; progress and skipped messages to stderr.
    Exit status: 0 after a pass (--idle: when stopped), 1 on an error (a
    refused login, a missing folder, a lost connection without --idle: one
    line, saying how far the pass got). Keywords, the state file and
    crashes: docs/guide/imap.md.

    \b
    Example:
      # crontab: every 5 minutes
      */5 * * * * nbcli imap -q ~/.nbcli/mail.nb --host imap.example.org \\
          --user me@example.org --password-file ~/.nbcli/imap-password
      # or as a service: new mail filed as it comes
      nbcli imap -q ~/.nbcli/mail.nb --host imap.example.org --user me@example.org \\
          --password-file ~/.nbcli/imap-password --idle
    """
    import imaplib
    import sys

    from nbcli.cli.stdio import write, write_json
    from nbcli.imap.connection import connect, logout
    from nbcli.imap.passes import Report, read_model, run_pass
    from nbcli.imap.settings import Settings, parse_learn_folder, read_password
    from nbcli.run.updating import learn_into

    if once and idle:
        raise click.UsageError("--once and --idle contradict each other: give one")
    if not idle and is_given(click.get_current_context(), "poll_seconds"):
        raise click.UsageError("--poll-seconds is for --idle: a single pass does not wait")
    check_cutoffs(spam_cutoff, ham_cutoff)
    diagnostics = make_diagnostics(quiet)
    if security is None:
        security = "starttls" if port == 143 else "tls"
    settings = Settings(
        host=host,
        user=user,
        password="",
        model=model,
        port=port,
        security=security,
        cafile=cafile,
        inbox=inbox,
        junk=junk,
        state=state,
        learn_folders=tuple(parse_learn_folder(text, spam_class) for text in learn_folders),
        dry_run=dry_run,
        batch=batch,
        spam_class=spam_class,
        spam_cutoff=spam_cutoff,
        ham_cutoff=ham_cutoff,
        cutoffs_given=cutoffs_given(),
        max_message_bytes=max_message_bytes,
        allow_plaintext=allow_plaintext,
        wait_for_state=idle,
    ).checked()
    settings.password = read_password(password_file)
    first = [read_model(settings)]  # a model no pass can use is refused before connecting; the first pass uses it

    def say(report: Report) -> None:
        if as_json:
            write_json({"host": host, "user": user, **report.as_dict()})
        else:
            write(report.line())

    if idle:
        from nbcli.imap.watch import watch

        def one_pass(connection):
            model = first.pop() if first else None  # (later passes read it as they find it)
            say(run_pass(connection, settings, learn_into, Report(dry_run=dry_run), diagnostics.info, model))
            sys.stdout.flush()

        try:
            watch(
                lambda: connect(settings), one_pass, inbox, junk, junk_seconds=poll_seconds, poll_seconds=poll_seconds
            )
        except imaplib.IMAP4.error as exc:
            raise NbcliError(f"{host}: {exc}", hint="see the server's log") from None
        diagnostics.finish()
        return
    report = Report(dry_run=dry_run, stage="connecting")
    try:
        connection = connect(settings)
        try:
            run_pass(connection, settings, learn_into, report, diagnostics.info, first.pop())
        finally:
            logout(connection)
    except (OSError, imaplib.IMAP4.abort) as exc:
        reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise NbcliError(
            f"the connection to {host} was lost ({reason}) while {report.stage}; so far: "
            + report.line().split(": ", 1)[1],
            hint="run it again: the next pass goes on from where this one stopped",
        ) from None
    except imaplib.IMAP4.error as exc:
        raise NbcliError(f"{host}: {exc}", hint="see the server's log") from None
    say(report)
    diagnostics.finish()
