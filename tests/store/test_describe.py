"""What `nbcli info` shows of a model (store/describe.py)."""

import json

from nbcli.store import modelfile
from nbcli.store.describe import describe
from nbcli.store.payload import model_id


def test_a_plain_model_is_described_by_its_counts(classifier):
    info = describe(classifier, top=3)
    assert info["format_version"] == 1 and info["kind"] == "multinomial" and info["transforms"] == []
    assert info["model_id"] == model_id(classifier)
    assert info["vocabulary_size"] == len(classifier.vocabulary)
    assert [c["class"] for c in info["classes"]] == classifier.classes
    assert sum(c["documents"] for c in info["classes"]) == info["documents"] == 300
    assert abs(sum(c["prior"] for c in info["classes"]) - 1) < 1e-12
    assert info["smoothing"]["alpha"] == 0.3 and info["analyzer"]["ngrams"] == 2
    assert info["calibration"] == {"method": None, "reason": None}
    for terms in info["top_terms"].values():
        odds = [t["log_odds"] for t in terms]
        assert 0 < len(terms) <= 3 and odds == sorted(odds, reverse=True) and min(odds) > 0
    json.dumps(info)  # JSON-ready
    assert describe(classifier, top=0)["top_terms"] == {}


def test_a_calibrated_model_says_what_its_map_does(small_model):
    calibration = describe(modelfile.load(str(small_model)))["calibration"]
    assert calibration["method"] in ("platt", "isotonic", "temperature", "beta")
    assert calibration["documents"] > 0 and calibration["stale"] is False
    assert isinstance(calibration["map"], str) and calibration["map"]
    assert calibration["effect"] in (
        "keeps the ranking",
        "may tie documents the model ranked apart",
        "keeps each document's predicted class",
        "may change the predicted class of some documents",
    )
