"""The event-model builder (issue 26): one function turns counts and
settings into a fitted event model, and the library's parameter errors name
the parameter, which the command line turns into its flag."""

from __future__ import annotations

import ast
from pathlib import Path

NBCLI = Path(__file__).resolve().parents[2] / "nbcli"


def _registry_uses() -> dict[str, list[str]]:
    """{module: [the functions that name the event-model registry MODELS]}
    over nbcli's source (imports of it count, as `module-level`)."""
    uses: dict[str, list[str]] = {}
    for path in sorted(NBCLI.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        for node in ast.walk(tree):
            named = (isinstance(node, ast.Name) and node.id == "MODELS") or (
                isinstance(node, ast.Attribute) and node.attr == "MODELS"
            )
            imported = isinstance(node, ast.ImportFrom) and any(a.name == "MODELS" for a in node.names)
            if not (named or imported):
                continue
            where, up = "module-level", node
            while up in parents:
                up = parents[up]
                if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    where = up.name
                    break
            uses.setdefault(path.relative_to(NBCLI).as_posix(), []).append(where)
    return uses


def test_exactly_one_module_calls_the_event_model_registry_to_build_a_model():
    uses = _registry_uses()
    assert set(uses) == {"nb/event_models.py"}, uses
    # defined (and checked against EVENT_MODELS) at module level, looked up in the builder only
    assert {w for w in uses["nb/event_models.py"] if w != "module-level"} == {"build_event_model"}


import numpy as np  # noqa: E402
import pytest  # noqa: E402

import nbcli  # noqa: E402
from nbcli.errors import ParameterError  # noqa: E402

from conftest import SAMPLES, run  # noqa: E402

TEXTS, LABELS = ["apple banana cherry", "dog eel fox", "apple cherry", "dog fox"], ["x", "y", "x", "y"]
# (library options, command-line flags, what the library says, what the command says: byte for byte as before)
MISTAKES = [
    (
        {"alpha": 0.0},
        ["--alpha", "0"],
        "alpha must be a positive number, not 0.0; alpha = 0 would give unseen terms probability zero; use a small "
        "value such as 0.01",
        "--alpha must be a positive number, not 0.0; alpha = 0 would give unseen terms probability zero; use a small "
        "value such as 0.01",
    ),
    (
        {"alpha": 1e13},
        ["--alpha", "1e13"],
        "alpha must be at most 1e+12, not 10000000000000.0; a pseudo-count that large drowns every count",
        "--alpha must be at most 1e+12, not 10000000000000.0; a pseudo-count that large drowns every count",
    ),
    (
        {"kind": "multinomial", "tf_log": True},
        ["--model", "multinomial", "--tf-log"],
        "tf_log is for kind='complement'",
        "--tf-log is for --model complement",
    ),
    (
        {"kind": "bernoulli", "weight_norm": True},
        ["--model", "bernoulli", "--weight-norm"],
        "weight_norm is for kind='complement'",
        "--weight-norm is for --model complement",
    ),
    (
        {"prior": "uniform", "prior_alpha": 1.0},
        ["--prior", "uniform", "--prior-alpha", "1"],
        "prior_alpha smooths the fitted prior; drop it, or use prior='fit'",
        "--prior-alpha smooths the fitted prior; drop it, or use --prior fit",
    ),
    (
        {"estimate": "map", "alpha": 0.5},
        ["--estimate", "map", "--alpha", "0.5"],
        "estimate='map' needs alpha above 1 (got 0.5); the MAP estimate (N + alpha - 1) / (T + K (alpha - 1)) is "
        "zero or negative for unseen terms when alpha <= 1",
        "--estimate map needs --alpha above 1 (got 0.5); the MAP estimate (N + alpha - 1) / (T + K (alpha - 1)) is "
        "zero or negative for unseen terms when alpha <= 1",
    ),
    (
        {"prior": "{alpha}"},
        ["--prior", "{alpha}"],
        "prior '{alpha}' is not valid; use 'fit', 'uniform' or CLASS=WEIGHT pairs such as 'spam=0.4,ham=0.6'",
        "--prior '{alpha}' is not valid; use 'fit', 'uniform' or CLASS=WEIGHT pairs such as 'spam=0.4,ham=0.6'",
    ),
]


@pytest.mark.parametrize("options, flags, library, command", MISTAKES)
def test_the_library_names_the_parameter_not_the_flag(options, flags, library, command):
    with pytest.raises(ParameterError) as caught:
        nbcli.train(TEXTS, LABELS, **options)
    assert str(caught.value) == library
    assert "--" not in str(caught.value)
    assert caught.value.parameter in options


@pytest.mark.parametrize("options, flags, library, command", MISTAKES)
def test_the_command_still_names_the_flag(tmp_path, options, flags, library, command):
    result = run(["train", SAMPLES / "topics" / "train.jsonl", "-o", tmp_path / "m.nb", *flags])
    assert result.exit_code == 1
    assert result.stderr == f"nbcli: error: {command}\n"
    assert not (tmp_path / "m.nb").exists()


def test_a_worker_prefix_survives_the_translation():
    from nbcli.cli.options import in_flag_terms

    error = ParameterError("alpha", "{alpha} must be a positive number, not {value}", value=0)
    error.message = f"worker w1: {error.message}"  # as cluster._named does
    error.exit_code = 3
    said = in_flag_terms(error)
    assert str(said) == "worker w1: --alpha must be a positive number, not 0" and said.exit_code == 3


def test_the_builder_derives_complements_idf_and_sums_as_training_does(tmp_path):
    """Training and the builder's idf rule agree: the tables of a complement
    model with --idf, derived again from its stored counts by the builder,
    are the trained ones."""
    from nbcli.nb.event_models import build_event_model

    trained = nbcli.train(TEXTS * 3, LABELS * 3, kind="complement", idf=True, calibrate="none")._classifier.model
    settings = {k: v for k, v in trained.settings().items() if k not in ("idf", "fit_count", "doc_freq")}
    built = build_event_model(
        "complement",
        trained.classes,
        trained.class_count,
        trained.feature_count,
        doc_freq=trained.doc_freq,
        idf=True,
        **settings,
    )
    np.testing.assert_array_equal(built.idf, trained.idf)
    np.testing.assert_array_equal(built.fit_count, trained.fit_count)
    np.testing.assert_array_equal(built.weights, trained.weights)
    with pytest.raises(nbcli.NbcliError, match="for the complement model"):
        build_event_model("multinomial", ["x", "y"], np.ones(2), np.ones((2, 3)), idf=True)


def test_every_parameter_the_library_names_has_a_flag():
    """Each ParameterError's parameter, and each parameter its templates
    name ({alpha}, {estimate:map}), is in the command line's flag tables."""
    import string

    from nbcli.cli.options import flag

    named = set()
    for path in sorted(NBCLI.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "ParameterError"):
                continue
            values = {kw.arg for kw in node.keywords} - {"hint"}
            texts = [*node.args[1:2], *(kw.value for kw in node.keywords if kw.arg == "hint")]
            if node.args and isinstance(node.args[0], ast.Constant):
                named.add(node.args[0].value)
            for text in texts:  # f-string templates are not read (their pieces are not whole templates)
                if isinstance(text, ast.Constant) and isinstance(text.value, str):
                    fields = {f for _, f, _, _ in string.Formatter().parse(text.value) if f}
                    named |= fields - values
    assert {"alpha", "estimate", "numeric_model", "bins", "calibrate", "features", "k"} <= named
    for parameter in sorted(named):
        assert flag(parameter).startswith("-"), parameter
