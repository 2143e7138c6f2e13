"""`nbcli serve`: the command (the daemon is `serve`, the protocol `spamd`)."""

from __future__ import annotations

import click

from nbcli.cli.option_bundles import cutoff_options, quiet_option
from nbcli.cli.param_types import ByteSize, FloatRange
from nbcli.cli.stdio import err


@click.command()
@click.argument("model")
@click.option(
    "--socket",
    "socket_path",
    metavar="PATH",
    help="Listen on this Unix socket [default, when no --port or --tcp is given: $XDG_RUNTIME_DIR/nbcli/spamd.sock, "
    "else /tmp/nbcli-UID/spamd.sock].",
)
@click.option("--port", type=click.IntRange(0, 65535), metavar="N", help="Listen on TCP port N (0: any free port).")
@click.option("--tcp", is_flag=True, help="Listen on TCP port 783, spamd's.")
@click.option(
    "--listen",
    multiple=True,
    metavar="ADDR",
    help="With --port/--tcp: the address to listen on [default: 127.0.0.1 and ::1]. Repeatable.",
)
@click.option("--workers", type=click.IntRange(1, 256), metavar="N", help="Worker processes [default: cores].")
@click.option(
    "--max-size",
    type=ByteSize(),
    default="500K",
    show_default=True,
    help="Messages larger than this are answered without scoring (spamc's default limit); at most this plus 64 KB "
    "of a message is held in memory.",
)
@click.option(
    "--timeout",
    type=FloatRange(0.1, 3600),
    default=30.0,
    show_default=True,
    help="Seconds a connection has in all to send its request and take the reply.",
)
@click.option(
    "--max-connections",
    type=click.IntRange(1, 100000),
    default=256,
    show_default=True,
    metavar="N",
    help="Connections each worker holds at once; when full, a new one replaces the one idle longest (1 s or more).",
)
@click.option(
    "--max-per-client",
    type=click.IntRange(1, 100000),
    default=32,
    show_default=True,
    metavar="N",
    help="How many of those may come from one TCP client address; past it, that address's connection idle longest "
    "is dropped.",
)
@click.option("--allow-tell", is_flag=True, help="Let clients teach the model (spamc -L spam|ham|forget).")
@click.option(
    "--models-dir",
    type=click.Path(exists=True, file_okay=False),
    metavar="DIR",
    help="Per-user models: a request's User header picks DIR/USER.nb when it exists, else MODEL.",
)
@click.option(
    "--user-tell",
    type=click.Choice(["own", "shared", "refuse"]),
    default="own",
    show_default=True,
    help="With --models-dir and --allow-tell, a TELL from a user without DIR/USER.nb: own gives them one (a copy "
    "of MODEL) and teaches it, so their corrections change only their filter; shared teaches MODEL, which every "
    "user without a model of their own is scored with; refuse answers EX_NOPERM. A TELL naming no user teaches "
    "MODEL only under shared.",
)
@click.option(
    "--model-cache",
    type=click.IntRange(1, 100000),
    default=16,
    show_default=True,
    metavar="N",
    help="With --models-dir: per-user models each worker keeps loaded (the least recently used are released).",
)
@click.option(
    "--max-model-size",
    type=ByteSize(),
    default="128M",
    show_default=True,
    help="With --allow-tell: refuse a TELL that would grow a model file past this (prune the model to make room).",
)
@click.option(
    "--metrics",
    metavar="ADDR:PORT",
    help="Serve Prometheus metrics at http://ADDR:PORT/metrics, summed over the workers: requests by verb and "
    "verdict, errors by kind, latency and message-size histograms, TELLs by class, reloads, worker restarts, open "
    "connections, the served model's id and documents (port 0: any free port, said on standard error).",
)
@click.option(
    "--log-format",
    type=click.Choice(["text", "json"]),
    default="text",
    show_default=True,
    help="The lines logged per request (verb, verdict, score, required, user, size, seconds, Message-ID, worker; "
    "nothing else of the message) and for the daemon's start, reload, worker restarts and stop: text, or one JSON "
    "object per line for log shippers.",
)
@click.option(
    "--syslog",
    type=click.Choice(["mail", "daemon", "user", *[f"local{i}" for i in range(8)]]),
    metavar="FACILITY",
    help="Log to syslog with this facility (mail, daemon, user, local0..local7) instead of standard error.",
)
@click.option(
    "--syslog-socket",
    default="/dev/log",
    show_default=True,
    metavar="PATH",
    help="With --syslog: the local syslog daemon's datagram socket. A line it cannot take at once is dropped, "
    "never waited for.",
)
@click.option("--explain", type=click.IntRange(0, 100), default=5, show_default=True, help="Evidence terms in REPORT.")
@cutoff_options
@quiet_option
def serve(
    model,
    socket_path,
    port,
    tcp,
    listen,
    workers,
    max_size,
    timeout,
    allow_tell,
    models_dir,
    user_tell,
    model_cache,
    max_model_size,
    metrics,
    log_format,
    syslog,
    syslog_socket,
    explain,
    **kw,
):
    """Answer SpamAssassin's spamd protocol with MODEL, for spamc, spamass-milter and Exim.

    Messages are classified at a few milliseconds each by worker processes
    that keep the model loaded and pick up a replaced model file by
    themselves (SIGHUP reloads; SIGTERM finishes the requests in flight and
    stops). The score is the log-odds of spam, the threshold the spam
    cut-off's log-odds (3.9 for 0.98); see docs/guide/daemon.md.
    With --models-dir each worker keeps the --model-cache most recently
    used user models; with --allow-tell a TELL learns a message of at most
    --max-size into a model of at most --max-model-size, and with
    --models-dir a user's own model (--user-tell: a user without one gets a
    copy of MODEL to teach, by default).

    Each request is logged in one line (its verdict, score, user, size,
    time and Message-ID; never the message), as are start, reload, worker
    restarts and stop: to standard error (-q: only the start and errors),
    or to syslog with --syslog; --log-format json for log shippers.
    --metrics serves Prometheus figures summed over the workers.

    Limits against slow or greedy clients: each connection has --timeout
    seconds in all; each worker holds --max-connections connections,
    --max-per-client from one TCP address, dropping the idlest for a new
    one; a message over --max-size is answered unscored, and what is past
    --max-size + 64 KB is read and dropped (PROCESS then answers with an
    error, on which spamc passes the message through).

    \b
    Example:
      nbcli serve mail.nb --socket /run/nbcli/spamd.sock
      spamc -U /run/nbcli/spamd.sock < message.eml
      nbcli serve mail.nb --tcp --allow-tell
    """
    from nbcli.cli.options import check_cutoffs, cutoffs_given, in_flag_terms
    from nbcli.run.executor import cpu_count
    from nbcli.spam.daemon import run
    from nbcli.spam.listening import default_socket
    from nbcli.spam.settings import SPAMD_PORT, Settings

    check_cutoffs(kw["spam_cutoff"], kw["ham_cutoff"])
    if listen and port is None and not tcp:
        raise click.UsageError("--listen goes with --port or --tcp")
    if any(not address.strip() for address in listen):
        raise click.BadParameter(
            "an empty address would mean every interface; give one, e.g. 0.0.0.0", param_hint="--listen"
        )
    if tcp and port is not None:
        raise click.UsageError("give --tcp (port 783) or --port N, not both")
    if tcp:
        port = SPAMD_PORT
    private = socket_path is None and port is None
    if private:
        socket_path = default_socket()
    settings = Settings(
        model=model,
        socket_path=socket_path,
        port=port,
        # --port 0 asks for any free port: one address, so there is one port to report
        listen=list(listen) or (["127.0.0.1"] if port == 0 else ["127.0.0.1", "::1"]),
        workers=workers or cpu_count(),
        max_size=max_size,
        timeout=timeout,
        max_connections=kw["max_connections"],
        max_per_client=kw["max_per_client"],
        private_socket_folder=private,
        allow_tell=allow_tell,
        models_dir=models_dir,
        user_tell=user_tell,
        metrics=metrics,
        log_format=log_format,
        syslog=syslog,
        syslog_socket=syslog_socket,
        log_requests=not kw["quiet"],
        spam_class=kw["spam_class"],
        spam_cutoff=kw["spam_cutoff"],
        ham_cutoff=kw["ham_cutoff"],
        cutoffs_given=cutoffs_given(),
        explain=explain,
        model_cache=model_cache,
        max_model_size=max_model_size,
        in_terms=in_flag_terms,
    )
    quiet = kw["quiet"]
    return run(settings, lambda line: None if quiet and not line.startswith("serving") else err(f"nbcli: {line}"))
