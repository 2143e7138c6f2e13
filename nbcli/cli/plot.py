"""Pictures of an evaluation: the ROC curve of a spam model, the
confusion matrix of any model, or the learning curve of an online run.

SVG is written by hand (no dependency); PNG needs matplotlib, the optional
extra `nbcli-bayes[plot]`. The SVG builders are pure functions returning text.
"""

from __future__ import annotations

import math
from xml.sax.saxutils import escape

from nbcli.errors import NbcliError

FORMATS = (".svg", ".png")
_FONT = 'font-family="sans-serif" font-size="12"'
_TITLE = 'font-family="sans-serif" font-size="14"'


def check_path(path: str) -> str:
    """The image format of `path` from its suffix (.svg or .png)."""
    suffix = path[path.rfind(".") :].lower() if "." in path else ""
    if suffix not in FORMATS:
        raise NbcliError(f"--plot {path}: the file name must end in .svg or .png")
    return suffix[1:]


def _unit_square(size: float, pad: float):
    """(x, y, parts): the coordinate maps and the SVG start of a [0, 1] x
    [0, 1] plot: a grid every 0.1, labels every 0.2, the frame and the
    dashed diagonal (the ROC curve of chance, the line of perfect
    calibration)."""
    x = lambda v: pad + v * size  # noqa: E731
    y = lambda v: pad + (1 - v) * size  # noqa: E731
    parts = [_svg_head(size + 2 * pad, size + 2 * pad + 10)]
    for k in range(11):
        v = k / 10
        parts.append(f'<line x1="{x(v):.1f}" y1="{y(0):.1f}" x2="{x(v):.1f}" y2="{y(1):.1f}" stroke="#eee"/>')
        parts.append(f'<line x1="{x(0):.1f}" y1="{y(v):.1f}" x2="{x(1):.1f}" y2="{y(v):.1f}" stroke="#eee"/>')
        if k % 2 == 0:
            parts.append(f'<text x="{x(v):.1f}" y="{y(0) + 16:.1f}" text-anchor="middle" {_FONT}>{v:.1f}</text>')
            parts.append(f'<text x="{x(0) - 6:.1f}" y="{y(v) + 4:.1f}" text-anchor="end" {_FONT}>{v:.1f}</text>')
    parts.append(f'<rect x="{pad}" y="{pad}" width="{size}" height="{size}" fill="none" stroke="#333"/>')
    parts.append(f'<line x1="{x(0)}" y1="{y(0)}" x2="{x(1)}" y2="{y(1)}" stroke="#999" stroke-dasharray="4 4"/>')
    return x, y, parts


def roc_svg(fpr, tpr, auc: float | None, title: str) -> str:
    """An SVG ROC curve: false-positive rate across, true-positive rate up."""
    size, pad = 360, 50
    x, y, parts = _unit_square(size, pad)
    points = " ".join(f"{x(a):.2f},{y(b):.2f}" for a, b in zip(fpr, tpr))
    parts.append(f'<polyline points="{points}" fill="none" stroke="#c0392b" stroke-width="2"/>')
    label = title if auc is None else f"{title} (AUC {auc:.4f})"
    parts.append(f'<text x="{pad + size / 2}" y="{pad - 18}" text-anchor="middle" {_TITLE}>{escape(label)}</text>')
    parts.append(
        f'<text x="{pad + size / 2}" y="{y(0) + 36:.1f}" text-anchor="middle" {_FONT}>false-positive rate</text>'
    )
    parts.append(
        f'<text x="16" y="{pad + size / 2}" text-anchor="middle" {_FONT} transform="rotate(-90 16 '
        f'{pad + size / 2})">true-positive rate</text>'
    )
    return "\n".join(parts) + "\n</svg>\n"


def confusion_svg(labels: list[str], matrix: list[list[int]], title: str) -> str:
    """An SVG confusion matrix: rows true classes, columns predicted ones,
    each cell shaded by its share of the row."""
    n = len(labels)
    cell, left, top = 56, 20 + 8 * max(map(len, labels), default=1), 90
    width, height = left + n * cell + 20, top + n * cell + 40
    parts = [_svg_head(width, height)]
    parts.append(f'<text x="{width / 2}" y="20" text-anchor="middle" {_TITLE}>{escape(title)}</text>')
    parts.append(f'<text x="{left + n * cell / 2}" y="40" text-anchor="middle" {_FONT}>predicted class</text>')
    for i, row in enumerate(matrix):
        total = sum(row) or 1
        ty = top + i * cell
        parts.append(
            f'<text x="{left - 6}" y="{ty + cell / 2 + 4}" text-anchor="end" {_FONT}>{escape(labels[i])}</text>'
        )
        for j, count in enumerate(row):
            share = count / total
            shade = int(255 - 200 * share)
            colour = f"rgb({shade},{shade},255)"
            ink = "#fff" if share > 0.6 else "#000"
            parts.append(
                f'<rect x="{left + j * cell}" y="{ty}" width="{cell}" height="{cell}" fill="{colour}" stroke="#fff"/>'
            )
            parts.append(
                f'<text x="{left + j * cell + cell / 2}" y="{ty + cell / 2 + 4}" text-anchor="middle" '
                f'fill="{ink}" {_FONT}>{count}</text>'
            )
    for j, lab in enumerate(labels):
        parts.append(
            f'<text x="{left + j * cell + cell / 2}" y="{top - 8}" text-anchor="middle" {_FONT}>{escape(lab)}</text>'
        )
    parts.append(
        f'<text x="{left + n * cell / 2}" y="{top + n * cell + 24}" text-anchor="middle" {_FONT}>rows: true '
        "class</text>"
    )
    return "\n".join(parts) + "\n</svg>\n"


def _ticks(high: float, whole: bool = False) -> list[float]:
    """Round tick values from 0 to at least `high` (> 0), about five steps
    of 1, 2 or 5 times a power of ten; steps of at least 1 when `whole`."""
    raw = high / 5
    base = 10 ** math.floor(math.log10(raw))
    step = next(m * base for m in (1, 2, 5, 10) if m * base >= raw * (1 - 1e-9))
    step = max(step, 1) if whole else step
    return [i * step for i in range(math.ceil(high / step - 1e-9) + 1)]


def _tick_label(v: float) -> str:
    return f"{v:,.0f}" if v == int(v) else f"{v:g}"


def learning_curve_svg(seen, errors, title: str, rate=None, window: int | None = None) -> str:
    """An SVG learning curve of an online run: messages seen across,
    cumulative errors up (a solid red line, left axis); with `rate`, the
    windowed error rate % too (a dashed blue line, right axis), its window
    of `window` messages named in the axis label. One polyline point per
    sample, no point added."""
    width, height, left, top, w, h = 552, 360, 76, 56, 400, 240
    xs, ys = _ticks(max(max(seen, default=0), 1), True), _ticks(max(max(errors, default=0), 1), True)
    x = lambda v: left + v / xs[-1] * w  # noqa: E731
    y = lambda v: top + (1 - v / ys[-1]) * h  # noqa: E731
    parts = [_svg_head(width, height)]
    for v in xs:
        parts.append(f'<line x1="{x(v):.1f}" y1="{top}" x2="{x(v):.1f}" y2="{top + h}" stroke="#eee"/>')
        parts.append(f'<text x="{x(v):.1f}" y="{top + h + 16}" text-anchor="middle" {_FONT}>{_tick_label(v)}</text>')
    for v in ys:
        parts.append(f'<line x1="{left}" y1="{y(v):.1f}" x2="{left + w}" y2="{y(v):.1f}" stroke="#eee"/>')
        parts.append(f'<text x="{left - 6}" y="{y(v) + 4:.1f}" text-anchor="end" {_FONT}>{_tick_label(v)}</text>')
    parts.append(f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#333"/>')
    points = " ".join(f"{x(a):.2f},{y(b):.2f}" for a, b in zip(seen, errors))
    parts.append(f'<polyline id="errors" points="{points}" fill="none" stroke="#c0392b" stroke-width="2"/>')
    mid = top + h / 2
    parts.append(
        f'<text x="16" y="{mid}" text-anchor="middle" {_FONT} fill="#c0392b" transform="rotate(-90 16 {mid})">'
        "cumulative errors</text>"
    )
    if rate is not None:
        rs = _ticks(max(max(rate, default=0), 1))
        r = lambda v: top + (1 - v / rs[-1]) * h  # noqa: E731
        for v in rs:
            parts.append(
                f'<text x="{left + w + 6}" y="{r(v) + 4:.1f}" text-anchor="start" {_FONT}>{_tick_label(v)}</text>'
            )
        points = " ".join(f"{x(a):.2f},{r(b):.2f}" for a, b in zip(seen, rate))
        parts.append(
            f'<polyline id="rate" points="{points}" fill="none" stroke="#2c6fbb" stroke-width="1.5" '
            'stroke-dasharray="5 3"/>'
        )
        label = "error rate %" if window is None else f"error rate % (last {window:,} messages)"
        rx = width - 14
        parts.append(
            f'<text x="{rx}" y="{mid}" text-anchor="middle" {_FONT} fill="#2c6fbb" transform="rotate(90 {rx} {mid})">'
            f"{escape(label)}</text>"
        )
    parts.append(f'<text x="{left + w / 2}" y="{top - 24}" text-anchor="middle" {_TITLE}>{escape(title)}</text>')
    parts.append(f'<text x="{left + w / 2}" y="{top + h + 36}" text-anchor="middle" {_FONT}>messages seen</text>')
    return "\n".join(parts) + "\n</svg>\n"


def _svg_head(width: float, height: float) -> str:
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height:.0f}" '
        f'viewBox="0 0 {width:.0f} {height:.0f}">\n<rect width="100%" height="100%" fill="#fff"/>'
    )


def png(figure: dict, path: str) -> None:
    """Write a figure (see `evaluation.figure`) as PNG with matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise NbcliError(
            "--plot PNG needs matplotlib",
            hint="install it with: pip install 'nbcli-bayes[plot]' (or write .svg, which needs nothing)",
        ) from None
    fig, ax = plt.subplots(figsize=(5, 5), dpi=100)
    if figure["kind"] == "reliability":
        ax.plot([0, 1], [0, 1], color="#999", ls="--")
        before = figure.get("before")
        series = [(before, "#7f8c8d", "before calibration")] if before else []
        series.append(({"bins": figure["bins"], "ece": figure.get("ece")}, "#c0392b", "calibrated" if before else None))
        for part, colour, name in series:
            bins = part["bins"]
            total = max(sum(b["count"] for b in bins), 1)
            conf, acc = [b["confidence"] for b in bins], [b["accuracy"] for b in bins]
            label = None if name is None else name if part["ece"] is None else f"{name}, ECE {part['ece']:.4f}"
            ax.plot(conf, acc, color=colour, lw=1.5, label=label)
            ax.scatter(conf, acc, s=[20 + 300 * b["count"] / total for b in bins], color=colour, alpha=0.5)
        if before:
            ax.legend(loc="upper left")
        ece = figure.get("ece")
        title = figure["title"] if ece is None or before else f"{figure['title']}, ECE {ece:.4f}"
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="mean predicted probability", ylabel="accuracy", title=title)
    elif figure["kind"] == "roc":
        ax.plot(figure["fpr"], figure["tpr"], color="#c0392b", lw=2)
        ax.plot([0, 1], [0, 1], color="#999", ls="--")
        ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="false-positive rate", ylabel="true-positive rate")
        auc = figure["auc"]
        ax.set_title(figure["title"] if auc is None else f"{figure['title']} (AUC {auc:.4f})")
    elif figure["kind"] == "learning_curve":
        ax.plot(figure["seen"], figure["errors"], color="#c0392b", lw=2)
        ax.set(xlabel="messages seen", title=figure["title"], xlim=(0, None), ylim=(0, None))
        ax.set_ylabel("cumulative errors", color="#c0392b")
        ax.locator_params(axis="x", nbins=5)
        ax.xaxis.set_major_formatter("{x:,.0f}")
        if figure.get("rate") is not None:
            right = ax.twinx()
            right.plot(figure["seen"], figure["rate"], color="#2c6fbb", lw=1.5, ls="--")
            window = figure.get("window")
            label = "error rate %" if window is None else f"error rate % (last {window:,} messages)"
            right.set_ylabel(label, color="#2c6fbb")
            right.set_ylim(0, None)
    else:
        import numpy as np

        m = np.array(figure["matrix"], dtype=float)
        share = m / np.maximum(m.sum(axis=1, keepdims=True), 1)
        ax.imshow(share, cmap="Blues", vmin=0, vmax=1)
        n = len(figure["labels"])
        ax.set_xticks(range(n), figure["labels"], rotation=45, ha="right")
        ax.set_yticks(range(n), figure["labels"])
        for i in range(n):
            for j in range(n):
                ax.text(
                    j, i, str(int(m[i, j])), ha="center", va="center", color="white" if share[i, j] > 0.6 else "black"
                )
        ax.set(xlabel="predicted class", ylabel="true class", title=figure["title"])
    fig.tight_layout()
    fig.savefig(path, format="png")
    plt.close(fig)


def reliability_svg(bins: list[dict], ece: float | None, title: str, before: dict | None = None) -> str:
    """An SVG reliability diagram: per confidence bin (see
    `calibration.reliability`), the accuracy (up) against the mean
    confidence (across), a dot whose area grows with the bin's documents,
    and the diagonal a calibrated model lies on; `before` ({"bins", "ece"}),
    the same before the model's calibration map, in grey, with a legend."""
    size, pad = 360, 50
    x, y, parts = _unit_square(size, pad)
    series = [(before["bins"], "#7f8c8d"), (bins, "#c0392b")] if before else [(bins, "#c0392b")]
    for part, colour in series:
        total = max(sum(b["count"] for b in part), 1)
        points = " ".join(f"{x(b['confidence']):.2f},{y(b['accuracy']):.2f}" for b in part)
        parts.append(f'<polyline points="{points}" fill="none" stroke="{colour}" stroke-width="1.5"/>')
        for b in part:
            r = 3 + 12 * (b["count"] / total) ** 0.5
            parts.append(
                f'<circle cx="{x(b["confidence"]):.2f}" cy="{y(b["accuracy"]):.2f}" r="{r:.1f}" fill="{colour}" '
                f'fill-opacity="0.5"><title>{b["count"]} documents</title></circle>'
            )
    if before:
        for i, (colour, name, value) in enumerate(
            (("#7f8c8d", "before calibration", before["ece"]), ("#c0392b", "calibrated", ece))
        ):
            text = name if value is None else f"{name}, ECE {value:.4f}"
            parts.append(
                f'<text x="{x(0.03):.2f}" y="{y(0.95) + 16 * i:.2f}" fill="{colour}" {_FONT}>{escape(text)}</text>'
            )
    label = title if ece is None or before else f"{title}, ECE {ece:.4f}"
    parts.append(f'<text x="{pad + size / 2}" y="{pad - 18}" text-anchor="middle" {_TITLE}>{escape(label)}</text>')
    parts.append(
        f'<text x="{pad + size / 2}" y="{y(0) + 36:.1f}" text-anchor="middle" {_FONT}>'
        "mean predicted probability (confidence)</text>"
    )
    parts.append(
        f'<text x="16" y="{pad + size / 2}" text-anchor="middle" {_FONT} transform="rotate(-90 16 '
        f'{pad + size / 2})">accuracy</text>'
    )
    return "\n".join(parts) + "\n</svg>\n"


def svg(figure: dict) -> str:
    if figure["kind"] == "reliability":
        return reliability_svg(figure["bins"], figure.get("ece"), figure["title"], figure.get("before"))
    if figure["kind"] == "roc":
        return roc_svg(figure["fpr"], figure["tpr"], figure["auc"], figure["title"])
    if figure["kind"] == "learning_curve":
        return learning_curve_svg(
            figure["seen"], figure["errors"], figure["title"], figure.get("rate"), figure.get("window")
        )
    return confusion_svg(figure["labels"], figure["matrix"], figure["title"])


def write(figure: dict, path: str) -> None:
    """Draw `figure` into `path`: SVG written here, PNG with matplotlib."""
    try:
        if check_path(path) == "svg":
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(svg(figure))
        else:
            png(figure, path)
    except OSError as exc:
        raise NbcliError(f"--plot {path}: {exc.strerror or exc}") from None
