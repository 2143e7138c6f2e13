"""click's parameter types of the command line's options: sizes (512K, 16M),
document frequencies (a count or a proportion) and METRIC=V limits.

A support module (light at import: the library is imported inside `convert`
where it is needed).
"""

from __future__ import annotations

import math

import click

from nbcli.errors import NbcliError


class FloatRange(click.FloatRange):
    """click's FloatRange, refusing NaN too: every comparison with NaN is
    false, so click's let 'nan' through every bound (a --spam-cutoff of nan
    called every message unsure); and infinity, which no option means."""

    def convert(self, value, param, ctx):
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return number


class ByteSize(click.ParamType):
    name = "SIZE"

    def __init__(self, maximum: int | None = None):
        self.maximum = maximum

    def convert(self, value, param, ctx):
        if isinstance(value, int):
            return value
        text = str(value).strip().upper().removesuffix("B")
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1:], 1)
        digits = text[:-1] if scale > 1 else text
        try:
            size = int(float(digits) * scale)
        except (ValueError, OverflowError):  # OverflowError: inf, or 1e400
            self.fail(f"{value!r} is not a size such as 512K, 16M or 1G", param, ctx)
        if size < 1:
            self.fail(f"{value!r} must be at least 1 byte", param, ctx)
        if self.maximum is not None and size > self.maximum:
            self.fail(f"{value!r} is more than the largest allowed, {self.maximum >> 20}M", param, ctx)
        return size


class DocFrequency(click.ParamType):
    """An int (a number of documents) or a float in [0, 1] (a proportion)."""

    name = "N|F"

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)):
            return value
        text = str(value).strip()
        try:
            if text.isdigit():
                return int(text)
            number = float(text)
        except ValueError:
            self.fail(f"{value!r} is neither a document count nor a proportion", param, ctx)
        if not 0.0 <= number <= 1.0:
            self.fail(f"{value!r}: a proportion must lie between 0.0 and 1.0", param, ctx)
        return number


class Limit(click.ParamType):
    """METRIC=VALUE for --fail-under / --fail-over."""

    name = "METRIC=V"

    def convert(self, value, param, ctx):
        from nbcli.evaluate.report import parse_limit

        if isinstance(value, tuple):
            return value
        try:
            return parse_limit(value)
        except NbcliError as exc:
            self.fail(str(exc), param, ctx)
