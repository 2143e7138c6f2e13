"""Table models through the commands (issue 17): train --features on a
CSV/TSV/JSON-lines table, predict, eval, eval --cv, info, explanations and
the model file, against the math module (tests/nb/test_tables.py checks that
against scikit-learn and scipy)."""

from __future__ import annotations

import json
import shutil
from fractions import Fraction

import numpy as np
import pytest

from nbcli.nb.tables import TableModel, TableSettings
from nbcli.store import modelfile

from conftest import SAMPLES, model_info, run

PLAYTENNIS = SAMPLES / "playtennis.csv"
TENNIS = ["--features", "all", "--label-field", "PlayTennis", "--id-field", "Day"]
QUERY = "Outlook,Temperature,Humidity,Wind\nSunny,Cool,High,Strong\n"


def p_no(model) -> float:
    result = run(["predict", model, "-", "--json", "--input-format", "csv"], input=QUERY)
    assert result.exit_code == 0, result.stderr
    record = json.loads(result.stdout)
    return record["probabilities"]["No"]


@pytest.mark.parametrize(
    ("options", "fraction"),
    [
        (["--alpha", "0"], Fraction(486, 611)),
        (["--alpha", "1"], Fraction(3025, 4201)),
        (["--alpha", "1", "--prior-alpha", "1"], Fraction(1089, 1481)),
    ],
    ids=["unsmoothed", "laplace", "laplace-prior-too"],
)
def test_playtennis_as_the_lecture_notes_compute_it(tmp_path, options, fraction):
    # by hand, from the table's counts: P(no) = 5/14, P(yes) = 9/14; Sunny 3/5 | 2/9, Cool 1/5 | 3/9,
    # High 4/5 | 3/9, Strong 3/5 | 3/9; categories per attribute K = 3, 3, 2, 2
    a = Fraction(options[1])
    pa = Fraction(1) if "--prior-alpha" in options else Fraction(0)
    no = (5 + pa) / (14 + 2 * pa)
    yes = (9 + pa) / (14 + 2 * pa)
    for n_no, n_yes, k in ((3, 2, 3), (1, 3, 3), (4, 3, 2), (3, 3, 2)):
        no *= (n_no + a) / (5 + k * a)
        yes *= (n_yes + a) / (9 + k * a)
    assert no / (no + yes) == fraction
    model = tmp_path / "tennis.nb"
    result = run(["train", PLAYTENNIS, *TENNIS, "--calibrate", "none", "-o", model, *options])
    assert result.exit_code == 0, result.stderr
    assert "14 rows (No 5, Yes 9), 4 columns (4 categorical)" in result.stderr
    assert p_no(model) == pytest.approx(float(fraction), abs=1e-12)


def test_info_eval_explain_and_the_model_file(tmp_path):
    model = tmp_path / "tennis.nb"
    assert run(["train", PLAYTENNIS, *TENNIS, "-o", model, "-q"]).exit_code == 0
    info = json.loads(run(["info", model, "--json"]).stdout)
    assert info["kind"] == "table" and [c["name"] for c in info["columns"]] == [
        "Outlook",
        "Temperature",
        "Humidity",
        "Wind",
    ]
    assert info["summary"]["classes"]["No"]["Outlook"]["categories"]["Sunny"] == pytest.approx(4 / 8)  # (3+1)/(5+3)
    # 5 and 9 rows: too few to fit a calibration map by default (20 of each class), so the raw posteriors
    assert info["calibration"] == {
        "method": None,
        "reason": "class No has 5 rows, fewer than the 20 a calibration map needs",
    }
    text = run(["info", model]).stdout
    assert "event model: table (4 columns: 4 categorical)" in text and "Outlook (categorical)" in text
    # eval reads the label field the model was trained with
    report = json.loads(run(["eval", model, PLAYTENNIS, "--json"]).stdout)
    assert report["documents"] == 14 and report["accuracy"] == pytest.approx(13 / 14)
    # --explain: per-column contributions that add up to the event model's log-odds
    raw = tmp_path / "raw.nb"
    assert run(["train", PLAYTENNIS, *TENNIS, "-o", raw, "-q", "--calibrate", "none"]).exit_code == 0
    record = json.loads(run(["predict", raw, PLAYTENNIS, "--json", "--explain", "10"]).stdout.splitlines()[0])
    e = record["explanation"]
    assert record["id"] == "D1" and e["versus"] == "Yes"
    assert {t["term"] for t in e["terms"]} == {"Outlook=Sunny", "Temperature=Hot", "Humidity=High", "Wind=Weak"}
    total = sum(t["contribution"] for t in e["terms"]) + e["prior"]
    assert total == pytest.approx(e["log_odds"], abs=1e-12)
    lp = record["log_probabilities"]
    assert e["log_odds"] == pytest.approx(lp["No"] - lp["Yes"], abs=1e-12)
    # the model file round trip keeps every number
    again = modelfile.load(str(raw))
    payload = modelfile.read_payload(str(raw))
    assert payload["format_version"] == modelfile.FORMAT_VERSION and payload["model"]["kind"] == "table"
    spec, arrays = again.model.state()
    rebuilt = TableModel.from_state(spec, arrays)
    X = again.model.encode(
        [
            np.array(["Sunny", "Rain"]),
            np.array(["Cool", "Mild"]),
            np.array(["High", "Normal"]),
            np.array(["Strong", "Weak"]),
        ]
    )
    assert np.array_equal(rebuilt.predict_log_proba(X), again.model.predict_log_proba(X))


def write_mixed(path, n=600, seed=3, missing=True):
    """A mixed table: two categorical columns, two numeric ones, an id; a few missing cells."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 3, n)
    colour = np.array(["red", "green", "blue"])[(y + rng.integers(0, 2, n)) % 3]
    size = np.array(["S", "M", "L", "XL"])[rng.integers(0, 4, n)]
    height = rng.normal(150 + 10 * y, 5)
    weight = rng.normal(60 - 5 * y, 3)
    lines = ["id,colour,size,height,weight,class"]
    for i in range(n):
        cells = [colour[i], size[i], f"{height[i]:.3f}", f"{weight[i]:.3f}"]
        if missing and i % 37 == 0:
            cells[i % 4] = "?" if i % 2 else "NA"
        lines.append(",".join([f"r{i}", *cells, f"k{y[i]}"]))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_a_mixed_table_through_the_cli_is_the_math_modules_model(tmp_path):
    table = write_mixed(tmp_path / "mixed.csv")
    model = tmp_path / "m.nb"
    result = run(["train", table, "--features", "all", "--label-field", "class", "--calibrate", "none", "-o", model])
    assert result.exit_code == 0, result.stderr
    assert "4 columns (2 categorical, 2 numeric)" in result.stderr or "(2 categorical, 2 gaussian)" in result.stderr
    rows = [line.split(",") for line in table.read_text().splitlines()[1:]]
    columns = [np.array([r[j] for r in rows], dtype=object) for j in range(1, 5)]
    numeric = [np.array([float(v) if v not in ("?", "NA") else np.nan for v in c]) for c in columns[2:]]
    y = np.array([int(r[5][1]) for r in rows])
    direct = TableModel.fit(
        ["k0", "k1", "k2"],
        y,
        ["colour", "size", "height", "weight"],
        ["categorical", "categorical", "numeric", "numeric"],
        [*columns[:2], *numeric],
        TableSettings(),
    )
    want = np.exp(direct.predict_log_proba(direct.encode([*columns[:2], *numeric])))
    predicted = [json.loads(line) for line in run(["predict", model, table, "--json"]).stdout.splitlines()]
    assert [p["id"] for p in predicted[:3]] == ["r0", "r1", "r2"]  # the id column is an id, not a feature
    got = np.array([[p["probabilities"][c] for c in ("k0", "k1", "k2")] for p in predicted])
    assert np.allclose(got, want, rtol=0, atol=1e-12)


def test_types_can_be_forced_and_jsonl_and_tsv_tables_read_alike(tmp_path):
    table = write_mixed(tmp_path / "mixed.csv", missing=False)
    lines = table.read_text().splitlines()
    header = lines[0].split(",")
    (tmp_path / "mixed.tsv").write_text("\n".join(line.replace(",", "\t") for line in lines) + "\n")
    records = [dict(zip(header, line.split(","))) for line in lines[1:]]
    for r in records:
        r["height"] = float(r["height"])  # numbers as JSON numbers
    (tmp_path / "mixed.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    ids = {}
    for name in ("mixed.csv", "mixed.tsv", "mixed.jsonl"):
        model = tmp_path / f"{name}.nb"
        args = ["train", tmp_path / name, "--features", "all", "--label-field", "class", "--calibrate", "none"]
        assert run([*args, "-o", model, "-q"]).exit_code == 0
        ids[name] = json.loads(run(["info", model, "--json"]).stdout)["model_id"]
    assert len(set(ids.values())) == 1  # the same model from each format
    forced = tmp_path / "forced.nb"
    args = ["train", table, "--features", "colour,height", "--categorical", "height", "--label-field", "class"]
    assert run([*args, "-o", forced, "-q", "--calibrate", "none"]).exit_code == 0
    info = json.loads(run(["info", forced, "--json"]).stdout)
    assert info["columns"] == [{"name": "colour", "kind": "categorical"}, {"name": "height", "kind": "categorical"}]


@pytest.mark.parametrize("numeric_model", ["kde", "discretize"])
def test_the_other_numeric_models(tmp_path, numeric_model):
    """(600 rows: calibrated by default, platt on 5-fold scores.)"""
    table = write_mixed(tmp_path / "mixed.csv")
    model = tmp_path / "m.nb"
    args = ["train", table, "--features", "all", "--label-field", "class", "--numeric-model", numeric_model]
    assert (
        run(
            [*args, "--bins", "5", "-o", model, "-q"] if numeric_model == "discretize" else [*args, "-o", model, "-q"]
        ).exit_code
        == 0
    )
    report = json.loads(run(["eval", model, table, "--json"]).stdout)
    assert report["accuracy"] > 0.8
    kinds = [c["kind"] for c in json.loads(run(["info", model, "--json"]).stdout)["columns"]]
    assert kinds == ["categorical", "categorical", numeric_model, numeric_model]


def test_cross_validation_of_a_table(tmp_path):
    table = write_mixed(tmp_path / "mixed.csv")
    result = run(["eval", "--cv", "5", table, "--features", "all", "--label-field", "class", "--json", "--seed", "3"])
    assert result.exit_code == 0, result.stderr
    cv = json.loads(result.stdout)
    assert cv["folds"] == 5 and cv["seed"] == 3 and cv["documents"] == 600
    assert cv["metrics"]["accuracy"]["mean"] > 0.8


def test_unseen_categories_missing_cells_and_other_columns_score(tmp_path):
    model = tmp_path / "tennis.nb"
    assert run(["train", PLAYTENNIS, *TENNIS, "-o", model, "-q", "--calibrate", "none"]).exit_code == 0
    query = "Outlook,Temperature,Humidity,Wind,Extra\nFoggy,,High,Strong,whatever\n?,?,?,?,x\n"
    result = run(["predict", model, "-", "--json", "--input-format", "csv", "--explain", "4"], input=query)
    assert result.exit_code == 0, result.stderr
    first, second = (json.loads(line) for line in result.stdout.splitlines())
    assert "Outlook=(unseen)" in {t["term"] for t in first["explanation"]["terms"]}
    assert first["explanation"]["unknown"]["count"] == 1  # the empty Temperature cell
    assert second["probabilities"]["No"] == pytest.approx(5 / 14)  # nothing known: the prior


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--features", "Outlook,Colour"], "the table has no field 'Colour'"),
        (["--features", "all", "--ngrams", "2"], "--ngrams needs a text model (not --features)"),
        (["--features", "all", "--categorical", "Wind", "--numeric", "Wind"], "both --categorical and --numeric"),
        (["--features", "all", "--alpha", "-1"], "--alpha must be a number >= 0"),
        (["--features", "all", "--bandwidth", "wide"], "is not scott, silverman or a positive number"),
    ],
)
def test_bad_table_options_are_one_line_errors(tmp_path, args, message):
    result = run(
        ["train", PLAYTENNIS, "--label-field", "PlayTennis", "--id-field", "Day", *args, "-o", tmp_path / "m.nb"]
    )
    assert result.exit_code in (1, 2) and message in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "m.nb").exists()


def test_a_table_model_refuses_mail_and_learning(tmp_path):
    model = tmp_path / "tennis.nb"
    assert run(["train", PLAYTENNIS, *TENNIS, "-o", model, "-q"]).exit_code == 0
    result = run(["predict", model, SAMPLES / "mail" / "test" / "spam" / "0001.eml"])
    assert result.exit_code == 1 and "a table model classifies rows of a table" in result.stderr
    result = run(["learn", model, "--class", "Yes", PLAYTENNIS])
    assert result.exit_code == 1 and "is a table model, which learns from a whole table" in result.stderr
    for args, message in (
        (["merge", model, shutil.copy(model, tmp_path / "copy.nb"), "-o", tmp_path / "m.nb"], "is a table model"),
        (["prune", model, "--min-count", "2"], "a table model has no terms to prune"),
        (["dump", model], "a table model has no term counts to dump"),
        (
            ["tokens", "-m", model, SAMPLES / "mail" / "test" / "spam" / "0001.eml"],
            "reads a table's columns, not terms",
        ),
        (
            ["train", "--from-model", model, "-o", tmp_path / "x.nb"],
            "is a table model: its tables cannot be re-derived",
        ),
    ):
        result = run(args)
        assert result.exit_code == 1 and message in result.stderr and result.stderr.count("\n") == 1, args
    result = run(["train", SAMPLES / "mail" / "train", "--features", "all", "-o", tmp_path / "x.nb"])
    assert result.exit_code == 1 and "is not a row of a table" in result.stderr
    # forget, like learn, was an 'internal error' (no analyzer) before it said so
    result = run(["forget", model, "--class", "Yes", PLAYTENNIS, *TENNIS[2:]])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert (
        "is a table model, which learns from a whole table; train it again on the table with the rows" in result.stderr
    )


def test_a_table_model_is_calibrated_on_held_out_rows(tmp_path):
    """`nbcli calibrate` of a table model was an 'internal error' (it looked
    for the record of learned documents a table model does not keep)."""
    table = write_mixed(tmp_path / "mixed.csv", n=600)
    held_out = write_mixed(tmp_path / "held.csv", n=300, seed=4)
    model = tmp_path / "m.nb"
    fields = ["--label-field", "class", "--id-field", "id"]
    assert run(["train", table, "--features", "all", *fields, "-o", model, "-q", "--calibrate", "none"]).exit_code == 0
    result = run(["calibrate", model, held_out, *fields])
    assert result.exit_code == 0, result.stderr
    assert "fitted on 300 held-out documents" in result.stderr
    assert model_info(model)["calibration"]["method"] == "temperature"  # three classes: one temperature


def test_tune_searches_the_table_settings(tmp_path):
    table = write_mixed(tmp_path / "mixed.csv")
    args = ["tune", table, "--features", "all", "--label-field", "class", "--cv", "3", "--alpha", "1", "--json"]
    result = run(args)
    assert result.exit_code == 0, result.stderr
    tuned = json.loads(result.stdout)
    # --alpha given: fixed, not searched; the numeric models are
    assert [r["settings"] for r in tuned["results"]] == [
        {"numeric_model": m} for m in ("gaussian", "kde", "discretize")
    ]
    assert tuned["command"].startswith(f"nbcli train {table} --label-field class --alpha 1.0 --features all")
    assert f"--numeric-model {tuned['best']['numeric_model']}" in tuned["command"]


def test_a_damaged_table_model_is_a_one_line_error(tmp_path):
    model = tmp_path / "tennis.nb"
    assert run(["train", PLAYTENNIS, *TENNIS, "-o", model, "-q", "--calibrate", "none"]).exit_code == 0
    payload = dict(modelfile.read_payload(str(model)))
    payload["table_col0_counts"] = -np.asarray(payload["table_col0_counts"])  # negative counts
    bad = tmp_path / "bad.nb"
    modelfile.write_payload({k: (np.array(v) if isinstance(v, np.ndarray) else v) for k, v in payload.items()}, bad)
    result = run(["predict", bad, PLAYTENNIS])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert result.stderr.startswith(f"nbcli: error: {bad} is corrupt (the table model is not valid: ")


def test_serve_and_filter_refuse_a_table_model_once(tmp_path):
    """A table model classifies no message: serve does not start, and filter
    says so in one line (not a warning per message) and passes every
    message through unchanged, exit 1."""
    table = tmp_path / "spamish.csv"
    table.write_text("Outlook,Wind,label\nSunny,Weak,ham\nRain,Strong,spam\nRain,Weak,spam\nSunny,Strong,ham\n")
    model = tmp_path / "t.nb"
    assert run(["train", table, "--features", "all", "-o", model, "-q"]).exit_code == 0
    result = run(["serve", model, "--socket", tmp_path / "s.sock"])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert "is a table model: it classifies rows of a table, and a spamd server classifies mail" in result.stderr
    mbox = (SAMPLES / "mail" / "inbox.mbox").read_bytes()
    result = run(["filter", model, "-"], input=mbox)
    assert result.exit_code == 1 and result.stderr.count("\n") == 1, result.stderr
    assert "is a table model: it classifies rows of a table, and nbcli filter classifies mail" in result.stderr
    assert result.stderr.rstrip().endswith("passing messages through unchanged")
    assert result.stdout_bytes == mbox


def test_a_cut_list_of_the_model_columns_says_how_many_more(tmp_path):
    """The hint names ten of a model's twenty columns: it says the rest exist."""
    columns = [f"c{i:02d}" for i in range(20)]
    rows = [",".join([*columns, "label"])]
    rows += [",".join(["xyz"[(r * 7 + i) % 3] for i in range(20)] + ["ab"[r % 2]]) for r in range(12)]
    table = tmp_path / "wide.csv"
    table.write_text("\n".join(rows) + "\n")
    model = tmp_path / "wide.nb"
    args = ["train", table, "--features", "all", "--label-field", "label", "-o", model, "--calibrate", "none", "-q"]
    assert run(args).exit_code == 0
    (tmp_path / "note.txt").write_text("hello")
    result = run(["predict", model, tmp_path / "note.txt"])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert "the model's columns: c00, c01, c02, c03, c04, c05, c06, c07, c08, c09, … (and 10 more)" in result.stderr


def test_a_cross_validated_map_that_falls_is_not_kept(tmp_path):
    """Each value is in one row of each class: a held-out row's value is
    left only in the other class, so every held-out row is scored wrong and
    platt's slope is negative; the model is left uncalibrated, or refused
    when the method is asked for."""
    table = tmp_path / "anti.csv"
    table.write_text("x,label\n" + "".join(f"v{i},a\nv{i},b\n" for i in range(30)))
    model = tmp_path / "anti.nb"
    base = ["train", table, "--features", "all", "--label-field", "label", "-o", model]
    result = run(base)
    assert result.exit_code == 0, result.stderr
    assert "not calibrated: the corpus's own documents, cross-validated, rank against the model" in result.stderr
    assert "fits one anyway" not in result.stderr
    assert json.loads(run(["info", model, "--json"]).stdout)["calibration"]["method"] is None
    result = run([*base, "--calibrate", "platt"])
    assert result.exit_code == 1 and "cannot calibrate by cross-validation" in result.stderr


def test_a_table_label_that_cannot_be_a_class_name_is_refused(tmp_path):
    """A label with a control character (a quoted newline in the CSV) is
    refused as text training refuses it; train wrote a model every command
    then called corrupt."""
    table = tmp_path / "ctl.csv"
    table.write_text('a,label\nx,"e\nf"\ny,g\nx,"e\nf"\n')
    result = run(["train", table, "--features", "all", "-o", tmp_path / "t.nb", "-q"])
    assert result.exit_code == 1 and result.stderr.count("\n") == 1
    assert "class label 'e\\nf' contains the control character '\\n'" in result.stderr
    assert not (tmp_path / "t.nb").exists()


def test_train_with_features_refuses_a_text_field(tmp_path):
    """--text-field was ignored by a table model (it reads its columns)."""
    args = ["train", PLAYTENNIS, "--features", "all", "--label-field", "PlayTennis", "--text-field", "Outlook"]
    result = run([*args, "-o", tmp_path / "t.nb"])
    assert result.exit_code == 2 and "--text-field needs a text model (not --features" in result.stderr
    assert not (tmp_path / "t.nb").exists()
