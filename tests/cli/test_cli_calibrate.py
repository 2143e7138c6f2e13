"""`nbcli calibrate` as a command (cli/calibrate.py): a map fitted on
held-out mail and written, removed with --method none, and the refusals:
no held-out documents, documents the model was trained on left out until
too few remain. (The maps themselves: tests/nb/test_calibrated_models.py.)"""

import json

from conftest import SAMPLES, model_info, one_line_error, run

MAIL = SAMPLES / "mail"


def test_a_map_fitted_on_held_out_mail_is_written_to_the_output(tmp_path, sample_mail_model):
    out = tmp_path / "calibrated.nb"
    before = sample_mail_model.read_bytes()
    result = run(["calibrate", sample_mail_model, MAIL / "test", "--method", "isotonic", "-o", out, "--json"])
    assert result.exit_code == 0, result.stderr
    said = json.loads(result.stdout)
    assert said["model"] == str(out) and said["method"] == "isotonic"
    assert said["documents"] == 175  # the 70 spam and 105 ham of the test folder
    assert set(said["before"]) == set(said["after"]) == {"log_loss", "brier", "ece"}
    assert f"wrote {out}: " in result.stderr and "fitted on 175 held-out documents" in result.stderr
    assert model_info(out)["calibration"]["method"] == "isotonic"
    assert sample_mail_model.read_bytes() == before  # -o: MODEL itself is left alone


def test_method_none_removes_the_map(mail_model_copy):
    assert model_info(mail_model_copy)["calibration"]["method"] is not None
    result = run(["calibrate", mail_model_copy, MAIL / "test", "--method", "none"])
    assert result.exit_code == 0, result.stderr
    assert "not calibrated (raw event-model posteriors)" in result.stderr
    assert model_info(mail_model_copy)["calibration"]["method"] is None


def test_refusals_are_one_line(tmp_path, mail_model_copy):
    line = one_line_error(run(["calibrate", mail_model_copy]), code=2)
    assert "give the HELDOUT documents" in line
    line = one_line_error(run(["calibrate", tmp_path / "none.nb", MAIL / "test"]))
    assert "none.nb" in line
    data = mail_model_copy.read_bytes()
    # the training mail is in the model's record: left out, none remain
    line = one_line_error(run(["calibrate", mail_model_copy, MAIL / "train", "-q"]))
    assert "after leaving out the" in line and "a calibration map needs at least 20 of every class" in line
    assert mail_model_copy.read_bytes() == data
