"""What the training options resolve to once the corpus is known
(fit/settings.py): the mail model for a corpus of mail, the text defaults
otherwise, and the event model's settings."""

from __future__ import annotations

import pytest

from nbcli.fit.settings import (
    MAIL_ALPHA,
    MAIL_ALPHA_PER_DOCUMENT,
    TEXT_ALPHA,
    TrainOptions,
    described_options,
    model_settings,
    plain_prior,
    resolved,
    resolved_defaults,
)


def test_auto_is_the_mail_model_for_mail_and_multinomial_for_text():
    mail, alpha, unknown = resolved(TrainOptions(), mostly_mail=True)
    assert (mail.kind, mail.tf_log, mail.length_norm) == ("complement", True, True)
    assert mail.alpha_per_document == alpha == MAIL_ALPHA_PER_DOCUMENT and unknown == "skip"
    text, alpha, unknown = resolved(TrainOptions(), mostly_mail=False)
    assert text.kind == "multinomial" and alpha == TEXT_ALPHA and unknown == "skip"


def test_a_given_alpha_or_unknown_rule_overrides_the_mail_defaults():
    options, alpha, _ = resolved(TrainOptions(alpha=0.25), mostly_mail=True)
    assert options.kind == "complement" and options.alpha_per_document is None and alpha == 0.25
    options, alpha, unknown = resolved(TrainOptions(unknown="smooth"), mostly_mail=True)  # asks for multinomial
    assert options.kind == "multinomial" and alpha == MAIL_ALPHA and unknown == "smooth"
    assert resolved_defaults(TrainOptions(kind="multinomial"), mostly_mail=True) == (MAIL_ALPHA, "smooth")


@pytest.mark.parametrize(
    "options, prior",
    [
        (TrainOptions(kind="multinomial"), "fit"),
        (TrainOptions(kind="complement"), "uniform"),  # complement's default, as scikit-learn's
        (TrainOptions(kind="complement", prior_alpha=1.0), "fit"),
        (TrainOptions(kind="bernoulli", prior={"a": 0.5, "b": 0.5}), {"a": 0.5, "b": 0.5}),
    ],
)
def test_model_settings_resolve_the_prior(options, prior):
    settings = model_settings(options, 0.5, "skip")
    assert settings["prior"] == prior and settings["alpha"] == 0.5 and settings["unknown"] == "skip"
    assert ("tf_log" in settings) == (options.kind == "complement")  # complement's transforms only for it


def test_described_options_say_what_the_corpus_decided():
    options, alpha, unknown = resolved(TrainOptions(described={"alpha": None}), mostly_mail=True)
    described = described_options(options, alpha, unknown)
    assert described["alpha"] == "0.3/N" and described["model"] == "complement"
    assert described["tf_log"] is True and described["length_norm"] is True
    assert described["unknown_terms"] == "skip"
    text, alpha, unknown = resolved(TrainOptions(described={}), mostly_mail=False)
    assert described_options(text, alpha, unknown) == {"alpha": 1.0, "unknown_terms": "skip"}


def test_plain_prior_is_written_as_the_option_takes_it():
    assert plain_prior("uniform") == "uniform"
    assert plain_prior({"ham": 0.25, "spam": 0.75}) == "ham=0.25,spam=0.75"


def test_what_the_options_need_of_the_counting_pass():
    assert TrainOptions(kind="bernoulli").needs_doc_freq and not TrainOptions(kind="multinomial").needs_doc_freq
    assert TrainOptions(kind="complement", tf_log=True).first_pass_transform == (True, False)
    pruned = TrainOptions(kind="complement", length_norm=True, min_df=2)
    assert pruned.first_pass_transform is None and pruned.needs_second_pass
