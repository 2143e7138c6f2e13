"""Calibration maps: raw Naive Bayes log-posteriors -> calibrated ones.

No I/O. A map is fitted on held-out raw log-probabilities `log_proba`
(shape (n, C)) and true class indices `truth`, and then applied to every
prediction. The metrics that judge calibration are in `nbcli.evaluate.calibration`.

Input. Every row is first normalised (log-softmax, so joint log-likelihoods
do as well) and then floored at LOG_FLOOR = -1e6: a log-probability below it,
-inf included, is read as -1e6. exp(-1e6) is 0 in float64 either way; the
floor keeps every score, every fitted parameter and every calibrated value
finite. A row with NaN, +inf or no finite entry is refused. (A held-out
document whose true class got -inf is, to temperature and platt, a mistake
of 1e6 nats: a few of them pull T up, a down, towards uninformative maps.)

Two classes (class 1 is the "positive" one). The score is the raw log-odds
s = log_proba[:, 1] - log_proba[:, 0]; each method gives calibrated log-odds z
and the output row is [log sigmoid(-z), log sigmoid(z)] (logaddexp, stable).
- temperature: z = s / T, T > 0 (the same as the several-class rule below,
  softmax(log_proba / T), for C = 2).
- platt (Platt 1999, "Probabilistic outputs for support vector machines"):
  z = a * s + b, minimising the log loss against Platt's smoothed targets
  t+ = (N+ + 1) / (N+ + 2) for the positives and t- = 1 / (N- + 2) for the
  negatives, as scikit-learn's `_sigmoid_calibration` does (it writes
  p = 1 / (1 + exp(A s + B)): a = -A, b = -B). The targets never reach 0 or
  1, so (a, b) is finite even when the held-out scores separate the classes.
- isotonic: p = f(s) with f the non-decreasing least-squares fit of the
  0/1 truths (scikit-learn's IsotonicRegression(out_of_bounds="clip")):
  equal scores are pooled first (their mean truth, weighted by count; like
  scikit-learn, a score less than 1e-15 above the first of its run counts
  as equal to it, which matters for log-probabilities near 0), then
  pool-adjacent-violators; the table of thresholds (x, y) keeps the first
  and last point of every run of equal y. f interpolates linearly between
  thresholds and is constant (clipped) outside [x_0, x_last]. The stored
  table equals scikit-learn's. `apply` then clips p into [eps, 1 - eps],
  eps = 1 / (documents + 2) (the rule of succession: a score region where
  none of the held-out documents was wrong still gets the chance of one
  more document being wrong), so no output is log 0 and a log loss stays
  finite; z = logit(p).
Several classes (C >= 3):
- temperature: p = softmax(log_proba / T) (shift-invariant per row, so
  log-posteriors and joint log-likelihoods give the same result).
- platt, isotonic: one map per class c, fitted one-vs-rest on the score
  log_proba[:, c] with target truth == c; the C calibrated values are then
  divided by their sum (scikit-learn's CalibratedClassifierCV; uniform where
  the sum is 0, which the isotonic clip rules out in `apply`).

Fitting.
- temperature minimises the held-out mean negative log-likelihood over
  beta = 1 / T. It is convex in beta, its derivative is
  mean_i (sum_c p_ic x_ic - x_i,truth_i) (x = floored log_proba,
  p = softmax(beta x)), non-decreasing; its root is found by Brent's method
  (scipy) to float precision. beta is bounded to [1 / MAX_TEMPERATURE,
  1 / MIN_TEMPERATURE] = [1e-6, 1e3]: when the held-out rows are all
  confidently right the optimum is T -> 0, and T = 1e-3 is returned instead;
  scores carrying no information give T = 1e6 (all but uniform).
- platt minimises its convex two-parameter loss by Newton's method with
  backtracking (Armijo) on the standardised score, until the Newton
  decrement g' H^-1 g falls below 1e-16 (twice the loss decrease still to
  come, below the loss's rounding; quadratic convergence then leaves the
  gradient at rounding level) and one last full Newton step is taken.

Increasing maps only. A calibration map must increase with the model's
score: a map that falls turns the model upside down (a platt fit on six
documents the model got wrong has a < 0, and took a spam filter's ROC AUC
from 0.88 to 0.12), and a flat one gives every document the same
probability. `fit_increasing` (what `nbcli calibrate` and `train
--calibrate` use) refuses such a map with `NotIncreasing`, naming it:
- temperature: increasing for every T > 0, but a held-out set that ranks
  against the model (or carries no information) drives T to its bound
  MAX_TEMPERATURE, where every probability is all but 1/C: that map is
  refused as flat;
- platt: the slope a of every map (each class's, for several classes) must
  be > 0; a = 0 (one score for every document) is flat;
- isotonic: non-decreasing by construction; every map must rise somewhere
  (last y > first y), a map that never rises is flat.
`fit` itself fits any map (the oracle tests compare it to scikit-learn's,
which has no such rule); a model file with a falling map still loads, and
`info` says the map reverses the ranking. How many documents a map needs
is the callers' rule: `nbcli calibrate` refuses fewer than
`defaults.MIN_CALIBRATION_PER_CLASS` (20) of some class, and leaves out
the documents the model's record shows it learned; `train`'s default map
needs as many, a method asked for (`--calibrate METHOD`) two.

`keeps_ranking`: temperature and platt with a > 0 are increasing maps of
the binary log-odds, so they keep the order of documents and the ROC AUC.
Isotonic ties scores (flat steps), and the several-class normalisation of
platt can reorder documents, so those are False. Several-class temperature
keeps each document's predicted class but not the per-class orders
(softmax(x / T)_c is not a function of x_c alone), so it is False too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from nbcli.errors import NbcliError, ParameterError
from nbcli.nb.logmath import log_softmax

METHODS = ("temperature", "platt", "isotonic")
LOG_FLOOR = -1e6
MIN_TEMPERATURE = 1e-3
MAX_TEMPERATURE = 1e6
_TIE = float(np.finfo(np.float64).resolution)  # 1e-15, scikit-learn's isotonic tie tolerance

_DAMAGED_HINT = "train the model again, or refit its calibration"


def _damaged(what: str) -> NbcliError:
    return NbcliError(f"the model's calibration is damaged: {what}", hint=_DAMAGED_HINT)


def _log_proba(values, n_classes: int | None = None) -> np.ndarray:
    """Rows normalised in log space and floored at LOG_FLOOR, shape (n, C)."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2 or x.shape[1] < 2:
        raise NbcliError(f"log-probabilities of shape {x.shape}", hint="give one row of C >= 2 values per document")
    if n_classes is not None and x.shape[1] != n_classes:
        raise NbcliError(
            f"log-probabilities for {x.shape[1]} classes, the calibration has {n_classes}",
            hint="calibrate with the same model's classes",
        )
    if np.isnan(x).any() or np.isposinf(x).any():
        raise NbcliError("a log-probability is NaN or +inf", hint="give finite log-probabilities (-inf is allowed)")
    if len(x) and not np.isfinite(x).any(axis=1).all():
        raise NbcliError("a document's log-probabilities are all -inf", hint="give at least one finite value per row")
    return np.maximum(log_softmax(x), LOG_FLOOR)


def _binary_output(z: np.ndarray) -> np.ndarray:
    """[log sigmoid(-z), log sigmoid(z)] per row."""
    return np.stack([-np.logaddexp(0.0, z), -np.logaddexp(0.0, -z)], axis=1)


def _normalise_log(log_p: np.ndarray) -> np.ndarray:
    """Rows of log p (finite) divided by their sums, in log space."""
    top = log_p.max(axis=1, keepdims=True)
    return log_p - (top + np.log(np.exp(log_p - top).sum(axis=1, keepdims=True)))


# ---- temperature


def _temperature_slope(beta: float, x: np.ndarray, truth: np.ndarray) -> float:
    """d/dbeta of the mean NLL of softmax(beta x): mean_i (E_p[x_i] - x_i,truth_i)."""
    p = np.exp(log_softmax(beta * x))
    return float(np.mean((p * x).sum(axis=1) - x[np.arange(len(x)), truth]))


def _fit_temperature(x: np.ndarray, truth: np.ndarray) -> float:
    """T minimising the held-out NLL of softmax(x / T), within the bounds."""
    from scipy.optimize import brentq

    low, high = 1.0 / MAX_TEMPERATURE, 1.0 / MIN_TEMPERATURE
    if _temperature_slope(low, x, truth) >= 0.0:
        return MAX_TEMPERATURE
    if _temperature_slope(high, x, truth) <= 0.0:
        return MIN_TEMPERATURE
    beta = brentq(
        _temperature_slope, low, high, args=(x, truth), xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500
    )
    return 1.0 / beta


# ---- platt


def _platt_loss(params: np.ndarray, u: np.ndarray, target: np.ndarray) -> float:
    z = params[0] * u + params[1]
    return float(np.mean(np.logaddexp(0.0, z) - target * z))


def _fit_platt(s: np.ndarray, positive: np.ndarray) -> tuple[float, float]:
    """(a, b) minimising the log loss of sigmoid(a s + b) against Platt's
    smoothed targets."""
    n_pos = float(positive.sum())
    n_neg = len(positive) - n_pos
    target = np.where(positive, (n_pos + 1.0) / (n_pos + 2.0), 1.0 / (n_neg + 2.0))
    centre, spread = float(s.mean()), float(s.std())
    if not spread > 0.0:  # one score for every document: no slope to fit
        mean = float(target.mean())
        return 0.0, math.log(mean / (1.0 - mean))
    u = (s - centre) / spread  # Newton is affine-invariant; this only conditions the 2x2 solve
    params = np.array([0.0, math.log((n_pos + 1.0) / (n_neg + 1.0))])
    loss = _platt_loss(params, u, target)
    for _ in range(100):
        z = params[0] * u + params[1]
        p = np.exp(-np.logaddexp(0.0, -z))
        w = np.exp(-np.logaddexp(0.0, -z) - np.logaddexp(0.0, z))  # p (1 - p) without cancellation
        r = p - target
        grad = np.array([np.mean(r * u), np.mean(r)])
        hess = np.array([[np.mean(w * u * u), np.mean(w * u)], [np.mean(w * u), np.mean(w)]])
        try:
            step = np.linalg.solve(hess, grad)
        except np.linalg.LinAlgError:
            step = grad
        decrement = float(grad @ step)
        if not decrement > 0.0:
            break
        if decrement < 1e-16:  # the loss would fall by less than its rounding: one last full step
            params = params - step
            break
        size = 1.0
        while size > 1e-12:
            trial = params - size * step
            trial_loss = _platt_loss(trial, u, target)
            if trial_loss <= loss - 1e-4 * size * decrement:
                break
            size /= 2.0
        else:
            break
        params, loss = trial, trial_loss
    a = params[0] / spread
    return float(a), float(params[1] - a * centre)


# ---- isotonic


def _pav(y: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """The non-decreasing sequence closest to y in weighted least squares
    (pool adjacent violators)."""
    means: list[float] = []
    weights: list[float] = []
    sizes: list[int] = []
    for value, w in zip(y.tolist(), weight.tolist()):
        means.append(value)
        weights.append(w)
        sizes.append(1)
        while len(means) > 1 and means[-2] >= means[-1]:
            w_last, w_prev = weights.pop(), weights[-1]
            m_last = means.pop()
            total = w_prev + w_last
            means[-1] = (means[-1] * w_prev + m_last * w_last) / total
            weights[-1] = total
            size_last = sizes.pop()
            sizes[-1] += size_last
    return np.repeat(np.array(means, dtype=np.float64), sizes)


def _fit_isotonic(s: np.ndarray, positive: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Thresholds (x, y) of the isotonic fit of positive on s."""
    x, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    if len(x) > 1 and np.diff(x).min() < _TIE:
        # scikit-learn pools a score with the first score of its run when less than 1e-15 above it
        group = np.empty(len(x), dtype=np.int64)
        start, g = x[0], 0
        for i, value in enumerate(x.tolist()):
            if value - start >= _TIE:
                start, g = value, g + 1
            group[i] = g
        first = np.r_[0, np.flatnonzero(np.diff(group)) + 1]
        x, inverse = x[first], group[inverse]
        counts = np.bincount(inverse)
    mean = np.bincount(inverse, weights=positive.astype(np.float64), minlength=len(x)) / counts
    y = _pav(mean, counts.astype(np.float64))
    keep = np.ones(len(y), dtype=bool)
    keep[1:-1] = (y[1:-1] != y[:-2]) | (y[1:-1] != y[2:])
    return x[keep], y[keep]


# ---- the map


def _binary(n_classes: int) -> bool:
    return n_classes == 2


@dataclass(frozen=True, eq=False)
class Calibration:
    """A fitted calibration map (see the module docstring).

    params by method, k = 1 for two classes, else k = C:
    temperature: {"temperature": (1,)}; platt: {"a": (k,), "b": (k,)};
    isotonic: {"x": (m,), "y": (m,), "offsets": int64 (k + 1,)}, map j's
    thresholds being x[offsets[j]:offsets[j + 1]], y[...].
    documents: how many held-out rows it was fitted on.
    """

    method: str
    n_classes: int
    params: dict
    documents: int

    def __eq__(self, other) -> bool:
        if not isinstance(other, Calibration):
            return NotImplemented
        return (
            (self.method, self.n_classes, self.documents) == (other.method, other.n_classes, other.documents)
            and self.params.keys() == other.params.keys()
            and all(np.array_equal(self.params[k], other.params[k]) for k in self.params)
        )

    __hash__ = None  # type: ignore[assignment]  # unhashable: eq compares arrays (the data model's way, which typeshed types as a method)

    def apply(self, log_proba: np.ndarray) -> np.ndarray:
        """Raw log-probabilities (n, C) -> calibrated ones (n, C), finite,
        each row logsumexp-ing to 0."""
        return self._apply(log_proba, clip=True)

    def _apply(self, log_proba: np.ndarray, clip: bool) -> np.ndarray:
        x = _log_proba(log_proba, self.n_classes)
        binary = _binary(self.n_classes)
        if self.method == "temperature":
            return log_softmax(x / float(self.params["temperature"][0]))
        scores = (x[:, 1] - x[:, 0])[:, None] if binary else x
        if self.method == "platt":
            z = scores * self.params["a"] + self.params["b"]
            return _binary_output(z[:, 0]) if binary else _normalise_log(-np.logaddexp(0.0, -z))
        return self._isotonic(scores, clip)

    def _isotonic(self, scores: np.ndarray, clip: bool) -> np.ndarray:
        """Isotonic output; clip=False gives scikit-learn's probabilities
        exactly (then log 0 = -inf may occur)."""
        xs, ys, offsets = self.params["x"], self.params["y"], self.params["offsets"]
        p = np.empty(scores.shape)
        for j in range(scores.shape[1]):
            part = slice(offsets[j], offsets[j + 1])
            p[:, j] = np.interp(scores[:, j], xs[part], ys[part])
        if clip:
            eps = 1.0 / (self.documents + 2.0)
            p = np.clip(p, eps, 1.0 - eps)
        with np.errstate(divide="ignore"):
            if _binary(self.n_classes):
                return np.stack([np.log1p(-p[:, 0]), np.log(p[:, 0])], axis=1)
            total = p.sum(axis=1, keepdims=True)
            p = np.divide(p, total, out=np.full_like(p, 1.0 / self.n_classes), where=total > 0)
            return np.log(p)

    def state(self) -> dict:
        """{"method", "n_classes", "documents", "params": {name: array}}, plain
        values for the model file."""
        return {
            "method": self.method,
            "n_classes": self.n_classes,
            "documents": self.documents,
            "params": {name: np.array(value) for name, value in self.params.items()},
        }

    @classmethod
    def from_state(cls, state: dict, n_classes: int) -> Calibration:
        """The Calibration saved by `state`, for a model of n_classes classes;
        NbcliError when anything in it is missing, malformed or inconsistent."""
        if not isinstance(state, dict) or set(state) != {"method", "n_classes", "documents", "params"}:
            raise _damaged("its entries are not method, n_classes, documents, params")
        method = state["method"]
        if method not in METHODS:
            raise _damaged(f"unknown method {method!r}")
        stored = state["n_classes"]
        if isinstance(stored, bool) or not isinstance(stored, int | np.integer) or stored != n_classes:
            raise _damaged(f"it is for {stored!r} classes, the model has {n_classes}")
        documents = state["documents"]
        if isinstance(documents, bool) or not isinstance(documents, int | np.integer) or documents < n_classes:
            raise _damaged(f"documents is {documents!r}")
        raw = state["params"]
        expected = {"temperature": {"temperature"}, "platt": {"a", "b"}, "isotonic": {"x", "y", "offsets"}}[method]
        if not isinstance(raw, dict) or set(raw) != expected:
            raise _damaged(f"{method} needs parameters {', '.join(sorted(expected))}")
        k = 1 if _binary(n_classes) else n_classes
        params = {}
        for name, value in raw.items():
            array = np.asarray(value)
            integer = name == "offsets"
            kinds = "iu" if integer else "fiu"
            if array.ndim != 1 or array.dtype.kind not in kinds:
                raise _damaged(f"{name} is not a vector of {'integers' if integer else 'numbers'}")
            params[name] = array.astype(np.int64 if integer else np.float64)
            if not integer and not np.isfinite(params[name]).all():
                raise _damaged(f"{name} is not finite")
        if method == "temperature":
            if params["temperature"].shape != (1,):
                raise _damaged("temperature is not one number")
            t = float(params["temperature"][0])
            if not t > 0.0:
                raise _damaged(f"temperature {t} is not positive")
            if not MIN_TEMPERATURE <= t <= MAX_TEMPERATURE:
                raise _damaged(f"temperature {t} is outside [{MIN_TEMPERATURE:g}, {MAX_TEMPERATURE:g}]")
        elif method == "platt":
            for name in ("a", "b"):
                if params[name].shape != (k,):
                    raise _damaged(f"{name} has {len(params[name])} values, not {k}")
        else:
            _check_isotonic(params["x"], params["y"], params["offsets"], k)
        return cls(method=method, n_classes=n_classes, params=params, documents=int(documents))

    def describe(self) -> str:
        """One line: "temperature 3.74", "platt a=0.41 b=-0.3" or
        "isotonic, 37 steps" (the number of thresholds); several classes
        give one value per class, joined by "/"."""

        def values(name: str) -> str:
            return "/".join(f"{v:.3g}" for v in self.params[name])

        if self.method == "temperature":
            return f"temperature {values('temperature')}"
        if self.method == "platt":
            return f"platt a={values('a')} b={values('b')}"
        steps = "/".join(str(int(n)) for n in np.diff(self.params["offsets"]))
        return f"isotonic, {steps} steps"

    def not_increasing(self, classes: list[str] | None = None) -> str | None:
        """Why the map does not increase with the model's score, naming the
        class of the map (`classes`); None when it does."""
        return _not_increasing(self, classes)

    @property
    def keeps_ranking(self) -> bool:
        """True when the calibrated binary log-odds order documents as the
        raw ones do (ROC AUC unchanged): two-class temperature, and two-class
        platt with a > 0."""
        if not _binary(self.n_classes):
            return False
        if self.method == "temperature":
            return True
        return self.method == "platt" and bool(self.params["a"][0] > 0.0)


RANKS_AGAINST = "rank against the model"  # in every NotIncreasing message


class NotIncreasing(NbcliError):
    """A fitted map that does not increase with the model's score."""


def _not_increasing(cal: Calibration, classes: list[str] | None) -> str | None:
    """Why the map does not increase with the model's score (None: it does)."""

    def which(j: int) -> str:
        if _binary(cal.n_classes):
            return ""
        return f" of class {classes[j] if classes else j}"

    if cal.method == "temperature":
        if cal.params["temperature"][0] >= MAX_TEMPERATURE:
            return f"the temperature map is flat (T = {MAX_TEMPERATURE:g}, its bound): every probability would be 1/C"
    elif cal.method == "platt":
        for j, a in enumerate(cal.params["a"].tolist()):
            if not a > 0.0:
                return f"the platt map{which(j)} has slope a = {a:.3g}, not positive: it would reverse the ranking"
    elif cal.method == "isotonic":
        ys, offsets = cal.params["y"], cal.params["offsets"]
        for j in range(len(offsets) - 1):
            if not ys[offsets[j + 1] - 1] > ys[offsets[j]]:
                return f"the isotonic map{which(j)} is flat: it would give every document the same probability"
    return None


_HELDOUT_HINT = "calibrate on a random sample of new labelled documents of every class, not on the model's mistakes"


def fit_increasing(
    method: str,
    log_proba: np.ndarray,
    truth: np.ndarray,
    classes: list[str] | None = None,
    source: str = "the held-out documents",
    hint: str = _HELDOUT_HINT,
) -> Calibration:
    """`fit`, refusing (NotIncreasing, saying that `source` ranks against the
    model) a map that does not increase with the model's score (see
    "Increasing maps only"); classes name the maps."""
    cal = fit(method, log_proba, truth)
    problem = _not_increasing(cal, classes)
    if problem is not None:
        raise NotIncreasing(f"{source} {RANKS_AGAINST}: {problem}", hint=hint)
    return cal


def fit_cross_validated(
    method: str, log_proba: np.ndarray, truth: np.ndarray, classes: list[str], strict: bool
) -> tuple[Calibration | None, str | None]:
    """`train --calibrate`'s map, on cross-validation scores: (the map, None),
    or for a map that would not increase (None, why), which `strict` (the
    method was asked for) makes an NbcliError instead."""
    try:
        return fit_increasing(method, log_proba, truth, classes, "the corpus's own documents, cross-validated,"), None
    except NotIncreasing as exc:
        if strict:
            raise ParameterError(
                "calibrate",
                "cannot calibrate by cross-validation: {why}",
                hint="train with {calibrate:none}, then fit a map on other documents: nbcli calibrate MODEL HELDOUT",
                why=exc.message,
            ) from None
        return None, exc.message


def _check_isotonic(x: np.ndarray, y: np.ndarray, offsets: np.ndarray, k: int) -> None:
    if len(x) != len(y):
        raise _damaged(f"isotonic x has {len(x)} values and y {len(y)}")
    if len(offsets) != k + 1 or offsets[0] != 0 or offsets[-1] != len(x) or np.any(np.diff(offsets) < 1):
        raise _damaged(f"isotonic offsets {offsets.tolist()} do not cut the table into {k} non-empty maps")
    for j in range(k):
        part = slice(offsets[j], offsets[j + 1])
        if np.any(np.diff(x[part]) <= 0.0):
            raise _damaged("isotonic x is not increasing")
        if np.any(np.diff(y[part]) < 0.0):
            raise _damaged("isotonic y is decreasing")
    if np.any(y < 0.0) or np.any(y > 1.0):
        raise _damaged("isotonic y is outside [0, 1]")


def fit(method: str, log_proba: np.ndarray, truth: np.ndarray) -> Calibration:
    """The `method` map fitted on held-out raw log-probabilities (n, C) and
    their true class indices (n,), 0..C-1; every class must be present."""
    if method not in METHODS:
        raise NbcliError(f"unknown calibration method {method!r}", hint=f"use one of {', '.join(METHODS)}")
    x = _log_proba(log_proba)
    n, n_classes = x.shape
    truth = np.asarray(truth)
    if truth.shape != (n,):
        raise NbcliError(f"truths of shape {truth.shape} for {n} documents", hint="give one class index per row")
    if n == 0:
        raise NbcliError("no held-out documents to calibrate on", hint="hold out some labelled documents")
    if truth.dtype.kind not in "iu":
        if truth.dtype.kind != "f" or np.isnan(truth).any() or np.any(truth != np.round(truth)):
            raise NbcliError("a true class is not a class index", hint=f"give integers 0..{n_classes - 1}")
    truth = truth.astype(np.int64)
    if truth.min() < 0 or truth.max() >= n_classes:
        raise NbcliError("a true class is out of range", hint=f"give integers 0..{n_classes - 1}")
    missing = np.flatnonzero(np.bincount(truth, minlength=n_classes) == 0)
    if len(missing):
        raise NbcliError(
            f"class {int(missing[0])} never occurs among the held-out documents",
            hint="hold out more documents, so that every class is present",
        )
    binary = _binary(n_classes)
    if method == "temperature":
        params = {"temperature": np.array([_fit_temperature(x, truth)])}
    else:
        scores = [x[:, 1] - x[:, 0]] if binary else [x[:, c] for c in range(n_classes)]
        positives = [truth == 1] if binary else [truth == c for c in range(n_classes)]
        if method == "platt":
            ab = np.array([_fit_platt(s, pos) for s, pos in zip(scores, positives)])
            params = {"a": ab[:, 0].copy(), "b": ab[:, 1].copy()}
        else:
            tables = [_fit_isotonic(s, pos) for s, pos in zip(scores, positives)]
            params = {
                "x": np.concatenate([t[0] for t in tables]),
                "y": np.concatenate([t[1] for t in tables]),
                "offsets": np.concatenate([[0], np.cumsum([len(t[0]) for t in tables])]).astype(np.int64),
            }
    return Calibration(method=method, n_classes=n_classes, params=params, documents=n)


# A calibration is stale once the model's documents differ by this share
# from those it had when the calibration was fitted (see `calibration_note`).
STALE_SHARE = 0.1


def documents_per_class(class_count) -> list[int]:
    """A model's documents per class, as its meta notes them when a map or
    threshold is fitted (rounded: an EM model's are expected counts)."""
    return [int(round(float(n))) for n in class_count]


def _moved(then: int, now: int, then_per_class=None, now_per_class=None) -> bool:
    """Whether the model's documents differ by STALE_SHARE or more from then:
    in number, or in number per class, half the sum of the per-class
    changes (a document moved from one class to another is one that
    differs: 80 moves of 525 left the number as it was, and the map was not
    called stale). A map noted without its per-class counts (before
    2026-11-27) is judged by the number alone."""
    changed = abs(now - then)
    if then_per_class is not None and len(then_per_class) == len(now_per_class):
        changed = max(changed, sum(abs(a - b) for a, b in zip(then_per_class, now_per_class)) / 2)
    return changed >= max(STALE_SHARE * then, 1)


def calibration_note(classifier, path: str) -> str | None:
    """What to say after an update of a model whose calibration is stale
    (fitted when the model had documents differing by STALE_SHARE or more
    from those it has now) or was dropped; None when there is nothing to say."""
    fitted = classifier.meta.get("calibration") or {}
    if fitted.get("dropped"):
        return f"{path} is no longer calibrated ({fitted['dropped']}); fit one: nbcli calibrate {path} HELDOUT"
    if classifier.calibration is None or "model_documents" not in fitted:
        return None
    then, now = fitted["model_documents"], int(classifier.model.class_count.sum())
    if not _moved(then, now, fitted.get("class_documents"), documents_per_class(classifier.model.class_count)):
        return None
    return (
        f"{path}'s calibration is stale: it was fitted when the model had {then} documents, and it has {now}; "
        f"refit it on held-out mail: nbcli calibrate {path} HELDOUT (or train again)"
    )


def calibration_stale(classifier) -> bool:
    """Whether `calibration_note` would call the calibration stale."""
    return calibration_note(classifier, "") is not None and classifier.calibration is not None


def decision_note(classifier, path: str) -> str | None:
    """What to say after an update of a model whose decision threshold
    (`train --decide`, meta "decision") is stale by the calibration's rule
    (chosen when the model had documents differing by STALE_SHARE or more
    from those it has now); None when there is nothing to say."""
    decision = classifier.meta.get("decision") or {}
    then, now = decision.get("model_documents"), int(classifier.model.class_count.sum())
    per_class = documents_per_class(classifier.model.class_count)
    if then is None or not _moved(then, now, decision.get("class_documents"), per_class):
        return None
    return (
        f"{path}'s decision threshold is stale: it was chosen when the model had {then} documents, and it has "
        f"{now}; refit it with the map: nbcli calibrate {path} HELDOUT (or train again)"
    )
