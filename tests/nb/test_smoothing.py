"""Priors, pseudo-counts and Dirichlet estimates (`nb.smoothing`): the
formulas and the checks the event models, the table models and EM share."""

from __future__ import annotations

import numpy as np
import pytest

from nbcli.errors import NbcliError, ParameterError
from nbcli.nb.smoothing import (
    MAX_PSEUDO_COUNT,
    check_alpha,
    check_estimate,
    check_m_estimate,
    check_prior_alpha,
    check_prior_smoothing,
    dirichlet_log_estimate,
    log_prior,
    parse_m_estimate,
    parse_prior,
)


def test_priors():
    counts = np.array([30.0, 10.0])
    assert np.exp(log_prior(counts, ["ham", "spam"], "fit")) == pytest.approx([0.75, 0.25])
    assert np.exp(log_prior(counts, ["ham", "spam"], "uniform")) == pytest.approx([0.5, 0.5])
    weights = parse_prior("spam=1, ham=3")
    assert np.exp(log_prior(counts, ["ham", "spam"], weights)) == pytest.approx([0.75, 0.25])
    with pytest.raises(NbcliError, match="has no weight for spam"):
        log_prior(counts, ["ham", "spam"], parse_prior("ham=1"))
    with pytest.raises(NbcliError, match="names unknown class eggs"):
        log_prior(counts, ["ham", "spam"], parse_prior("ham=1,spam=1,eggs=2"))
    for bad in ["spam", "spam=-1,ham=1", "spam=x", "=1", "spam=1,spam=2"]:
        with pytest.raises(NbcliError):
            parse_prior(bad)


def test_beta_5_3_with_observations_t_f_f():
    """The lecture example: Beta(5, 3) prior, observations t, f, f."""
    log_mean = dirichlet_log_estimate(np.array([1.0, 2.0]), np.array([5.0, 3.0]), "mean")
    log_map = dirichlet_log_estimate(np.array([1.0, 2.0]), np.array([5.0, 3.0]), "map")
    assert np.exp(log_mean[0]) == pytest.approx(6 / 11, rel=1e-12)
    assert np.exp(log_map[0]) == pytest.approx(5 / 9, rel=1e-12)


def test_a_fitted_prior_takes_its_own_pseudo_count():
    # (N_c + A) / (N + A C): (3 + 1) / (4 + 2) and (1 + 1) / (4 + 2)
    got = np.exp(log_prior(np.array([3.0, 1.0]), ["a", "b"], "fit", 1.0))
    assert got == pytest.approx([4 / 6, 2 / 6])
    with pytest.raises(ParameterError, match="prior_alpha smooths the fitted prior") as caught:
        log_prior(np.array([3.0, 1.0]), ["a", "b"], "uniform", 1.0)
    assert caught.value.parameter == "prior_alpha"
    check_prior_smoothing(None, 1.0)  # training's default prior is the fitted one


def test_the_checks_name_the_parameter_and_keep_the_range():
    assert check_alpha(0.5) == 0.5 and check_alpha(MAX_PSEUDO_COUNT) == MAX_PSEUDO_COUNT
    for bad, words in [(0.0, "positive"), (float("nan"), "positive"), (MAX_PSEUDO_COUNT * 10, "at most")]:
        with pytest.raises(ParameterError, match=words) as caught:
            check_alpha(bad)
        assert caught.value.parameter == "alpha"
    assert check_prior_alpha(None) is None and check_prior_alpha(0) == 0.0
    with pytest.raises(ParameterError, match="^prior_alpha must be a number from 0"):
        check_prior_alpha(-1.0)
    assert check_estimate("map") == "map"
    with pytest.raises(ParameterError, match="'median' is not one of mean, map"):
        check_estimate("median")


def test_m_estimates_parse_and_a_p_is_for_bernoulli_only():
    assert parse_m_estimate("2") == (2.0, None)
    assert parse_m_estimate("8,0.625") == (8.0, 0.625)
    for bad in ["0", "x", "2,1.5", "2,0"]:
        with pytest.raises(NbcliError, match="is not valid"):
            parse_m_estimate(bad)
    check_m_estimate((8.0, 0.625), "bernoulli")
    check_m_estimate((8.0, None), "multinomial")
    with pytest.raises(ParameterError, match="a P is for kind:bernoulli|a P is for") as caught:
        check_m_estimate((8.0, 0.625), "multinomial")
    assert caught.value.parameter == "m_estimate"


def test_a_map_estimate_below_zero_is_refused():
    counts = np.array([[0.0, 3.0]])
    assert np.exp(dirichlet_log_estimate(counts, 2.0, "map"))[0] == pytest.approx([1 / 5, 4 / 5])
    with pytest.raises(ParameterError, match="undefined here") as caught:
        dirichlet_log_estimate(counts, 0.5, "map")
    assert caught.value.parameter == "estimate"


@pytest.mark.parametrize("value", [None, "1", [1], True, float("nan"), float("inf"), 0, -1, 10**400])
def test_a_pseudo_count_that_is_not_a_positive_finite_number_is_a_parameter_error(value):
    """What the library is given as alpha (or a model's settings say) is
    refused with a message naming the parameter: never numpy's TypeError
    from isfinite(None) or from an int past 64 bits."""
    with pytest.raises(ParameterError, match=r"^alpha must be (a positive number|at most)"):
        check_alpha(value)
    assert check_alpha(np.float32(0.5)) == 0.5


@pytest.mark.parametrize("value", ["1", [1], True, float("nan"), -1, 10**400])
def test_a_prior_pseudo_count_that_is_not_a_number_from_0_is_a_parameter_error(value):
    with pytest.raises(ParameterError, match=r"^prior_alpha must be a number from 0"):
        check_prior_alpha(value)
    assert check_prior_alpha(None) is None and check_prior_alpha(0) == 0.0
