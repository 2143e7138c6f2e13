"""The command line's options in one place (issue 13): the one table of
library field names and flags, and "given by the user" decided one way,
by click's ParameterSource (a default typed on the command line counts)."""

import json
import subprocess
import sys

import click

from nbcli.cli import option_bundles, options
from nbcli.cli.main import cli
from nbcli.fit.training_options import OPTION_DEFAULTS

from conftest import make_docs, run

# The options of `nbcli train` that are not training options.
# --calibrate fits a map after training; eval --cv and tune judge the raw models.
_NOT_TRAINING = {"--output", "--label", "--from-model", "--calibrate", "--jobs", "--cluster", "--quiet", "--help"}
# train --unlabeled (semi-supervised EM) and its settings
_NOT_TRAINING |= {"--unlabeled", "--em-weight", "--em-iter", "--em-tokens", "--em-tol", "--em-components"}
# train --decide and its positive class: chosen on held-out scores, as --calibrate is
_NOT_TRAINING |= {"--decide", "--positive"}


def _flags(command) -> set[str]:
    return {max(p.opts, key=len) for p in command.params if isinstance(p, click.Option)}


def test_the_field_flag_table_covers_every_training_option_of_train():
    train = cli.commands["train"]
    read = _flags(click.command()(option_bundles.read_options(lambda **kw: None)))
    table = _flags(click.command()(option_bundles.table_options(lambda **kw: None)))  # a table model's own
    training_flags = _flags(train) - read - table - _NOT_TRAINING
    assert set(options.TRAINING_FLAGS.values()) == training_flags
    assert set(options.TRAINING_FLAGS) == set(OPTION_DEFAULTS)  # every library field has its flag
    help_text = run(["train", "--help"]).stdout
    assert all(flag in help_text for flag in options.TRAINING_FLAGS.values())
    assert options.flag("kind") == "--model" and options.flag("unknown") == "--unknown-terms"
    # the commands that train models of their own take the same options
    for name in ("eval", "tune"):
        assert training_flags <= _flags(cli.commands[name])


def test_help_never_imports_numpy():
    code = "import sys; from nbcli.cli.main import cli; import nbcli.cli.options; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_a_default_typed_on_the_command_line_is_given(tmp_path, small_model):
    # --ngrams 1 is the default, but typed it asks for what --from-model cannot do
    result = run(["train", "--from-model", small_model, "-o", tmp_path / "x.nb", "--ngrams", "1"])
    assert result.exit_code == 1
    assert "--ngrams needs the corpus, so it cannot be used with --from-model" in result.stderr
    assert not (tmp_path / "x.nb").exists()
    # not typed: the same value is no option at all
    result = run(["train", "--from-model", small_model, "-o", tmp_path / "y.nb", "--alpha", "0.5", "-q"])
    assert result.exit_code == 0, result.stderr


def test_training_options_without_cv_name_their_flag(tmp_path, small_model):
    result = run(["eval", small_model, tmp_path, "--model", "bernoulli"])
    assert result.exit_code == 2
    assert "--model needs --cv" in result.stderr  # the flag, not click's name for it
    result = run(["eval", small_model, tmp_path, "--no-mail"])
    assert result.exit_code == 2 and "--no-mail needs --cv" in result.stderr


def test_tune_keeps_a_grid_option_typed_with_its_default_value(make_class_folders):
    texts, labels = make_docs(120, seed=3, classes=["ham", "spam"])
    corpus = make_class_folders(texts, labels)
    result = run(["tune", corpus, "--cv", "3", "--json", "--model", "multinomial", "-q"])
    assert result.exit_code == 0, result.stderr
    got = json.loads(result.stdout)
    assert [r["settings"] for r in got["results"]] == [{"alpha": a} for a in (1.0, 0.1, 0.01, 0.001, 0.0001)]
    assert got["command"].startswith(f"nbcli train {corpus} --model multinomial --alpha ")
    # not typed: the model is searched
    result = run(["tune", corpus, "--cv", "3", "--json", "-q"])
    assert {r["settings"]["kind"] for r in json.loads(result.stdout)["results"]} == {
        "multinomial",
        "bernoulli",
        "complement",
    }


def test_the_model_file_records_a_default_typed_on_the_command_line(tmp_path, make_class_folders):
    texts, labels = make_docs(60, seed=2, classes=["ham", "spam"])
    corpus = make_class_folders(texts, labels)
    for name, extra in (("typed.nb", ["--select-by", "ig"]), ("plain.nb", [])):
        assert run(["train", corpus, "-o", tmp_path / name, "-q", *extra]).exit_code == 0
    typed = json.loads(run(["info", tmp_path / "typed.nb", "--json"]).stdout)["options"]
    plain = json.loads(run(["info", tmp_path / "plain.nb", "--json"]).stdout)["options"]
    assert typed["select_by"] == "ig" and "select_by" not in plain


def test_max_doc_bytes_is_capped_as_max_message_bytes_is(tmp_path):
    """Issue 25, item 20: --max-doc-bytes had no upper bound, and analysing
    one document costs about 15 times its size (a 1G one-line document was
    killed past 8 GB): more than 64M is a usage error, in one line."""
    corpus = tmp_path / "c"
    for label in ("a", "b"):
        (corpus / label).mkdir(parents=True)
        (corpus / label / "1.txt").write_text(f"words of {label}")
    for size in ("65M", "1G"):
        result = run(["train", corpus, "-o", tmp_path / "m.nb", "--max-doc-bytes", size])
        assert result.exit_code == 2 and not (tmp_path / "m.nb").exists()
        assert f"'{size}' is more than the largest allowed, 64M" in result.stderr
        assert result.stderr.count("\n") == 1
    result = run(["train", corpus, "-o", tmp_path / "m.nb", "--max-doc-bytes", "64M", "-q"])
    assert result.exit_code == 0, result.stderr
