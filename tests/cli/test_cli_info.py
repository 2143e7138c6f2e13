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


def test_record_line_says_what_copies_make_of_the_count(tmp_path):
    """A document learned three times counts three times in its class but is
    one record entry: the line says so, so that the numbers add up."""
    root = tmp_path / "c"
    for label, texts in (("ham", ["lunch at noon", "the meeting moved"]), ("spam", ["cheap pills now"])):
        (root / label).mkdir(parents=True)
        for i, text in enumerate(texts):
            (root / label / f"{i}.txt").write_text(text)
    (root / "ham" / "copy1.txt").write_text("lunch at noon")
    (root / "ham" / "copy2.txt").write_text("lunch at noon")
    model = tmp_path / "m.nb"
    assert run(["train", root, "-o", model, "-q", "--calibrate", "none"]).exit_code == 0
    line = next(x for x in run(["info", model]).stdout.splitlines() if x.startswith("record:"))
    assert line == "record:      5 learned documents (ham 4, spam 1): 3 distinct (copies counted once); 132 bytes"
    record = json.loads(run(["info", model, "--json"]).stdout)["record"]
    assert record["entries"] == 3 and record["per_class"] == {"ham": 4, "spam": 1}
