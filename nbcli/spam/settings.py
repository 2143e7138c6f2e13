"""`nbcli serve`'s settings: what the command line gives the daemon (the
model, where to listen, the workers) and the limits that keep slow or
greedy clients from taking it down (see `daemon` and `connections` for
what each limit does). Low in the spam package (issue 26): the listening
sockets, the connections and the daemon all read them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from nbcli.defaults import DEFAULT_HAM_CUTOFF, DEFAULT_SPAM_CUTOFF
from nbcli.errors import NbcliError

HARD_LIMIT = 64 << 20
DEFAULT_MAX_SIZE = 500 * 1024  # spamc's default
BODY_MARGIN = 64 << 10  # message bytes held past --max-size (PROCESS gives such a message back unchanged)
SPAMD_PORT = 783
DEFAULT_MODEL_CACHE = 16  # per-user models a worker keeps loaded (--model-cache)
DEFAULT_MAX_MODEL_SIZE = 128 << 20  # a TELL may not grow a model past this (--max-model-size)
USER_TELLS = ("own", "shared", "refuse")  # what a TELL of a user without a model of their own does (--user-tell)


@dataclass
class Settings:
    model: str
    socket_path: str | None
    port: int | None
    listen: list
    workers: int
    max_size: int = DEFAULT_MAX_SIZE
    timeout: float = 30.0  # seconds a connection has for its whole request and reply
    max_connections: int = 256  # connections a worker holds at once
    max_per_client: int = 32  # of them from one TCP client address
    idle_evict: float = 1.0  # a full worker drops a connection idle this long for a new one
    private_socket_folder: bool = False  # the socket's folder is checked by `private_folder`
    allow_tell: bool = False
    models_dir: str | None = None
    user_tell: str = "own"  # with models_dir: see `daemon.Worker.tell_path`
    log_format: str = "text"  # the request and event lines (`requestlog`): text or json
    syslog: str | None = None  # a syslog facility: lines go to syslog_socket instead of standard error
    syslog_socket: str = "/dev/log"
    metrics: str | None = None  # ADDR:PORT of the Prometheus endpoint (`metrics`)
    log_requests: bool = True  # a line per request (`nbcli serve -q` without --syslog: none)
    spam_class: str = "spam"
    spam_cutoff: float = DEFAULT_SPAM_CUTOFF
    ham_cutoff: float = DEFAULT_HAM_CUTOFF
    cutoffs_given: bool = False  # a model's decision threshold moves the cut-offs unless given (`Verdicts`)
    explain: int = 5
    model_cache: int = DEFAULT_MODEL_CACHE
    max_model_size: int = DEFAULT_MAX_MODEL_SIZE
    # How a worker's replies say a library error (a ParameterError names the
    # Python parameter): `nbcli serve` gives the command line's in_flag_terms.
    in_terms: Callable[[NbcliError], NbcliError] | None = None
