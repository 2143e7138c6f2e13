"""`nbcli filter`: pass mail through with a verdict header (for cron and
procmail); the work is spam.filtering's. It fails open: a model that cannot
be read passes every message through unchanged.
"""

from __future__ import annotations

import os
import sys

import click

from nbcli.cli.option_bundles import cutoff_options, explain_option, jobs_option, message_cap_option, quiet_option
from nbcli.cli.options import check_cutoffs, cutoffs_given, in_flag_terms, load_model, make_diagnostics
from nbcli.cli.stdio import err
from nbcli.errors import NbcliError


@click.command("filter")
@click.argument("model")
@click.argument("input", required=False, metavar="[INPUT]")
@cutoff_options
@click.option(
    "--split",
    "split_dir",
    metavar="DIR",
    help="Append each message to DIR/<verdict>.mbox instead of writing to stdout.",
)
@click.option(
    "--exit-codes", is_flag=True, help="Exit 0 spam, 1 ham, 2 unsure, 3 error (bogofilter's codes; for one message)."
)
@explain_option
@message_cap_option
@jobs_option
@quiet_option
def filter_(
    model, input, spam_cutoff, ham_cutoff, spam_class, split_dir, exit_codes, explain, max_message_bytes, jobs, quiet
):
    """Pass mail through, adding a verdict header: for cron and procmail.

    Reads INPUT (a message file, an mbox, a pipe or FIFO, a folder or a
    Maildir) or stdin and writes every message to stdout unchanged except
    for one added header line, 'X-NB-Class: spam; p=0.9993' (p is P(spam)
    for a spam model, else the probability of the class named). An earlier
    X-NB-Class header is replaced. A message that cannot be classified
    passes through unchanged with the verdict 'error', and the run goes on:
    nothing is dropped. Each message is written as soon as it is complete
    (on a pipe: when the next From_ line or the end comes). --explain N
    adds a second header, X-NB-Evidence, with the class compared against,
    the log-odds, the prior's part and the N terms that pushed the verdict
    most ('term' count contribution).

    A folder or Maildir gives an mbox on stdout: messages from its mbox
    files keep their From_ lines, the others get one (and >From quoting),
    as with --split. An empty INPUT (/dev/null) has no messages: nothing
    is written, with a warning. --split prints on stderr how many messages
    went where (not with -q).

    Exit status: 0 if every message was classified, 1 otherwise; with
    --exit-codes and one message, 0 spam, 1 ham, 2 unsure, 3 error (with
    several messages: 3 if any failed, else 0; no message or an input or
    --split error: 3). With procmail, --exit-codes belongs in a condition
    ('* ? nbcli filter --exit-codes ...' with ':0 HB:'): behind a '|'
    action procmail takes exit 0 as delivered, and the spam is gone.

    \b
    Example:
      nbcli filter mail.nb < message.eml > tagged.eml
      nbcli filter mail.nb ~/mail/inbox.mbox --split sorted/
      # procmail (~/.procmailrc): add the header, then file on it
      #   :0 fw
      #   | nbcli filter $HOME/.nbcli/mail.nb
      #
      #   :0:
      #   * ^X-NB-Class: spam
      #   spam.mbox
    """
    from nbcli.spam import filtering
    from nbcli.store import modelfile

    diagnostics = make_diagnostics(quiet)
    check_cutoffs(spam_cutoff, ham_cutoff)
    path = input or "-"
    if path == "-" and sys.stdin.isatty():
        raise click.UsageError("no INPUT given and stdin is a terminal; give a message or mbox file, or - for stdin")
    from functools import partial

    from nbcli.cli.paths import check_split_folder
    from nbcli.run.parallel import classify
    from nbcli.text.raw_messages import read_messages
    from nbcli.text.walk import InputReport

    skipped = InputReport(diagnostics.warn)  # a file in a folder that could not be read fails the run

    try:  # INPUT is checked (and opened) before the model is read
        if split_dir:
            check_split_folder(split_dir, [path])
        messages = read_messages(path, skipped, flush=not split_dir)
        splitter = filtering.SplitWriter(split_dir) if split_dir else None
    except NbcliError as exc:
        exc.exit_code = 3 if exit_codes else 1  # never 1 (ham) under --exit-codes
        raise
    classifier = verdicts = model_error = None
    try:
        classifier = load_model(model, max_message_bytes)
        filtering.check_mail_model(classifier, model, "nbcli filter")
        verdicts = filtering.Verdicts(
            classifier.classes, spam_class, spam_cutoff, ham_cutoff, classifier.decision_rule(), cutoffs_given()
        )
        if exit_codes and not verdicts.binary:
            raise NbcliError(
                (
                    f"--exit-codes needs a two-class model with a {spam_class!r} class; {model} has classes "
                    f"{', '.join(classifier.classes)}"
                ),
                hint="name the spam class with --spam-class",
            )
    except NbcliError as exc:  # fail open: pass every message through unchanged
        classifier, model_error = None, str(in_flag_terms(exc))
        err(f"nbcli: error: {model_error}; passing messages through unchanged")
    if splitter is not None:
        put = splitter.write
    else:
        out = sys.stdout.buffer
        as_mbox = path != "-" and os.path.isdir(path)  # many files: one mbox out

        def put(verdict, data):
            out.write(filtering.as_mbox_entry(data) if as_mbox else data)
            out.flush()

    try:
        identity = modelfile.model_id(classifier) if classifier is not None else None
        seen = filtering.run(
            messages,
            classifier,
            verdicts,
            put,
            diagnostics.warn,
            model_error,
            partial(classify, jobs=jobs),
            explain or 0,
            identity,
        )
    except NbcliError as exc:  # INPUT unreadable part-way, or a --split append failed
        exc.exit_code = 3 if exit_codes else 1
        raise
    except OSError as exc:  # stdout cannot take the message (a full disk): an error, never 1 (ham) under --exit-codes
        if isinstance(exc, BrokenPipeError):
            raise  # (the reader went away: 141, as any Unix tool)
        failed = NbcliError(
            f"cannot write the output: {exc.strerror or exc}",
            hint="make room (or fix where stdout goes) and filter again",
        )
        failed.exit_code = 3 if exit_codes else 1
        raise failed from None
    if not seen:
        diagnostics.warn(f"{'standard input' if path == '-' else path}: no messages")
    if splitter is not None and not quiet:
        err(f"nbcli: {splitter.summary()}")
    diagnostics.finish()
    failed = "error" in seen or classifier is None or skipped.unreadable > 0
    if exit_codes:
        if len(seen) == 1 and not skipped.unreadable:
            return filtering.EXIT_CODES.get(seen[0], 0)
        return 3 if failed or not seen else 0
    return 1 if failed else 0
