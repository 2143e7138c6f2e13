"""Online evaluation: the TREC spam-track protocol, in one process.

No I/O. Messages are taken in order (by date, or as given); each is
classified by the model learned from the messages before it, then learned
with its true label according to the training rule:

- all: every message (TREC's "ideal user feedback");
- errors: only the messages the filter got wrong (train on error);
- unsure: the wrong ones and those in the unsure band (train until no
  errors, around the cut-offs: bogofilter's thick threshold).

Optionally the first `warmup` messages are learned before the run, and not
scored. The binary verdict TREC's hm% and sm% count is the more probable
class (P(spam) > 0.5, as `eval`'s accuracy); the cut-offs only draw the
unsure band of the `unsure` rule; the score for the ROC is the log-odds of
spam.

The model at every step is exactly the model `nbcli learn` would hold after
learning the same messages: the same counts, smoothing and vocabulary (the
terms of the messages learned so far). It is not rebuilt per message: for
the multinomial model (nbcli's default), a message's scores need only the
counts of its own terms, each class's token total and the vocabulary's
size, all kept up to date as messages are learned, so a step costs time in
the message's terms, not in the vocabulary. The other event models are
rebuilt from the counts when a message was learned since the last score
(exact, slower). tests/fit/test_online.py checks both against models trained on
each prefix.

A class without documents yet has a fitted prior of zero (log -inf): while
only one class has been learned every message is called that class, with
an infinite score, and before anything is learned the score is 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from nbcli.defaults import ONLINE_HAM_CUTOFF, ONLINE_SPAM_CUTOFF
from nbcli.errors import ParameterError

TRAIN_RULES = ("all", "errors", "unsure")
ORDERS = ("date", "given")


@dataclass
class Stream:
    """An analysed corpus: X (CSR, n_docs x n_terms, all of the corpus's
    terms), y (class index per document), classes (sorted), dates (POSIX
    seconds, NaN where unknown), ids, mail_docs."""

    X: object
    y: np.ndarray
    classes: list
    dates: np.ndarray
    ids: list
    mail_docs: int


def analyse_stream(docs, analyzer, progress=None) -> Stream:
    """One pass over labelled documents, keeping each one's counts (as
    cross-validation does) and its date."""
    from nbcli.fit.crossval import analyse_corpus
    from nbcli.text.identity import message_fields

    dates, ids = [], []

    def collect(batch) -> None:
        for d in batch:
            ids.append(d.id)
            date = message_fields(d.data)[1]
            dates.append(np.nan if date is None else date)
        if progress is not None:
            progress(batch)

    corpus = analyse_corpus(docs, analyzer, progress=collect)
    return Stream(corpus.X, corpus.y, corpus.classes, np.array(dates, dtype=np.float64), ids, corpus.mail_docs)


def order_of(stream: Stream, order: str) -> np.ndarray:
    """The order messages are taken in (see `identity.date_order`)."""
    from nbcli.text.identity import date_order

    if order == "given":
        return np.arange(len(stream.y))
    return date_order([None if np.isnan(d) else float(d) for d in stream.dates])


class _Multinomial:
    """The multinomial model of the messages learned so far, kept as counts
    (see the module docstring): log theta_cj = log(N_cj + b) - log(T_c + b V)
    with b the pseudo-count (alpha, alpha_per_document / N, or M / V for the
    m-estimate; minus 1 for the MAP estimate), V the vocabulary's size, T_c
    class c's token total."""

    def __init__(self, n_classes: int, n_terms: int, settings: dict):
        self.counts = np.zeros((n_terms, n_classes))
        self.seen = np.zeros(n_terms, dtype=bool)
        self.vocabulary = 0
        self.tokens = np.zeros(n_classes)
        self.docs = np.zeros(n_classes)
        self.settings = settings
        self.classes = n_classes

    def _pseudo(self) -> float:
        s = self.settings
        if s["m_estimate"] is not None:
            b = s["m_estimate"][0] / max(self.vocabulary, 1)
        elif s.get("alpha_per_document") is not None:
            b = s["alpha_per_document"] / max(self.docs.sum(), 1.0)
        else:
            b = s["alpha"]
        return b - 1.0 if s["estimate"] == "map" else b

    def log_prior(self) -> np.ndarray:
        from nbcli.nb.smoothing import log_prior

        classes = list(range(self.classes))
        prior = self.settings["prior"]
        if isinstance(prior, dict):
            prior = {i: prior[name] for i, name in enumerate(self.settings["class_names"])}
        with np.errstate(divide="ignore", invalid="ignore"):
            return log_prior(self.docs, classes, prior, self.settings["prior_alpha"])

    def _values(self, vals: np.ndarray) -> np.ndarray:
        return vals

    def _log_theta(self, cols: np.ndarray, b: float) -> tuple[np.ndarray, np.ndarray]:
        """(log(N_cj + b) for the terms cols (n, C), log(T_c + b V) (C,))."""
        denominator = np.log(self.tokens + b * self.vocabulary)
        return np.log(self.counts[cols] + b), denominator

    def joint(self, cols: np.ndarray, vals: np.ndarray) -> np.ndarray:
        b = self._pseudo()
        known = self.seen[cols]
        jll = self.log_prior().copy()
        if not self.vocabulary:
            return jll
        k_vals = self._values(vals[known])
        numerator, denominator = self._log_theta(cols[known], b)
        if len(k_vals):
            jll += self._sign * (k_vals @ numerator - k_vals.sum() * denominator)
        unknown = vals[~known].sum()
        if unknown and self.settings["unknown"] == "smooth":
            jll += unknown * (np.log(b) - denominator)
        return jll

    _sign = 1.0

    def learn(self, cols: np.ndarray, vals: np.ndarray, c: int) -> None:
        values = self._values(vals)
        self.counts[cols, c] += values
        fresh = ~self.seen[cols]
        self.seen[cols[fresh]] = True
        self.vocabulary += int(fresh.sum())
        self.tokens[c] += values.sum()
        self.docs[c] += 1


class _Complement(_Multinomial):
    """Complement Naive Bayes with --tf-log and/or --length-norm (no idf, no
    weight normalisation) kept as the per-class sums F of the transformed
    learned messages: class c weighs term j by -log theta~_cj, theta~ the
    estimate from the other classes' sums, log(F~_cj + b) - log(F~_c. + b V).
    A message's values are transformed over its known terms when scored (as
    `ComplementNB.transform` does), over all of them when learned."""

    _sign = -1.0

    def _values(self, vals: np.ndarray) -> np.ndarray:
        values = np.asarray(vals, dtype=np.float64)
        if self.settings.get("tf_log"):
            values = np.log1p(values)
        if self.settings.get("length_norm") and len(values):
            norm = np.sqrt((values * values).sum())
            values = values / (norm or 1.0)
        return values

    def _log_theta(self, cols: np.ndarray, b: float) -> tuple[np.ndarray, np.ndarray]:
        rows = self.counts[cols]
        others = rows.sum(axis=1, keepdims=True) - rows
        total = self.tokens.sum() - self.tokens
        return np.log(others + b), np.log(total + b * self.vocabulary)


class _Rebuilt:
    """Any event model, rebuilt from the counts after each learned message
    (the model `nbcli learn` would write), and scored on the message."""

    def __init__(self, n_classes: int, n_terms: int, settings: dict, kind: str):
        self.tf = np.zeros((n_classes, n_terms), dtype=np.int64)
        self.df = np.zeros((n_classes, n_terms), dtype=np.int64)
        self.fit = np.zeros((n_classes, n_terms))
        self.seen = np.zeros(n_terms, dtype=bool)
        self.docs = np.zeros(n_classes)
        self.settings = settings
        self.kind = kind
        self._model = None
        self._columns = None

    def _built(self):
        if self._model is None:
            from nbcli.nb.event_models import build_event_model

            cols = np.flatnonzero(self.seen)
            s = {k: v for k, v in self.settings.items() if k not in ("class_names", "idf_flag")}
            names = self.settings["class_names"]
            tf = self.tf[:, cols]
            df = self.df[:, cols]
            if self.kind == "complement":
                # the running sums are the transformed documents' only with tf-log or length-norm
                fit = self.fit[:, cols] if (s.get("tf_log") or s.get("length_norm")) else None
                s.update(idf=bool(self.settings["idf_flag"]), fit_count=fit)
            with np.errstate(divide="ignore", invalid="ignore"):
                self._model = build_event_model(self.kind, names, self.docs, tf, doc_freq=df, **s)
            self._columns = np.full(len(self.seen), -1, dtype=np.int64)
            self._columns[cols] = np.arange(len(cols))
        return self._model

    def joint(self, cols: np.ndarray, vals: np.ndarray) -> np.ndarray:
        from nbcli.text.vectorize import SparseCounts

        if not self.seen.any():
            return np.zeros(len(self.docs))
        model = self._built()
        mapped = self._columns[cols]
        known = mapped >= 0
        order = np.argsort(mapped[known], kind="stable")
        X = SparseCounts(
            np.array([0, int(known.sum())]),
            mapped[known][order],
            vals[known][order].astype(np.float64),
            (1, int(self.seen.sum())),
            np.array([vals[~known].sum()]),
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            return model.joint_log_likelihood(X)[0]

    def learn(self, cols: np.ndarray, vals: np.ndarray, c: int) -> None:
        self.tf[c, cols] += vals.astype(np.int64)
        self.df[c, cols] += 1
        if self.kind == "complement" and (self.settings.get("tf_log") or self.settings.get("length_norm")):
            values = np.log1p(vals) if self.settings.get("tf_log") else vals.astype(np.float64)
            if self.settings.get("length_norm"):
                norm = np.sqrt((values * values).sum())
                values = values / (norm or 1.0)
            self.fit[c, cols] += values
        self.seen[cols] = True
        self.docs[c] += 1
        self._model = None


def settings_for(options, alpha: float, unknown: str, classes: list) -> dict:
    """The event model's settings for an online run of TrainOptions `options`
    (training's `model_settings`, with the class names and whether
    complement derives an idf)."""
    from nbcli.fit.settings import model_settings

    settings = {**model_settings(options, alpha, unknown), "class_names": list(classes)}
    if options.kind == "complement":
        settings["idf_flag"] = options.idf
    return settings


def learner(kind: str, n_classes: int, n_terms: int, settings: dict, fast: bool = True):
    """The model to run the protocol with: kept as counts and scored in time
    per message (multinomial; complement without idf or weight
    normalisation), or rebuilt after every learned message."""
    if fast and kind == "multinomial":
        return _Multinomial(n_classes, n_terms, settings)
    if fast and kind == "complement" and not settings.get("idf_flag") and not settings.get("weight_norm"):
        return _Complement(n_classes, n_terms, settings)
    return _Rebuilt(n_classes, n_terms, settings, kind)


@dataclass
class Run:
    """The scored stream: per message taken (in order), the gold label,
    score (log-odds of spam), verdict, whether it was learned; warmup: how
    many were learned first, unscored."""

    order: np.ndarray
    is_spam: np.ndarray
    score: np.ndarray
    called_spam: np.ndarray
    learned: np.ndarray
    warmup: int


def run(
    stream: Stream,
    kind: str,
    settings: dict,
    order: np.ndarray,
    train: str = "errors",
    warmup: int = 0,
    spam_class: str = "spam",
    spam_cutoff: float = ONLINE_SPAM_CUTOFF,
    ham_cutoff: float = ONLINE_HAM_CUTOFF,
    fast: bool = True,
) -> Run:
    """The online protocol over `stream` (see the module docstring)."""
    if train not in TRAIN_RULES:
        raise ParameterError(
            "train", "{train} {value!r} is not one of {choices}", value=train, choices=", ".join(TRAIN_RULES)
        )
    classes = stream.classes
    if len(classes) != 2 or spam_class not in classes:
        raise ParameterError(
            "spam_class",
            "eval {online} measures a spam filter: the corpus needs two classes, one of them {name!r} "
            "(it has {classes})",
            hint="name the spam class with {spam_class}",
            name=spam_class,
            classes=", ".join(classes),
        )
    s = classes.index(spam_class)
    h = 1 - s
    X = stream.X.tocsr()
    indptr, indices, data = X.indptr, X.indices, X.data
    model = learner(kind, 2, X.shape[1], settings, fast)
    spam_log_odds = float(np.log(spam_cutoff) - np.log1p(-spam_cutoff)) if 0 < spam_cutoff < 1 else None
    ham_log_odds = float(np.log(ham_cutoff) - np.log1p(-ham_cutoff)) if 0 < ham_cutoff < 1 else None
    n = len(order)
    if warmup >= n:  # every message learned, none classified: every figure would be 'n/a'
        raise ParameterError(
            "warmup",
            "{warmup} {value} leaves none of the {n} messages to classify",
            hint="give {warmup} less than the number of messages",
            value=warmup,
            n=n,
        )
    scores = np.zeros(n - warmup)
    called = np.zeros(n - warmup, dtype=bool)
    learned = np.zeros(n - warmup, dtype=bool)
    y = stream.y
    for k, i in enumerate(order.tolist()):
        cols = indices[indptr[i] : indptr[i + 1]]
        vals = data[indptr[i] : indptr[i + 1]]
        if k < warmup:
            model.learn(cols, vals, int(y[i]))
            continue
        jll = model.joint(cols, vals)
        score = _log_odds(jll[s], jll[h])
        spam = score > 0  # the more probable class (a tie, before anything is learned: ham)
        wrong = spam != (y[i] == s)
        if train == "all" or wrong:
            teach = True
        elif train == "unsure":
            lower = ham_log_odds if ham_log_odds is not None else -np.inf
            teach = lower < score < (spam_log_odds if spam_log_odds is not None else np.inf)
        else:
            teach = False
        if teach:
            model.learn(cols, vals, int(y[i]))
        j = k - warmup
        scores[j], called[j], learned[j] = score, spam, teach
    taken = order[warmup:]
    return Run(taken, y[taken] == s, scores, called, learned, warmup)


def _log_odds(spam: float, ham: float) -> float:
    """jll(spam) - jll(ham); 0 before anything is learned (no prior yet) or
    on a tie of infinities."""
    if spam == ham or np.isnan(spam) or np.isnan(ham):
        return 0.0
    return spam - ham


def report(result: Run, train: str, order: str) -> dict:
    """The TREC measures of a run, with what was run (JSON-ready)."""
    from nbcli.evaluate import trec

    measured = trec.measures(result.is_spam, result.score, result.called_spam)
    return {
        "protocol": "online",
        "order": order,
        "train": train,
        "warmup": result.warmup,
        **measured,
        "learned": int(result.learned.sum()) + result.warmup,
    }


def curve_figure(result: Run, title: str) -> dict:
    """The learning curve, as `plot.write` takes it."""
    from nbcli.evaluate import trec

    seen, errors, rate = trec.learning_curve(result.is_spam, result.called_spam)
    return {
        "kind": "learning_curve",
        "title": title,
        "seen": seen,
        "errors": errors,
        "rate": rate,
        "window": max(1, len(result.is_spam) // 20),
    }
