"""`nbcli eval --plot`: an ROC curve or a confusion matrix, as SVG or PNG."""

import json
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from conftest import SAMPLES, make_docs, run

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    mail = folder / "mail.nb"
    topics = folder / "topics.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", mail, "-q"]).exit_code == 0
    assert run(["train", SAMPLES / "topics" / "train.jsonl", "-o", topics, "-q"]).exit_code == 0
    return {"mail": (mail, SAMPLES / "mail" / "test"), "topics": (topics, SAMPLES / "topics" / "test.jsonl")}


def test_roc_curve_svg(tmp_path, models):
    model, test = models["mail"]
    out = tmp_path / "roc.svg"
    result = run(["eval", model, test, "--plot", out, "--json"])
    assert result.exit_code == 0, result.stderr
    root = ET.parse(out).getroot()
    assert root.tag == f"{SVG}svg"
    (curve,) = root.iter(f"{SVG}polyline")
    points = [tuple(map(float, p.split(","))) for p in curve.get("points").split()]
    xs = [p[0] for p in points]
    assert xs == sorted(xs) and len(points) >= 3  # from (0, 0) to (1, 1), left to right
    assert any("AUC 0.99" in (t.text or "") for t in root.iter(f"{SVG}text"))


def test_confusion_matrix_svg_from_predictions(tmp_path, models):
    model, test = models["topics"]
    out = tmp_path / "cm.svg"
    lines = run(["predict", model, test, "--json"]).stdout
    truth = tmp_path / "truth.tsv"  # the ids are table rows, not class folders
    records = [json.loads(line) for line in (SAMPLES / "topics" / "test.jsonl").read_text().splitlines()]
    truth.write_text("".join(f"{r['id']}\t{r['label']}\n" for r in records))
    result = run(["eval", "--predictions", "-", "--truth", truth, "--plot", out], input=lines)
    assert result.exit_code == 0, result.stderr
    root = ET.parse(out).getroot()
    texts = [t.text for t in root.iter(f"{SVG}text")]
    cells = [r for r in root.iter(f"{SVG}rect") if r.get("width") == r.get("height") and r.get("width") != "100%"]
    assert len(cells) == 16 and "astronomy" in texts and "predicted class" in texts
    assert sum(int(t) for t in texts if t.isdigit()) == len(records)


def test_png(tmp_path, models):
    plt = pytest.importorskip("matplotlib.pyplot")
    for which in ("mail", "topics"):
        model, test = models[which]
        out = tmp_path / f"{which}.png"
        assert run(["eval", model, test, "--plot", out, "-q"]).exit_code == 0
        assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert plt.imread(out).shape[:2] == (500, 500)


def test_png_without_matplotlib_and_other_errors(tmp_path, models, monkeypatch, make_class_folders):
    model, test = models["mail"]
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails as if not installed
    result = run(["eval", model, test, "--plot", tmp_path / "x.png", "-q"])
    assert result.exit_code == 1
    assert result.stderr == (
        "nbcli: error: --plot PNG needs matplotlib; install it with: pip install 'nbcli-bayes[plot]' (or write .svg, "
        "which needs nothing)\n"
    )
    result = run(["eval", model, test, "--plot", tmp_path / "x.gif"])
    assert (
        result.exit_code == 1
        and result.stderr == f"nbcli: error: --plot {tmp_path / 'x.gif'}: the file name must end in .svg or .png\n"
    )
    texts, labels = make_docs(40, seed=1, classes=["a", "b"])
    result = run(["eval", "--cv", "2", make_class_folders(texts, labels), "--plot", tmp_path / "x.svg"])
    assert result.exit_code == 2 and "--plot does not go with --cv" in result.stderr
    result = run(["eval", model, test, "--plot", tmp_path / "no" / "such" / "x.svg", "-q"])
    assert (
        result.exit_code == 1
        and result.stderr == f"nbcli: error: --plot {tmp_path / 'no' / 'such' / 'x.svg'}: No such file or directory\n"
    )


def test_learning_curve_svg_and_png(tmp_path):
    from nbcli.cli import plot
    from nbcli.evaluate import trec

    rng = np.random.default_rng(5)
    is_spam = rng.random(1000) < 0.5
    called = is_spam ^ (rng.random(1000) < np.linspace(0.3, 0.01, 1000))  # fewer errors as it learns
    seen, errors, rate = trec.learning_curve(is_spam, called, points=50)
    figure = {
        "kind": "learning_curve",
        "title": "online run <trec07p>",
        "seen": seen,
        "errors": errors,
        "rate": rate,
        "window": 50,
    }
    out = tmp_path / "curve.svg"
    plot.write(figure, str(out))
    root = ET.parse(out).getroot()
    assert root.tag == f"{SVG}svg"
    lines = {p.get("id"): p for p in root.iter(f"{SVG}polyline")}
    assert set(lines) == {"errors", "rate"}
    points = [tuple(map(float, p.split(","))) for p in lines["errors"].get("points").split()]
    assert len(points) == 50 == len(lines["rate"].get("points").split())
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    assert xs == sorted(xs) and ys == sorted(ys, reverse=True)  # cumulative errors only climb (SVG y grows down)
    texts = [t.text for t in root.iter(f"{SVG}text")]
    assert "online run <trec07p>" in texts and "messages seen" in texts and "error rate % (last 50 messages)" in texts
    lone = plot.learning_curve_svg([1, 2, 3], [0, 0, 0], "no errors")  # cumulative errors alone; a flat zero line
    (line,) = ET.fromstring(lone).iter(f"{SVG}polyline")
    assert len(line.get("points").split()) == 3
    pytest.importorskip("matplotlib")
    png = tmp_path / "curve.png"
    plot.write(figure, str(png))
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
