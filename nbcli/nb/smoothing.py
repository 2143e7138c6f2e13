"""Pseudo-counts, priors and Dirichlet estimates: the checks and formulas the
event models (`event_models`), the table models (`tables`) and EM (`em`)
share, kept in this leaf so none of them imports another.

Smoothing (see `dirichlet_log_estimate`): each class's distribution gets a
Dirichlet(beta) prior, beta = alpha in every cell by default, or beta = M P
for the m-estimate; the estimate is the posterior mean (N + beta) / (T +
sum beta) or the MAP estimate (N + beta - 1) / (T + sum(beta - 1)). The
class prior pi_c is fitted ((N_c + A) / (N + A C), A the prior's own
pseudo-count), uniform, or given as weights (`log_prior`).

Errors name the Python parameter (`errors.ParameterError`); the command
line renders them as its flags.
"""

from __future__ import annotations

import math

import numpy as np

from nbcli.errors import ParameterError

ESTIMATES = ("mean", "map")
# The largest pseudo-count (--alpha, --prior-alpha, M of --m-estimate) and
# prior weight accepted, by training and in a model file alike: far beyond
# any corpus's counts (it would drown them), and small enough that the
# sums over a vocabulary stay finite (alpha = 1e308 overflowed to inf).
MAX_PSEUDO_COUNT = 1e12


def parse_prior(spec: str) -> str | dict[str, float]:
    """'fit', 'uniform' or 'CLASS=WEIGHT,...' (weights are normalised)."""
    spec = spec.strip()
    if spec in ("fit", "uniform"):
        return spec
    weights: dict[str, float] = {}
    for part in spec.split(","):
        name, eq, value = part.partition("=")
        name = name.strip()
        try:
            w = float(value)
        except ValueError:
            w = float("nan")
        if not eq or not name or not (0 < w <= MAX_PSEUDO_COUNT):
            raise ParameterError(
                "prior",
                "{prior} {spec!r} is not valid",
                hint="use 'fit', 'uniform' or CLASS=WEIGHT pairs such as 'spam=0.4,ham=0.6'",
                spec=spec,
            )
        if name in weights:
            raise ParameterError("prior", "{prior} names class {name!r} twice", name=name)
        weights[name] = w
    return weights


def log_prior(class_count: np.ndarray, classes: list[str], prior, prior_alpha: float | None = None) -> np.ndarray:
    """log pi_c for prior 'fit' ((N_c + A) / (N + A C), A = prior_alpha or
    0), 'uniform' or {class: weight}."""
    n = len(classes)
    if prior == "fit":
        counts = np.asarray(class_count, dtype=np.float64) + (prior_alpha or 0.0)
        with np.errstate(divide="ignore"):
            return np.log(counts) - np.log(counts.sum())
    check_prior_smoothing(prior, prior_alpha)
    if prior == "uniform":
        return np.full(n, -np.log(n))
    missing = [c for c in classes if c not in prior]
    unknown = [c for c in prior if c not in classes]
    if missing or unknown:
        what = f"has no weight for {', '.join(missing)}" if missing else f"names unknown class {', '.join(unknown)}"
        raise ParameterError(
            "prior",
            "{prior} {what}",
            hint="give a weight for each of the classes: {classes}",
            what=what,
            classes=", ".join(classes),
        )
    w = np.array([prior[c] for c in classes], dtype=np.float64)
    return np.log(w) - np.log(w.sum())


def _finite(value) -> bool:
    """value is a finite number (not a bool, None or text; an int of any size)."""
    number = isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool)
    return number and bool(-math.inf < value < math.inf)


def check_alpha(alpha: float) -> float:
    """The pseudo-count alpha (of an event model, EM or a mixture), checked:
    0 < alpha <= MAX_PSEUDO_COUNT."""
    if _finite(alpha) and alpha > MAX_PSEUDO_COUNT:
        raise ParameterError(
            "alpha",
            "{alpha} must be at most {most:g}, not {value}",
            hint="a pseudo-count that large drowns every count",
            most=MAX_PSEUDO_COUNT,
            value=alpha,
        )
    if not (_finite(alpha) and alpha > 0):
        raise ParameterError(
            "alpha",
            "{alpha} must be a positive number, not {value}",
            hint="alpha = 0 would give unseen terms probability zero; use a small value such as 0.01",
            value=alpha,
        )
    return float(alpha)


def check_prior_alpha(value: float | None) -> float | None:
    if value is not None and not (_finite(value) and 0 <= value <= MAX_PSEUDO_COUNT):
        raise ParameterError(
            "prior_alpha",
            "{prior_alpha} must be a number from 0 to {most:g}, not {value}",
            most=MAX_PSEUDO_COUNT,
            value=value,
        )
    return None if value is None else float(value)


def check_prior_smoothing(prior, prior_alpha: float | None) -> None:
    """A prior pseudo-count smooths only a fitted prior (prior None is
    training's default, which is 'fit' unless the model says otherwise)."""
    if prior_alpha is not None and prior not in (None, "fit"):
        raise ParameterError(
            "prior_alpha", "{prior_alpha} smooths the fitted prior", hint="drop it, or use {prior:fit}"
        )


def parse_m_estimate(spec: str) -> tuple[float, float | None]:
    """'M' or 'M,P' -> (M, P or None); M > 0, 0 < P < 1."""
    m_text, _, p_text = str(spec).partition(",")
    try:
        m = float(m_text)
        p = float(p_text) if p_text.strip() else None
    except ValueError:
        m, p = float("nan"), None
    if not (np.isfinite(m) and 0 < m <= MAX_PSEUDO_COUNT) or (p is not None and not (0 < p < 1)):
        raise ParameterError(
            "m_estimate",
            "{m_estimate} {spec!r} is not valid",
            hint="give M > 0, or M,P with 0 < P < 1, such as 2 or 8,0.625",
            spec=spec,
        )
    return m, p


def dirichlet_log_estimate(counts: np.ndarray, beta, estimate: str = "mean") -> np.ndarray:
    """log of the estimated category probabilities of a categorical
    distribution with a Dirichlet(beta) prior, after observing `counts`.

    counts: (..., K) observations of each of K categories (the last axis);
    beta: the prior's parameters, a scalar (symmetric) or (K,).
    estimate 'mean': the posterior mean (N_k + beta_k) / (T + sum beta);
    'map': the posterior mode (N_k + beta_k - 1) / (T + sum(beta - 1)),
    which must be positive in every cell, else NbcliError.
    E.g. Beta(5, 3) and observations t, f, f: counts (1, 2), beta (5, 3):
    mean 6/11, MAP 5/9.
    """
    counts = np.asarray(counts, dtype=np.float64)
    pseudo = np.broadcast_to(np.asarray(beta, dtype=np.float64), counts.shape[-1:])
    smoothed = _smoothed(counts, pseudo - 1.0 if estimate == "map" else pseudo, estimate)
    return np.log(smoothed) - np.log(smoothed.sum(axis=-1, keepdims=True))


# The fixed-point unit of complement's transformed sums (fit.exact_sums
# rounds them to multiples of 1 / SUM_SCALE): what makes their totals exact.
SUM_SCALE = float(1 << 36)
_TOTALS_CHUNK = 1 << 18  # columns summed at a time


class ExactTotals:
    """Row sums of a count table, exact, whatever the order of the additions:
    integers (term counts), or for float tables (complement's transformed
    sums, on the 1 / SUM_SCALE grid: `fit.exact_sums`) integer multiples of
    1 / SUM_SCALE, each value rounded to the grid first. Kept as Python
    integers, so totals can be taken apart and put together (less some
    columns, plus others: `nb.overlay`) and still equal the sums over the
    whole table; `floats` rounds them once. The event models' normalisers
    are these totals, so a model derived whole and one scored a few columns
    at a time give the same floats."""

    def __init__(self, units: list[int], integral: bool):
        self.units = [int(u) for u in units]
        self.integral = integral

    @classmethod
    def of(cls, counts: np.ndarray, integral: bool | None = None) -> ExactTotals:
        """The row sums of counts (R, V); integral: in units of 1 (True) or of
        1 / SUM_SCALE (False); None: as the table's type is (integers, or
        not), the choice a table derived whole makes and parts of it follow."""
        counts = np.asarray(counts)
        if integral is None:
            integral = counts.dtype.kind in "iub"
        rows = counts.reshape(math.prod(counts.shape[:-1]), counts.shape[-1])  # (R, V); one row for (V,)
        sums = [0] * len(rows)
        for start in range(0, rows.shape[1], _TOTALS_CHUNK):  # a chunk at a time: small temporaries
            part = rows[:, start : start + _TOTALS_CHUNK]
            if integral:
                units = part.astype(np.int64, copy=False)
            else:
                units = np.rint(np.asarray(part, dtype=np.float64) * SUM_SCALE).astype(np.int64)
            high = (units >> 32).sum(axis=-1, dtype=np.int64)  # two halves: no int64 overflow in the sums
            low = (units & 0xFFFFFFFF).sum(axis=-1, dtype=np.int64)
            sums = [total + (int(h) << 32) + int(lo) for total, h, lo in zip(sums, high, low)]
        return cls(sums, integral)

    def minus(self, other: ExactTotals) -> ExactTotals:
        return ExactTotals([a - b for a, b in zip(self.units, other.units)], self.integral)

    def plus(self, other: ExactTotals) -> ExactTotals:
        return ExactTotals([a + b for a, b in zip(self.units, other.units)], self.integral)

    def complement(self) -> ExactTotals:
        """Each row's total of all the other rows (complement Naive Bayes)."""
        whole = sum(self.units)
        return ExactTotals([whole - u for u in self.units], self.integral)

    def floats(self) -> np.ndarray:
        scale = 1.0 if self.integral else SUM_SCALE
        return np.array([float(u) / scale for u in self.units], dtype=np.float64)


def pseudo_count(beta: float, estimate: str) -> float:
    """What an estimate adds to each count: beta (mean) or beta - 1 (MAP)."""
    check_estimate(estimate)
    return float(beta) - 1.0 if estimate == "map" else float(beta)


def log_estimate_columns(counts: np.ndarray, totals: np.ndarray, n_categories: int, beta: float, estimate: str):
    """`dirichlet_log_estimate` with a symmetric prior, for some of the
    categories only: counts (R, k), k of the n_categories categories of R
    distributions, whose counts over all categories are totals (R,). The
    normaliser is log(T + K a), a the pseudo-count (`pseudo_count`): from
    the total alone, so a few columns cost what they are (`nb.overlay`
    scores a message's terms so). The multinomial and complement models
    derive their whole tables this way too, with exact totals
    (`ExactTotals`), so both ways give the same floats."""
    counts = np.asarray(counts, dtype=np.float64)
    pseudo = pseudo_count(beta, estimate)
    smoothed = _smoothed(counts, pseudo, estimate)
    return np.log(smoothed) - np.log(np.asarray(totals, dtype=np.float64) + pseudo * n_categories)[:, None]


def _smoothed(counts: np.ndarray, pseudo, estimate: str) -> np.ndarray:
    """counts + pseudo (beta, or beta - 1 for MAP), which must be positive."""
    check_estimate(estimate)
    smoothed = counts + pseudo
    if not (smoothed > 0).all():
        raise ParameterError(
            "estimate",
            f"{{estimate:{estimate}}} is undefined here: with a prior pseudo-count of {{pseudo:g}}, "
            "a term never seen in a class would get probability <= 0 (N + a - 1 <= 0)",
            hint="use {alpha} (or M*P of {m_estimate}) above 1 with {estimate:map}",
            pseudo=float(np.min(pseudo)) + (estimate == "map"),
        )
    return smoothed


def check_estimate(estimate: str) -> str:
    if estimate not in ESTIMATES:
        raise ParameterError(
            "estimate", "{estimate} {value!r} is not one of {choices}", value=estimate, choices=", ".join(ESTIMATES)
        )
    return estimate


def check_m_estimate(m_estimate, kind: str) -> None:
    """An m-estimate's P is the prior probability that a term is present:
    only the bernoulli model has one per term; the others spread M over
    the |V| terms."""
    if m_estimate is not None and m_estimate[1] is not None and kind != "bernoulli":
        raise ParameterError(
            "m_estimate",
            "{m_estimate} M,P: a P is for {kind:bernoulli}",
            hint="the {model} model spreads M evenly over the |V| terms; give only M",
            model=kind,
        )
