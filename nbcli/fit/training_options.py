"""The training options, checked once, before any document is read:
`training_options` builds (AnalyzerOptions, TrainOptions) for the CLI and
the API, and every check of `nbcli train`'s options lives here. Its errors
name the parameters (errors.ParameterError); the CLI names the flags.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from nbcli.defaults import DEFAULT_MAX_MESSAGE_BYTES
from nbcli.errors import ParameterError
from nbcli.fit.settings import TrainOptions
from nbcli.nb.event_models import EVENT_MODELS, UNKNOWN_TERMS, check_unknown_terms
from nbcli.nb.smoothing import (
    ESTIMATES,
    check_alpha,
    check_m_estimate,
    check_prior_alpha,
    check_prior_smoothing,
    parse_m_estimate,
    parse_prior,
)
from nbcli.text.analyzer import AnalyzerOptions, load_stop_words

# The training options a caller leaves alone, by field name (AnalyzerOptions
# and TrainOptions fields; `kind` None: the base kind). An option passed with
# another value counts as given: `refit` keeps the old model's value for the
# rest, and the model file records the newer options only when given.
OPTION_DEFAULTS = {
    "token_pattern": None,
    "ngrams": 1,
    "stop_words": None,
    "min_df": 1,
    "max_df": 1.0,
    "max_features": None,
    "alpha": None,
    "unknown": None,
    "mail": True,
    "max_message_bytes": DEFAULT_MAX_MESSAGE_BYTES,
    "prior": None,
    "prior_alpha": None,
    "kind": None,
    "estimate": None,
    "m_estimate": None,
    "tf_log": False,
    "idf": False,
    "length_norm": False,
    "weight_norm": False,
    "select": None,
    "select_by": "ig",
}

# Recorded in the model file only when given, so the common case stays short.
_DESCRIBED_WHEN_GIVEN = (
    "kind",
    "estimate",
    "m_estimate",
    "prior_alpha",
    "tf_log",
    "idf",
    "length_norm",
    "weight_norm",
    "select",
    "select_by",
)


def _check_types(kw: dict) -> None:
    """The options whose values the command line types itself, checked for
    a caller that passes Python values (`nbcli.api.train`): a str where a
    whole number goes, or a list of stop words, raised TypeErrors from deep
    inside the analyser."""
    for name in ("ngrams", "max_message_bytes"):
        value = kw[name]
        if value is not None and type(value) is not int:
            raise ParameterError(name, f"{{{name}}} must be a whole number (an int), not {{value!r}}", value=value)
    words = kw["stop_words"]
    if words is not None and not isinstance(words, (str, os.PathLike)):
        raise ParameterError(
            "stop_words",
            "{stop_words} is 'english' or the name of a file of words (one per line), not {value!r}",
            value=words,
        )


def training_options(
    base_kind: str = "auto", given: Iterable[str] | None = None, **fields
) -> tuple[AnalyzerOptions, TrainOptions]:
    """Check a combination of training options and build (AnalyzerOptions,
    TrainOptions), before any document is read: every check of `nbcli
    train`'s options lives here, and its errors name the command's flags.

    fields: named as in OPTION_DEFAULTS (the option objects' field names:
    `kind` for --model, `unknown` for --unknown-terms, `mail` for not
    --no-mail), with the values `nbcli train` takes: prior 'fit', 'uniform'
    or 'CLASS=W,...'; m_estimate 'M' or 'M,P'; stop_words 'english' or a
    file of words. base_kind: the event model when kind is None (for
    `train --from-model`, the old model's). given: the fields the user gave
    (the command line's, typed defaults too); None: those passed with a value
    other than OPTION_DEFAULTS'."""
    unknown_names = sorted(set(fields) - set(OPTION_DEFAULTS))
    if unknown_names:
        raise TypeError(f"unknown training option(s): {', '.join(unknown_names)}")
    kw = {**OPTION_DEFAULTS, **fields}
    _check_types(kw)
    if given is None:
        given = (k for k, v in OPTION_DEFAULTS.items() if kw[k] != v)
    given = frozenset(given)
    _check_choices(kw)
    if kw["alpha"] is not None:
        check_alpha(kw["alpha"])  # alpha's one check on its way in (the event model checks what reaches it)
    check_prior_alpha(kw["prior_alpha"])
    prior = parse_prior(kw["prior"]) if kw["prior"] is not None else None
    kind = kw["kind"] or base_kind
    m_estimate = parse_m_estimate(kw["m_estimate"]) if kw["m_estimate"] is not None else None
    for name in ("tf_log", "idf", "length_norm", "weight_norm"):
        if kw[name] and kind != "complement":
            raise ParameterError(name, f"{{{name}}} is for {{kind:complement}}")
    if m_estimate is not None and kw["alpha"] is not None:
        raise ParameterError("alpha", "give {alpha} or {m_estimate}, not both")
    check_m_estimate(m_estimate, kind)
    if kw["estimate"] == "map" and m_estimate is None and (kw["alpha"] is None or kw["alpha"] <= 1):
        raise ParameterError(
            "estimate",
            "{estimate:map} needs {alpha} above 1 (got {got})",
            got=kw["alpha"] if kw["alpha"] is not None else "the default",
            hint=(
                "the MAP estimate (N + alpha - 1) / (T + K (alpha - 1)) is zero or negative for unseen terms when "
                "alpha <= 1"
            ),
        )
    check_unknown_terms(kw["unknown"], "multinomial" if kind == "auto" else kind)
    check_prior_smoothing(prior, kw["prior_alpha"])
    stop_words = load_stop_words(kw["stop_words"]) if kw["stop_words"] else ()
    analyzer_options = AnalyzerOptions(
        token_pattern=kw["token_pattern"],
        ngrams=kw["ngrams"],
        stop_words=stop_words,
        mail=kw["mail"],
        max_message_bytes=kw["max_message_bytes"],
    )
    analyzer_options.check()
    described = {
        k: kw[k]
        for k in ("alpha", "prior", "token_pattern", "ngrams", "stop_words", "min_df", "max_df", "max_features", "mail")
    }
    described.update({k: kw[k] for k in _DESCRIBED_WHEN_GIVEN if k in given})
    if "kind" in described:
        described["model"] = described.pop("kind")
    options = TrainOptions(
        alpha=kw["alpha"],
        unknown=kw["unknown"],
        prior=prior,
        min_df=kw["min_df"],
        max_df=kw["max_df"],
        max_features=kw["max_features"],
        kind=kind,
        estimate=kw["estimate"] or "mean",
        m_estimate=m_estimate,
        prior_alpha=kw["prior_alpha"],
        tf_log=kw["tf_log"],
        idf=kw["idf"],
        length_norm=kw["length_norm"],
        weight_norm=kw["weight_norm"],
        select=kw["select"],
        select_by=kw["select_by"],
        given=given,
        described=described,
    )
    return analyzer_options, options


def _check_choices(kw: dict) -> None:
    """The values the command line's option types check, for callers of
    `training_options` from Python (the command line never fails these)."""
    for name, choices in (
        ("kind", (None, *EVENT_MODELS)),
        ("unknown", (None, *UNKNOWN_TERMS)),
        ("estimate", (None, *ESTIMATES)),
        ("select_by", ("ig", "chi2")),
    ):
        if kw[name] not in choices:
            raise ParameterError(
                name,
                f"{{{name}}} {{value!r}} is not one of {{choices}}",
                value=kw[name],
                choices=", ".join(c for c in choices if c),
            )
    for name in ("max_features", "select"):
        value = kw[name]
        if value is not None and not (isinstance(value, int) and not isinstance(value, bool) and value >= 1):
            raise ParameterError(name, f"{{{name}}} must be a whole number of at least 1, not {{value!r}}", value=value)
    for name in ("min_df", "max_df"):
        value = kw[name]
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not (value >= 0 if isinstance(value, int) else 0.0 <= value <= 1.0)
        ):
            raise ParameterError(
                name,
                f"{{{name}}} {{value!r}} is neither a document count nor a proportion from 0.0 to 1.0",
                value=value,
            )
