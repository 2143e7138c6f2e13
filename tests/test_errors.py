"""nbcli.errors: the one-line errors users see, the parameter errors the
CLI renders with flags, and errors that cross a process boundary."""

from __future__ import annotations

import pickle

from nbcli.errors import NbcliError, ParameterError, listed


def test_an_error_is_its_message_and_hint_on_one_line():
    assert str(NbcliError("no such file: x.nb", hint="train one first")) == "no such file: x.nb; train one first"
    assert str(NbcliError("bad")) == "bad"


def test_a_parameter_error_names_the_parameter_and_renders_with_flags():
    error = ParameterError("alpha", "{alpha} must be a positive number, not {value}", hint="try 1", value=0.0)
    assert str(error) == "alpha must be a positive number, not 0.0; try 1"
    flagged = error.named(lambda name: "--" + name.replace("_", "-"))
    assert str(flagged) == "--alpha must be a positive number, not 0.0; try 1"
    assert "{kind:complement}" not in str(ParameterError("tf_log", "{tf_log} is for {kind:complement}"))


def test_errors_survive_pickling_as_they_do_from_a_worker_process():
    plain = pickle.loads(pickle.dumps(NbcliError("bad input", hint="fix it")))
    assert (plain.message, plain.hint, str(plain)) == ("bad input", "fix it", "bad input; fix it")
    error = ParameterError("alpha", "{alpha} must be positive, not {value}", hint="give {alpha} > 0", value=-1)
    error.message = "worker 2: " + error.message  # a prefix added on the way, as the pipeline does
    back = pickle.loads(pickle.dumps(error))
    assert isinstance(back, ParameterError) and back.parameter == "alpha"
    assert str(back) == "worker 2: alpha must be positive, not -1; give alpha > 0"
    assert str(back.named(lambda n: "--" + n)) == "worker 2: --alpha must be positive, not -1; give --alpha > 0"


def test_listed_says_when_it_cut_a_long_list():
    assert listed(["a", "b"]) == "a, b"
    assert listed(range(12), most=3) == "0, 1, 2, … (and 9 more)"


def _parameters_named(node) -> set[str]:
    """The parameters a `ParameterError(...)` call names: its first argument
    and the fields of its message and hint templates that are not values."""
    import ast
    import string

    def pieces(text):
        if isinstance(text, ast.Constant) and isinstance(text.value, str):
            yield text.value
        elif isinstance(text, ast.JoinedStr):  # an f-string's literal parts ({{x}} is {x} there)
            yield from (v.value for v in text.values if isinstance(v, ast.Constant))

    values = {k.arg for k in node.keywords}
    names = {node.args[0].value} if node.args and isinstance(node.args[0], ast.Constant) else set()
    for text in [*node.args[1:], *(k.value for k in node.keywords if k.arg == "hint")]:
        for piece in pieces(text):
            try:
                names |= {field for _, field, _, _ in string.Formatter().parse(piece) if field}
            except ValueError:  # a piece of an f-string cut at a formatted value
                pass
    return names - values


def test_every_parameter_the_library_names_has_a_flag():
    """The command line renders a ParameterError with flags; a parameter it
    has no flag for made the error itself a traceback (found: --warmup)."""
    import ast
    from pathlib import Path

    from nbcli.cli.options import PARAMETER_FLAGS, TRAINING_FLAGS

    unmapped = []
    for path in sorted((Path(__file__).resolve().parent.parent / "nbcli").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            called = getattr(node, "func", None)
            if isinstance(node, ast.Call) and getattr(called, "id", getattr(called, "attr", None)) == "ParameterError":
                unmapped += [
                    f"{path.name}:{node.lineno} {name}"
                    for name in _parameters_named(node)
                    if name not in TRAINING_FLAGS and name not in PARAMETER_FLAGS
                ]
    assert not unmapped
