"""`nbcli info`: what a model holds."""

import json

from conftest import run


def _train_lecture_example(tmp_path):
    root = tmp_path / "c"
    (root / "animal").mkdir(parents=True)
    (root / "flower").mkdir(parents=True)
    (root / "animal" / "1").write_text("dog cat dog")
    (root / "animal" / "2").write_text("cat dog")
    (root / "flower" / "1").write_text("tulip rose")
    (root / "flower" / "2").write_text("rose rose tulip")
    model = tmp_path / "m.nb"
    assert run(["train", root, "-o", model, "-q", "--alpha", "1"]).exit_code == 0
    return model


def test_info_json(tmp_path):
    model = _train_lecture_example(tmp_path)
    result = run(["info", model, "--json", "--top", "3"])
    assert result.exit_code == 0 and result.stderr == ""
    info = json.loads(result.stdout)
    assert info["kind"] == "multinomial" and info["vocabulary_size"] == 4 and info["documents"] == 4
    assert info["classes"] == [
        {"class": "animal", "documents": 2, "tokens": 5, "prior": 0.5},
        {"class": "flower", "documents": 2, "tokens": 5, "prior": 0.5},
    ]
    assert info["options"]["alpha"] == 1.0 and info["options"]["prior"] == "fit"
    # log-odds of dog for animal: log(4/9) - log(1/9) = log 4
    top_animal = info["top_terms"]["animal"]
    assert [t["term"] for t in top_animal] == ["dog", "cat"]
    assert abs(top_animal[0]["log_odds"] - 1.3862943611198906) < 1e-12
    assert [t["term"] for t in info["top_terms"]["flower"]] == ["rose", "tulip"]


def test_info_for_people(tmp_path):
    model = _train_lecture_example(tmp_path)
    result = run(["info", model])
    assert result.exit_code == 0
    for text in ["event model: multinomial", "vocabulary:  4 terms", "alpha=1.0", "animal", "dog +1.39", "rose +1.39"]:
        assert text in result.stdout


def test_info_on_a_bad_file(tmp_path):
    (tmp_path / "x.nb").write_bytes(b"\x80\x04garbage")
    result = run(["info", tmp_path / "x.nb"])
    assert result.exit_code == 1 and result.stdout == ""
    assert result.stderr.startswith(f"nbcli: error: {tmp_path / 'x.nb'} is ") and result.stderr.count("\n") == 1
