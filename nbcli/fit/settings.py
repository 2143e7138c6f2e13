"""What the training options mean once the corpus is known: `TrainOptions`
(the options, checked: see `training_options`), the defaults that depend on
whether the corpus is mostly mail, and the event model's settings they
resolve to. Plain values only, so that every way to a model (training,
learning from nothing, the online protocol, cross-validation's folds)
resolves them alike without importing the builders.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

# The default pseudo-count and unknown-term rule. For text: 1 (Laplace) and
# skip, as scikit-learn does. For a corpus that is mostly email they were
# chosen by 5-fold cross-validation on the training part of the SpamAssassin
# split, never on its held-out part (benchmarks/tune_mail.py writes the
# table and the rule to docs/benchmarks.md).
TEXT_ALPHA = 1.0
MAIL_ALPHA = 0.0001
# Mail models count terms outside the vocabulary as never-seen terms (see
# model.MultinomialNB), which is evidence: spam is full of made-up words.
TEXT_UNKNOWN = "skip"
MAIL_UNKNOWN = "smooth"
# The mail model (see `resolved`): chosen by measurement of the TREC online
# protocol on the SpamAssassin corpus in date order and of the batch split
# (benchmarks/online_tuning.py; the table in docs/benchmarks.md).
MAIL_TRANSFORMS = (True, True)  # complement's tf-log, length-norm
MAIL_ALPHA_PER_DOCUMENT = 0.3


@dataclass
class TrainOptions:
    """Smoothing and vocabulary pruning (see `nbcli train --help`)."""

    alpha: float | None = None  # None: TEXT_ALPHA, or MAIL_ALPHA for a corpus of mail
    unknown: str | None = None  # None: TEXT_UNKNOWN, or MAIL_UNKNOWN for a corpus of mail
    prior: object = None  # 'fit', 'uniform' or {class: weight}; None: fit (uniform for complement)
    min_df: int | float = 1
    max_df: int | float = 1.0
    max_features: int | None = None
    kind: str = "auto"  # see model.EVENT_MODELS; auto: decided by the corpus (see `resolved`)
    estimate: str = "mean"  # 'mean' or 'map'
    m_estimate: tuple | None = None  # (M, P or None)
    prior_alpha: float | None = None
    tf_log: bool = False  # complement's document transforms
    idf: bool = False
    length_norm: bool = False
    weight_norm: bool = False
    select: int | None = None  # keep the K best terms by select_by
    select_by: str = "ig"
    alpha_per_document: float | None = None  # alpha = this / documents (the mail model's rule)
    given: frozenset = frozenset()  # the names of the options the user gave (see OPTION_DEFAULTS)
    described: dict = field(default_factory=dict)  # options as the user gave them

    @property
    def needs_doc_freq(self) -> bool:
        return self.min_df != 1 or self.max_df != 1.0 or self.kind == "bernoulli" or self.idf or self.select is not None

    @property
    def pruning(self) -> bool:
        return self.min_df != 1 or self.max_df != 1.0 or self.max_features is not None or self.select is not None

    @property
    def first_pass_transform(self) -> tuple[bool, bool] | None:
        """(tf_log, length_norm) of complement's document transforms when the
        counting pass can add up the transformed documents itself: each
        document's transform depends only on its own terms, so it can,
        unless pruning narrows the vocabulary (the norm is over the kept
        terms) or idf weighs the terms before normalising. For the `auto`
        model, the mail model's, approximately when pruning (see `resolved`)."""
        if self.kind == "auto":
            return MAIL_TRANSFORMS
        if self.kind == "complement" and (self.tf_log or self.length_norm) and not self.idf and not self.pruning:
            return (self.tf_log, self.length_norm)
        return None

    @property
    def needs_second_pass(self) -> bool:
        """Complement's tf-log and length normalisation on a pruned
        vocabulary, or after idf: each document's own view on the final
        vocabulary needs a second pass over the corpus."""
        return self.kind == "complement" and (self.tf_log or self.length_norm) and self.first_pass_transform is None


def resolved(options: TrainOptions, mostly_mail: bool) -> tuple[TrainOptions, float, str]:
    """(the options with the event model decided, alpha, unknown-term rule)
    for a corpus that is mostly mail or not: what depends on the corpus.

    The `auto` event model (no --model given) is, for a corpus mostly of
    mail, the mail model: complement Naive Bayes with --tf-log and
    --length-norm, the pseudo-count MAIL_ALPHA_PER_DOCUMENT / N for N
    documents learned (unless --alpha or --m-estimate is given), unknown
    terms skipped, a uniform prior (see "Online defaults" in
    docs/benchmarks.md for the measurements that chose it); --unknown-terms
    smooth asks for the multinomial model. Otherwise it is the multinomial
    model with TEXT_ALPHA. With pruning, the mail model's transformed sums
    are those of the counting pass (norms over all of a document's terms,
    not only the kept ones: an approximation, documented)."""
    if options.kind == "auto":
        mail_model = mostly_mail and options.unknown != "smooth"
        if mail_model:
            per_document = MAIL_ALPHA_PER_DOCUMENT if options.alpha is None and options.m_estimate is None else None
            options = dataclasses.replace(
                options, kind="complement", tf_log=True, length_norm=True, alpha_per_document=per_document
            )
        else:
            options = dataclasses.replace(options, kind="multinomial")
    alpha, unknown = resolved_defaults(options, mostly_mail)
    return options, alpha, unknown


def resolved_defaults(options: TrainOptions, mostly_mail: bool) -> tuple[float, str]:
    """(alpha, unknown-term rule) of options whose event model is decided, for
    a corpus that is mostly mail or not (with alpha_per_document, alpha is
    that: the model divides it by its number of documents)."""
    if options.alpha_per_document is not None:
        alpha = options.alpha_per_document
    else:
        alpha = options.alpha if options.alpha is not None else MAIL_ALPHA if mostly_mail else TEXT_ALPHA
    unknown = options.unknown or (MAIL_UNKNOWN if mostly_mail and options.kind == "multinomial" else TEXT_UNKNOWN)
    return alpha, unknown


def model_settings(options: TrainOptions, alpha: float, unknown: str) -> dict:
    """The event model's keyword arguments for TrainOptions, with the
    resolved pseudo-count and unknown-term rule (all but the count-derived
    doc_freq, idf and fit_count): training, learning from nothing and the
    online protocol build their models from these."""
    # complement's prior is uniform by default (Rennie et al., scikit-learn), unless --prior-alpha asks to fit one
    uniform = options.kind == "complement" and options.prior_alpha is None
    prior = options.prior if options.prior is not None else "uniform" if uniform else "fit"
    settings = dict(
        alpha=alpha,
        prior=prior,
        unknown=unknown,
        estimate=options.estimate,
        m_estimate=options.m_estimate,
        prior_alpha=options.prior_alpha,
        alpha_per_document=options.alpha_per_document,
    )
    if options.kind == "complement":
        settings.update(tf_log=options.tf_log, length_norm=options.length_norm, weight_norm=options.weight_norm)
    return settings


def described_options(options: TrainOptions, alpha: float, unknown: str) -> dict:
    """The options as the model's meta records them: as given, with the
    resolved pseudo-count and unknown-term rule, and the event model the
    corpus decided when none was given."""
    described = {**options.described, "alpha": alpha, "unknown_terms": unknown}
    if options.alpha_per_document is not None:
        described["alpha"] = f"{options.alpha_per_document:g}/N"
    if "model" not in described and options.kind != "multinomial":
        described["model"] = options.kind
        described.update({k: True for k in ("tf_log", "length_norm") if getattr(options, k)})
    return described


def plain_prior(prior) -> str:
    """A prior as `--prior` takes it (for the model's meta)."""
    return prior if isinstance(prior, str) else ",".join(f"{c}={w:g}" for c, w in prior.items())
