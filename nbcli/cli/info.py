"""`nbcli info`: describe a model (the description is the model file's,
output.render_info writes it for people)."""

from __future__ import annotations

import sys

import click

from nbcli.cli.option_bundles import json_option
from nbcli.cli.stdio import write_json


@click.command()
@click.argument("model")
@click.option(
    "--top", type=click.IntRange(0), default=10, show_default=True, help="How many indicative terms to list per class."
)
@json_option
def info(model, top, as_json):
    """Describe a model: classes, documents, vocabulary, training options
    and each class's most indicative terms (by log-odds against the other
    classes).

    \b
    Example:
      nbcli info mail.nb --top 20
      nbcli info mail.nb --json | jq .vocabulary_size
    """
    from nbcli.store import modelfile
    from nbcli.store.describe import describe

    classifier = modelfile.load(model)
    description = {"model": model, **describe(classifier, top)}
    if as_json:
        write_json(description)
    else:
        from nbcli.cli.output import render_info

        render_info(description, sys.stdout)
