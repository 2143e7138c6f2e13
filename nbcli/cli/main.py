"""The command line: the `nbcli` click group, its error boundary, and the
registration of the commands, each of which (or each family of which) is a
module of its own: train, predict, evaluate (eval), tune, info, filter,
tokens, learning (learn, forget), model_files (merge, dump, load, prune,
compact),
calibrate, cluster and serve. Commands are thin: they parse, call the
library and write its answer.

Start-up stays light (numpy, scipy, joblib and rich are imported inside the
commands that need them, so `nbcli --help` starts fast), and the group turns
every library error into one line on stderr and an exit code:

    0  success
    1  an error (bad input, bad model file, ...): `nbcli: error: ...`
    2  a usage error (unknown option, bad option value)
  130  interrupted (Ctrl-C)
  141  stdout closed early (e.g. `nbcli predict ... | head`)

`nbcli --version` is one line, `nbcli 0.1.0 (model format 3, Python 3.11.7)`:
the second field is the version (`nbcli --version | cut -d' ' -f2`), the model
format is the newest model file this nbcli reads and writes (older ones load; a
file from a newer nbcli is refused), Python is the interpreter's version as
`python --version` says it. `python -m nbcli --version` says the same.

A library error that names a Python parameter (errors.ParameterError) is said
in flag terms (options.in_flag_terms). The layers (issue 26's height budget):
support modules (options, option_bundles, param_types, output, reports,
stdio, paths, plot, diagnostics) import no command module; a command module
imports support modules and the library, never another command module; only
this module imports the commands.
"""

from __future__ import annotations

import os
import sys

# numpy's BLAS would start a thread pool at import (~40 ms) that nbcli never
# uses: its arithmetic is elementwise and bincount, and parallelism is by
# processes (see pipeline.py).
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import click  # noqa: E402

from nbcli import __version__  # noqa: E402
from nbcli.cli.options import in_flag_terms  # noqa: E402
from nbcli.cli.stdio import err, guard_standard_streams  # noqa: E402
from nbcli.defaults import MODEL_FORMAT_VERSION  # noqa: E402
from nbcli.errors import NbcliError  # noqa: E402

CONTEXT = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class _StdoutGone(Exception):
    """The reader of stdout went away (EPIPE). Not an OSError, so that click's
    own EPIPE handling (exit 1) does not swallow it: nbcli exits 141, as a
    process killed by SIGPIPE would."""


class NbcliGroup(click.Group):
    """A click group whose errors are one line each, never a traceback."""

    def invoke(self, ctx):
        try:
            rv = super().invoke(ctx)
            sys.stdout.flush()  # here, not at exit, where a closed pipe could only be ignored
            return rv
        except BrokenPipeError:
            raise _StdoutGone() from None

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True, **extra):
        try:
            rv = super().main(
                args=args, prog_name=prog_name or "nbcli", complete_var=complete_var, standalone_mode=False, **extra
            )
        except click.UsageError as exc:
            where = f" (see '{exc.ctx.command_path} --help')" if exc.ctx is not None else ""
            err(f"nbcli: error: {exc.format_message()}{where}")
            given = list(sys.argv[1:] if args is None else args)
            # filter --exit-codes speaks bogofilter's codes, where 2 is unsure: a usage error there is 3 (error)
            sys.exit(3 if given[:1] == ["filter"] and "--exit-codes" in given else 2)
        except click.ClickException as exc:
            err(f"nbcli: error: {exc.format_message()}")
            sys.exit(exc.exit_code)
        except NbcliError as exc:
            err(f"nbcli: error: {in_flag_terms(exc)}")  # the library names parameters; say their flags
            sys.exit(exc.exit_code)
        except (click.Abort, KeyboardInterrupt):
            err("nbcli: interrupted")
            sys.exit(130)
        except (BrokenPipeError, _StdoutGone):
            # The reader went away: stop quietly, like other Unix tools (and
            # let nothing flush into the closed pipe at exit).
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
            except OSError:
                pass
            sys.exit(141)
        except OSError as exc:
            err(f"nbcli: error: {exc.strerror or exc}")
            sys.exit(1)
        except Exception as exc:  # a bug: still one line, unless debugging
            if os.environ.get("NBCLI_DEBUG"):
                raise
            err(
                f"nbcli: internal error: {type(exc).__name__}: {exc} (please report it; NBCLI_DEBUG=1 shows the "
                "traceback)"
            )
            sys.exit(1)
        sys.exit(rv if isinstance(rv, int) else 0)


# `nbcli --version` (see the module's docstring). Nothing here imports numpy.
VERSION_LINE = f"%(prog)s %(version)s (model format {MODEL_FORMAT_VERSION}, Python {sys.version.split()[0]})"


# -- the group and its commands ---------------------------------------------------


@click.group(name="nbcli", cls=NbcliGroup, context_settings=CONTEXT)
@click.version_option(__version__, "--version", prog_name="nbcli", message=VERSION_LINE)
def cli():
    """nbcli: a Naive Bayes text and spam classifier for the command line.

    Train a model on labelled documents, then classify new ones. Results go
    to stdout, one line per document; progress and diagnostics to stderr.

    \b
    Example:
      nbcli train sample_corpora/mail/train -o mail.nb
      nbcli predict mail.nb message.eml
      nbcli eval mail.nb sample_corpora/mail/test
      nbcli eval --cv 5 sample_corpora/mail/train
      nbcli tune sample_corpora/mail/train
      nbcli info mail.nb
      nbcli learn mail.nb --spam < misfiled-message.eml
      nbcli eval --online sample_corpora/mail/train
    """


from nbcli.cli.calibrate import calibrate  # noqa: E402
from nbcli.cli.cluster import cluster  # noqa: E402
from nbcli.cli.evaluate import eval_  # noqa: E402
from nbcli.cli.filter import filter_  # noqa: E402
from nbcli.cli.imap import imap  # noqa: E402
from nbcli.cli.info import info  # noqa: E402
from nbcli.cli.learning import forget, learn  # noqa: E402
from nbcli.cli.model_files import compact, dump, load_, merge, prune  # noqa: E402
from nbcli.cli.predict import predict  # noqa: E402
from nbcli.cli.serve import serve  # noqa: E402
from nbcli.cli.tokens import tokens  # noqa: E402
from nbcli.cli.train import train  # noqa: E402
from nbcli.cli.tune import tune  # noqa: E402

# registered in the order they were written (click's --help lists them alphabetically)
for _command in (
    train,
    predict,
    eval_,
    tune,
    info,
    filter_,
    tokens,
    learn,
    forget,
    merge,
    dump,
    load_,
    prune,
    calibrate,
    cluster,
    serve,
    imap,
    compact,
):
    cli.add_command(_command)


def main() -> None:
    guard_standard_streams()
    cli.main(prog_name="nbcli")
