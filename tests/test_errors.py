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
