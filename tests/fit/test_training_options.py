"""The training options, checked before any document is read
(fit/training_options.py): errors name the parameter, and the options the
caller gave are told from the defaults."""

from __future__ import annotations

import pytest

from nbcli.errors import ParameterError
from nbcli.fit.training_options import OPTION_DEFAULTS, training_options


@pytest.mark.parametrize(
    "fields, parameter, words",
    [
        ({"tf_log": True}, "tf_log", "is for"),
        ({"alpha": 0.5, "m_estimate": "2"}, "alpha", "not both"),
        ({"estimate": "map"}, "estimate", "above 1"),
        ({"kind": "gaussian"}, "kind", "is not one of"),
        ({"select": 0}, "select", "whole number of at least 1"),
        ({"min_df": 1.5}, "min_df", "neither a document count nor a proportion"),
        ({"select_by": "gini"}, "select_by", "is not one of ig, chi2"),
    ],
)
def test_a_bad_combination_is_refused_naming_the_parameter(fields, parameter, words):
    with pytest.raises(ParameterError) as caught:
        training_options(**fields)
    assert caught.value.parameter == parameter and words in str(caught.value)
    assert "--" not in str(caught.value)  # the library names parameters, the CLI names flags


def test_an_unknown_option_is_a_programming_error():
    with pytest.raises(TypeError, match="unknown training option"):
        training_options(colour="blue")


def test_given_options_are_those_with_other_values_than_the_defaults():
    _, options = training_options(alpha=0.5, ngrams=1, kind="bernoulli")
    assert options.given == {"alpha", "kind"}
    assert options.described["model"] == "bernoulli" and options.described["alpha"] == 0.5
    _, typed = training_options(given=["ngrams"], ngrams=1)  # a default typed on the command line is given
    assert typed.given == {"ngrams"}
    assert set(OPTION_DEFAULTS) >= {"alpha", "kind", "ngrams", "select"}


def test_the_options_become_the_analyzer_and_training_options():
    analyzer_options, options = training_options(
        ngrams=2, prior="ham=0.3,spam=0.7", m_estimate="2,0.5", mail=False, base_kind="bernoulli"
    )
    assert analyzer_options.ngrams == 2 and analyzer_options.mail is False
    assert options.kind == "bernoulli"  # the base kind, none given
    assert options.prior == {"ham": 0.3, "spam": 0.7} and options.m_estimate == (2.0, 0.5)
