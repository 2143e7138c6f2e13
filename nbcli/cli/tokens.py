"""`nbcli tokens`: the terms of documents as training sees them (the
analyzer's debugging view, like bogofilter's bogolexer)."""

from __future__ import annotations

import sys

import click

from nbcli.cli.option_bundles import read_options
from nbcli.cli.options import check_inputs, make_diagnostics, read_opts
from nbcli.cli.stdio import write
from nbcli.errors import NbcliError


@click.command()
@click.argument("inputs", nargs=-1, metavar="[INPUT]...")
@click.option("-m", "--model", metavar="MODEL", help="Use the analyzer options this model was trained with.")
@click.option("--no-mail", is_flag=True, help="Read email messages as plain text.")
@click.option("--token-pattern", metavar="REGEX", help="As for 'nbcli train'.")
@read_options
def tokens(inputs, model, no_mail, token_pattern, **kw):
    """Print the terms of documents, one per line, as training sees them.

    For debugging the analyzer (like bogofilter's bogolexer): an email
    message shows its header tokens ("subject:...", "from-domain:...",
    "received:..."), its body words and its URL and MIME tokens. With
    several documents, each list starts with a line '==> ID <=='.

    \b
    Example:
      nbcli tokens sample_corpora/mail/train/spam/0003.eml
      nbcli tokens -m mail.nb message.eml | sort | uniq -c | sort -rn | head
    """
    from nbcli.cli.output import display_text
    from nbcli.text.analyzer import Analyzer, AnalyzerOptions
    from nbcli.text.sources import Corpus, documents_in

    if model:
        from nbcli.store import modelfile

        options = modelfile.load(model).analyzer_options
        if options is None:  # a table model: it reads columns (it said the default analyzer's terms, as if its own)
            raise NbcliError(
                f"{model} is a table model: it reads a table's columns, not terms", hint="give a text model"
            )
    else:
        options = AnalyzerOptions(token_pattern=token_pattern, mail=not no_mail)
    analyzer = Analyzer(options)
    diagnostics = make_diagnostics(False)
    opts = read_opts(kw, diagnostics)
    docs = list(Corpus([documents_in(p, opts) for p in (inputs or ("-",))]))
    if not docs:
        raise NbcliError("no documents found", hint="check the input paths")
    for doc in docs:
        terms = analyzer.tokens(doc.data, doc.kind)
        if len(docs) > 1:
            write(f"==> {display_text(doc.id)} <==")
        if terms:
            sys.stdout.write("\n".join(t.replace("\n", " ") for t in terms) + "\n")
    diagnostics.finish()
    check_inputs()
