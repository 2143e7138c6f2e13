"""The option bundles the commands share (cli/option_bundles.py): what a
bundle adds to a command, in which order (--help lists them so), with which
defaults, and --jobs capped at the cores."""

import click
from click.testing import CliRunner

from nbcli.cli import option_bundles as bundles
from nbcli.defaults import DEFAULT_HAM_CUTOFF, DEFAULT_SPAM_CUTOFF
from nbcli.run.executor import cpu_count

from conftest import run


def _names(*decorators) -> list[str]:
    def f(**kw):
        return kw

    for decorate in reversed(decorators):
        f = decorate(f)
    return [p.name for p in click.command()(f).params]


def _invoke(decorator, args):
    """(exit code, the keyword arguments a command with `decorator` gets, ctx.meta)."""
    seen = {}

    @click.command()
    @decorator
    @click.pass_context
    def command(ctx, **kw):
        seen.update(kw=kw, meta=dict(ctx.meta))

    result = CliRunner().invoke(command, args)
    return result.exit_code, seen.get("kw"), seen.get("meta")


def test_the_trainer_options_are_the_bundles_of_train_in_their_order():
    parts = (
        bundles.read_options,
        bundles.training_options,
        bundles.table_options,
        bundles.jobs_option,
        bundles.cluster_option,
        bundles.quiet_option,
    )
    assert _names(bundles.trainer_options) == _names(*parts)
    assert _names(bundles.trainer_options)[:2] == ["input_format", "text_field"]
    help_text = run(["train", "--help"]).stdout
    flags = ("--input-format", "--token-pattern", "--features", "--jobs", "--quiet")
    places = [help_text.index(flag) for flag in flags]
    assert places == sorted(places)


def test_the_cutoffs_default_to_the_library_defaults():
    code, kw, _ = _invoke(bundles.cutoff_options, [])
    assert code == 0
    assert kw == {"spam_cutoff": DEFAULT_SPAM_CUTOFF, "ham_cutoff": DEFAULT_HAM_CUTOFF, "spam_class": "spam"}
    code, kw, _ = _invoke(bundles.cutoff_options, ["--spam-cutoff", "1.5"])
    assert code == 2 and kw is None  # out of [0, 1]


def test_jobs_beyond_the_cores_are_capped_and_the_cap_is_recorded():
    cores = cpu_count()
    code, kw, meta = _invoke(bundles.jobs_option, ["-j", str(cores + 1)])
    assert code == 0 and kw["jobs"] == cores
    assert meta["nbcli.jobs_capped"] == (cores + 1, cores)
    code, kw, meta = _invoke(bundles.jobs_option, ["-j", "1"])
    assert code == 0 and kw["jobs"] == 1 and "nbcli.jobs_capped" not in meta
    code, _, _ = _invoke(bundles.jobs_option, ["-j", str(bundles.MAX_JOBS + 1)])
    assert code == 2


def test_sizes_in_the_read_options_are_capped():
    code, kw, _ = _invoke(bundles.read_options, ["--max-doc-bytes", "1M"])
    assert code == 0 and kw["max_doc_bytes"] == 1 << 20 and kw["input_format"] == "auto"
    code, _, _ = _invoke(bundles.read_options, ["--max-doc-bytes", "65M"])
    assert code == 2
