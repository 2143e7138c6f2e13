"""Table models (issue 17): accuracy beside GaussianNB, and speed on 1M rows.

    make bench-tables      (= cd benchmarks && python tables.py)
    NBCLI_BENCH_RUNS=1 make bench-tables     (runs per speed measure; default 3)

Accuracy: the three CSV tables scikit-learn ships in its package data
(iris, wine, breast_cancer; read at run time from the installed package,
never copied into the repository) are rewritten as plain CSV files, header
`f0,...,f{n-1},class` with the class names of their special first line,
under bench-cache/tables/. For each, `nbcli eval --cv 10 --seed 0 --json`
gives the 10-fold stratified accuracy (mean and population std over the
folds) of every numeric model; scikit-learn's GaussianNB is fitted and
scored in the same run on exactly nbcli's folds (`crossval.stratified_folds`
on the class indices of the sorted class names, as nbcli numbers them), so
the comparison is paired fold by fold.

Speed: a seeded synthetic table of 1,000,000 rows (10 categorical columns of
six values whose distribution depends on the class, 10 numeric columns
Gaussian per class, 3 classes) is written once to bench-cache/tables/big.csv.
`nbcli train ... --calibrate none` and `nbcli predict` (output to /dev/null)
are timed against this file's scikit-learn peer (`--sklearn-peer train|predict`,
run as a subprocess the same way): the CSV read with numpy, OrdinalEncoder,
CategoricalNB on the categorical columns and GaussianNB on the numeric ones,
the model pickled; scoring adds the two joint log-likelihoods minus one log
prior and writes the same `id<TAB>label<TAB>probability` lines. Every figure
is the wall time of a whole process (interpreter start and imports included),
the median over the runs after one untimed warm-up, and the largest peak
resident memory (ru_maxrss from wait4, which counts waited-for children),
also per row of the table (bytes a row, the whole process). One further
nbcli run of each under cProfile names the top costs.

Training memory, before and after (issue 25): `nbcli train` with
`--calibrate none` and with the default 5-fold calibration, by this code
and by the code of commit NBCLI_BENCH_BEFORE (default f20aa66, the last one
that held every row as Python objects; `git archive`d to
bench-cache/tables/before-COMMIT and run with it first on PYTHONPATH; empty
skips it), once each, beside the scikit-learn peer's training, in the same
run: peak RSS, bytes a row and the ratio to scikit-learn's peak.

Results go to stdout and to the "tables" section of docs/benchmarks.md.
"""

from __future__ import annotations

import cProfile
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

RUNS = int(os.environ.get("NBCLI_BENCH_RUNS", "3"))
BEFORE = os.environ.get("NBCLI_BENCH_BEFORE", "f20aa66")
PYTHON = sys.executable
NBCLI = [PYTHON, "-m", "nbcli"]
HERE = Path(__file__).resolve()
TABLES = ["iris.csv", "wine_data.csv", "breast_cancer.csv"]
NUMERIC_MODELS = ["gaussian", "kde", "discretize"]
K = 10
SEED = 0
BIG_ROWS = 1_000_000
N_CAT = N_NUM = 10
CATEGORIES = np.array([b"alpha", b"bravo", b"delta", b"gamma", b"omega", b"sigma"])
CLASSES = np.array([b"A", b"B", b"C"])


# -- accuracy ---------------------------------------------------------------------------


def sklearn_data_dir() -> Path:
    import sklearn

    return Path(os.path.dirname(sklearn.__file__)) / "datasets" / "data"


def write_plain(name: str, folder: Path) -> tuple[Path, np.ndarray, list[str]]:
    """Rewrite one of scikit-learn's CSV tables (first line: n_samples,
    n_features, class names...) as a plain CSV: (path, X, class label per row)."""
    source = sklearn_data_dir() / name
    with open(source, encoding="utf-8") as f:
        head = f.readline().strip().split(",")
        n, d, names = int(head[0]), int(head[1]), head[2:]
        body = np.loadtxt(f, delimiter=",", dtype=str, ndmin=2)
    assert body.shape == (n, d + 1), (name, body.shape)
    labels = [names[int(c)] for c in body[:, d]]
    path = folder / (Path(name).stem.removesuffix("_data") + ".csv")
    with open(path, "w", encoding="utf-8") as out:
        out.write(",".join([*(f"f{i}" for i in range(d)), "class"]) + "\n")
        for row, label in zip(body[:, :d], labels):
            out.write(",".join([*row, label]) + "\n")
    return path, body[:, :d].astype(np.float64), labels


def nbcli_cv(path: Path, model: str, notes: list[str]) -> tuple[dict, list[str]]:
    """nbcli's K-fold report (JSON) and the command that made it."""
    cmd = [*NBCLI, "eval", "--cv", str(K), "--seed", str(SEED), str(path), "--features", "all", "--label-field"]
    cmd += ["class", "--numeric-model", model, "--json"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {run.returncode}: {run.stderr[-2000:]}")
    result = json.loads(run.stdout)
    assert result["seed"] == SEED and result["folds"] == K, result
    return result, cmd


def gaussian_nb_folds(X: np.ndarray, labels: list[str]) -> np.ndarray:
    """GaussianNB's accuracy on each of nbcli's K folds (same seed)."""
    from sklearn.naive_bayes import GaussianNB

    from nbcli.fit.crossval import stratified_folds

    classes = sorted(set(labels))
    index = {c: i for i, c in enumerate(classes)}
    y = np.array([index[label] for label in labels], dtype=np.int64)
    fold = stratified_folds(y, K, SEED)
    acc = []
    for f in range(K):
        train, test = fold != f, fold == f
        acc.append(float(np.mean(GaussianNB().fit(X[train], y[train]).predict(X[test]) == y[test])))
    return np.array(acc)


def pm(values) -> str:
    return f"{100 * np.mean(values):.2f} ± {100 * np.std(values):.2f}"


def accuracy(folder: Path) -> tuple[str, list[str], list[str]]:
    """(markdown table, commands, notes)."""
    import report

    rows, commands, notes = [], [], []
    for name in TABLES:
        path, X, labels = write_plain(name, folder)
        folds = {}
        for model in NUMERIC_MODELS:
            result, cmd = nbcli_cv(path, model, notes)
            folds[model] = np.array([r["accuracy"] for r in result["fold_reports"]])
            m = result["metrics"]["accuracy"]
            assert abs(m["mean"] - folds[model].mean()) < 1e-9
            print(f"{path.stem} {model}: {100 * m['mean']:.2f} ± {100 * m['std']:.2f}", file=sys.stderr)
            if name == TABLES[0]:
                shown = " ".join(["nbcli", *map(str, cmd[3:])])
                commands.append(shown.replace(str(path), "bench-cache/tables/iris.csv"))
        gnb = gaussian_nb_folds(X, labels)
        print(f"{path.stem} GaussianNB: {pm(gnb)}", file=sys.stderr)
        best = max(NUMERIC_MODELS, key=lambda m: folds[m].mean())
        diff = folds[best] - gnb
        met = folds[best].mean() >= gnb.mean()
        rows.append(
            [
                f"{path.stem} ({len(labels)} rows, {X.shape[1]} columns, {len(set(labels))} classes)",
                *(pm(folds[m]) for m in NUMERIC_MODELS),
                pm(gnb),
                f"{best}: {100 * diff.mean():+.2f} (folds +{int((diff > 0).sum())} ={int((diff == 0).sum())} "
                f"-{int((diff < 0).sum())})",
                "met" if met else "**not met**",
            ]
        )
    header = [
        "table",
        "nbcli gaussian",
        "nbcli kde",
        "nbcli discretize",
        "scikit-learn GaussianNB",
        "nbcli best − GaussianNB (points; folds won/tied/lost)",
        "best ≥ GaussianNB",
    ]
    return report.table(header, rows), commands, notes


# -- speed: the table ---------------------------------------------------------------------


def fixed_number(values: np.ndarray) -> np.ndarray:
    """Values in [0, 100) as (n, 6) ASCII bytes 'DD.ddd' (vectorised)."""
    milli = np.rint(np.clip(values, 0, 99.999) * 1000).astype(np.int64)
    milli = np.minimum(milli, 99999)
    digits = [(milli // 10**p) % 10 for p in (4, 3, 2, 1, 0)]
    out = np.empty((len(values), 6), dtype=np.uint8)
    out[:, 0], out[:, 1] = digits[0] + 48, digits[1] + 48
    out[:, 2] = ord(".")
    out[:, 3], out[:, 4], out[:, 5] = digits[2] + 48, digits[3] + 48, digits[4] + 48
    return out


def write_big(path: Path, n: int = BIG_ROWS, seed: int = 17) -> Path:
    """The seeded 1M-row mixed table (written once; every row has the same
    width, so it is built as one byte matrix)."""
    if path.exists() and path.stat().st_size > 0:
        return path
    rng = np.random.default_rng(seed)
    y = rng.choice(len(CLASSES), size=n, p=[0.5, 0.3, 0.2])
    cols = []
    for _ in range(N_CAT):
        p = rng.dirichlet(np.ones(len(CATEGORIES)), size=len(CLASSES))  # (class, category)
        cdf = np.cumsum(p, axis=1)
        u = rng.random(n)
        code = np.minimum((u[:, None] > cdf[y]).sum(axis=1), len(CATEGORIES) - 1)
        cols.append(CATEGORIES.view(np.uint8).reshape(len(CATEGORIES), -1)[code])
    for _ in range(N_NUM):
        mean = rng.normal(50, 6, size=len(CLASSES))
        sd = rng.uniform(4, 10, size=len(CLASSES))
        cols.append(fixed_number(rng.normal(mean[y], sd[y])))
    cols.append(CLASSES.view(np.uint8).reshape(len(CLASSES), -1)[y])
    comma = np.full((n, 1), ord(","), dtype=np.uint8)
    parts = []
    for c in cols:
        parts += [c, comma]
    parts[-1] = np.full((n, 1), ord("\n"), dtype=np.uint8)
    body = np.hstack(parts)
    header = ",".join([*(f"cat{i}" for i in range(N_CAT)), *(f"num{i}" for i in range(N_NUM)), "class"]) + "\n"
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(header.encode())
        f.write(body.tobytes())
    tmp.rename(path)
    return path


# -- speed: the scikit-learn peer ------------------------------------------------------------


def peer_read(path: str):
    """(categorical strings (n, c), numeric floats (n, m), labels (n,)) by the header's column names."""
    with open(path, encoding="utf-8") as f:
        names = f.readline().strip().split(",")
    cat = [i for i, c in enumerate(names) if c.startswith("cat")]
    num = [i for i, c in enumerate(names) if c.startswith("num")]
    label = names.index("class")
    strings = np.loadtxt(path, delimiter=",", dtype=str, skiprows=1, usecols=[*cat, label], ndmin=2)
    numbers = np.loadtxt(path, delimiter=",", dtype=np.float64, skiprows=1, usecols=num, ndmin=2)
    return strings[:, :-1], numbers, strings[:, -1]


def sklearn_peer(argv: list[str]) -> int:
    """`tables.py --sklearn-peer train CSV MODEL` / `predict MODEL CSV`."""
    import pickle

    from sklearn.naive_bayes import CategoricalNB, GaussianNB
    from sklearn.preprocessing import OrdinalEncoder

    mode = argv[0]
    if mode == "train":
        path, model = argv[1], argv[2]
        cats, nums, y = peer_read(path)
        encoder = OrdinalEncoder(dtype=np.int64)
        codes = encoder.fit_transform(cats)
        cnb = CategoricalNB().fit(codes, y)
        gnb = GaussianNB().fit(nums, y)
        with open(model, "wb") as f:
            pickle.dump((encoder, cnb, gnb), f, protocol=pickle.HIGHEST_PROTOCOL)
        return 0
    model, path = argv[1], argv[2]
    with open(model, "rb") as f:
        encoder, cnb, gnb = pickle.load(f)
    cats, nums, _ = peer_read(path)
    jll = cnb.predict_joint_log_proba(encoder.transform(cats)) + gnb.predict_joint_log_proba(nums)
    jll -= cnb.class_log_prior_  # the prior was counted twice
    best = jll.argmax(axis=1)
    top = jll[np.arange(len(jll)), best]
    prob = 1.0 / np.exp(jll - top[:, None]).sum(axis=1)
    out = sys.stdout
    for start in range(0, len(best), 100_000):
        stop = min(start + 100_000, len(best))
        out.write(
            "\n".join(
                f"{path}:{i + 2}\t{label}\t{p!r}"
                for i, label, p in zip(range(start, stop), cnb.classes_[best[start:stop]], prob[start:stop].tolist())
            )
            + "\n"
        )
    return 0


# -- speed: measuring ---------------------------------------------------------------------


def run_once(cmd: list[str], stdout=subprocess.DEVNULL, code: tuple | None = None) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of one whole process, via wait4; code:
    (folder, environment) of other nbcli code to run (`before_code`)."""
    start = time.perf_counter()
    # the old code is run from its own folder: the working directory comes first on sys.path
    env, cwd = (code[1], str(code[0])) if code is not None else (None, None)
    proc = subprocess.Popen(cmd, stdout=stdout, stderr=subprocess.PIPE, env=env, cwd=cwd)
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}: {err.decode(errors='replace')[-2000:]}")
    return elapsed, usage.ru_maxrss / 1024


def measure(name: str, cmd: list[str], code: tuple | None = None) -> dict:
    run_once(cmd, code=code)
    times, rss = [], []
    for _ in range(RUNS):
        t, m = run_once(cmd, code=code)
        times.append(t)
        rss.append(m)
    result = {"median": statistics.median(times), "times": times, "rss": max(rss)}
    print(f"  {name}: median {result['median']:.2f} s {times}, peak RSS {result['rss']:.0f} MB", file=sys.stderr)
    return result


def before_code(folder: Path) -> tuple[Path, dict] | None:
    """(source folder, environment) to run nbcli as of commit BEFORE, or None."""
    if not BEFORE:
        return None
    target = folder / f"before-{BEFORE}"
    if not (target / "nbcli" / "__init__.py").exists():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", "-C", str(HERE.parent.parent), "archive", BEFORE, "nbcli"], capture_output=True, check=True
        )
        subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target, dict(os.environ, PYTHONPATH=str(target))


def training_memory(folder: Path, big: Path, r: dict, before) -> tuple[str, list[str]]:
    """(markdown table, commands): peak RSS of training, before and after:
    --calibrate none as measured in `speed` (r), the default calibration
    run once each here."""
    import report

    before_name = f"nbcli {BEFORE} (before)"
    cmd = [*NBCLI, "train", str(big), "--features", "all", "--label-field", "class"]
    cmd += ["-o", str(folder / "memory.nb"), "-q"]
    runs = {}
    for who, code in ((before_name, before), ("nbcli (this code)", None)):
        if who == before_name and before is None:
            continue
        seconds, rss = run_once(cmd, code=code)
        print(f"  {who} train (calibrated): {seconds:.1f} s, peak RSS {rss:.0f} MB", file=sys.stderr)
        runs[who] = {"median": seconds, "rss": rss}
    rows = []
    for calibration, results in (
        ("--calibrate none", {before_name: r.get("before train"), "nbcli (this code)": r["nbcli train"]}),
        ("default (5-fold calibration), one run", runs),
    ):
        for who, result in results.items():
            if result is not None:
                rows.append((who, calibration, result, results.get(before_name)))
    sk = r["scikit-learn train"]
    rows.append(("scikit-learn CategoricalNB + GaussianNB", "(no calibration)", sk, None))
    out = []
    for who, calibration, result, old in rows:
        mb = result["rss"]
        versus = f"{old['rss'] / mb:.1f}x less" if old is not None and old is not result else ""
        out.append(
            [
                who,
                calibration,
                f"{result['median']:.1f} s",
                f"{mb:.0f} MB",
                f"{mb * 2**20 / BIG_ROWS:.0f}",
                f"{mb / sk['rss']:.2f}x",
                versus,
            ]
        )
    header = ["train on 1M rows × 20 columns", "calibration", "time", "peak RSS", "bytes a row", "÷ scikit-learn"]
    commands = [" ".join(["nbcli", *cmd[3:]]).replace(str(folder), "bench-cache/tables")]
    if before is not None:
        commands.append(f"(before: git archive {BEFORE} nbcli, run from that folder with PYTHONPATH set to it)")
    return report.table([*header, "before ÷ after"], out), commands


def profile(args: list[str], top: int = 8) -> list[str]:
    """The top `top` functions by own time of one nbcli run in this process."""
    from click.testing import CliRunner

    from nbcli.cli.main import cli

    profiler = cProfile.Profile()
    profiler.enable()
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    profiler.disable()
    if result.exit_code != 0:
        raise RuntimeError(f"nbcli {' '.join(args)} exited {result.exit_code}: {result.output[-2000:]}")
    stats = pstats.Stats(profiler, stream=io.StringIO())
    total = sum(row[2] for row in stats.stats.values())
    rows = sorted(stats.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    out = []
    for (file, line, func), (_, calls, tottime, _cum, _) in rows:
        where = f"{Path(file).parent.name}/{Path(file).name}:{line}" if line else file
        out.append(f"{func} ({where}): {tottime:.2f} s own time ({100 * tottime / total:.0f}%), {calls} calls")
    return out


def speed(folder: Path) -> tuple[str, list[str], list[str], str, list[str]]:
    """(markdown table, commands, profile lines, training memory table, its commands)."""
    import report

    t = time.perf_counter()
    big = write_big(folder / "big.csv")
    print(f"big table: {big} ({big.stat().st_size / 1e6:.0f} MB, {time.perf_counter() - t:.1f} s)", file=sys.stderr)
    nb_model, sk_model = folder / "big.nb", folder / "big.pkl"
    nb_train = [*NBCLI, "train", str(big), "--features", "all", "--label-field", "class"]
    nb_train += ["--calibrate", "none", "-o", str(nb_model), "-q"]
    nb_predict = [*NBCLI, "predict", str(nb_model), str(big), "-q"]
    sk_train = [PYTHON, str(HERE), "--sklearn-peer", "train", str(big), str(sk_model)]
    sk_predict = [PYTHON, str(HERE), "--sklearn-peer", "predict", str(sk_model), str(big)]
    before = before_code(folder)
    r = {"nbcli train": measure("nbcli train", nb_train)}
    if before is not None:
        r["before train"] = measure(f"nbcli {BEFORE} train", nb_train, before)
    r["scikit-learn train"] = measure("scikit-learn train", sk_train)
    r["nbcli predict"] = measure("nbcli predict", nb_predict)
    if before is not None:
        r["before predict"] = measure(f"nbcli {BEFORE} predict", nb_predict, before)
    r["scikit-learn predict"] = measure("scikit-learn predict", sk_predict)
    # before `agreement`, which holds both outputs: a child forked from a big process counts its pages in ru_maxrss
    memory_table, memory_commands = training_memory(folder, big, r, before)
    agree = agreement(nb_predict, sk_predict)
    rows = []
    for job, who in (("train", "nbcli"), ("train", "before"), ("predict", "nbcli"), ("predict", "before")):
        if f"{who} {job}" not in r:
            continue
        nb, sk = r[f"{who} {job}"], r[f"scikit-learn {job}"]
        ratio = nb["median"] / sk["median"]
        what = "training" if job == "train" else "scoring (predict, all rows)"
        rows.append(
            [
                what if who == "nbcli" else f"{what}, nbcli {BEFORE} (before)",
                f"{nb['median']:.2f} s",
                f"{sk['median']:.2f} s",
                f"{ratio:.2f}x" + ("" if ratio <= 2 else " (**not met**)"),
                f"{nb['rss']:.0f} MB ({nb['rss'] * 2**20 / BIG_ROWS:.0f} B a row)",
                f"{sk['rss']:.0f} MB ({sk['rss'] * 2**20 / BIG_ROWS:.0f} B a row)",
                f"{nb['rss'] / sk['rss']:.2f}x",
            ]
        )
    header = [
        "1M rows × 20 columns",
        "nbcli",
        "scikit-learn",
        "nbcli / scikit-learn (target ≤ 2x)",
        "nbcli peak RSS",
        "scikit-learn peak RSS",
        "RSS ratio",
    ]
    commands = [
        " ".join(["nbcli", *nb_train[3:]]),
        " ".join(["nbcli", *nb_predict[3:]]) + " > /dev/null",
        " ".join(["python tables.py", *sk_train[2:]]),
        " ".join(["python tables.py", *sk_predict[2:]]) + " > /dev/null",
    ]
    commands = [c.replace(str(folder), "bench-cache/tables") for c in commands]
    print("profiling nbcli train and predict once each ...", file=sys.stderr)
    prof = ["train:", *profile(nb_train[3:]), "predict:", *profile(nb_predict[3:])]
    prof.append(f"predicted labels agreeing with scikit-learn's: {100 * agree:.3f}%")
    return report.table(header, rows), commands, prof, memory_table, memory_commands


def agreement(nb_predict: list[str], sk_predict: list[str]) -> float:
    """The share of rows where nbcli and scikit-learn predict the same class."""
    nb = subprocess.run(nb_predict, capture_output=True, text=True, check=True).stdout.splitlines()
    sk = subprocess.run(sk_predict, capture_output=True, text=True, check=True).stdout.splitlines()
    assert len(nb) == len(sk), (len(nb), len(sk))
    same = sum(a.split("\t")[1] == b.split("\t")[1] for a, b in zip(nb, sk))
    return same / len(nb)


# -- the report -----------------------------------------------------------------------------


def main() -> int:
    import report
    from fetch import CACHE

    folder = CACHE / "tables"
    folder.mkdir(parents=True, exist_ok=True)
    acc_table, acc_commands, notes = accuracy(folder)
    speed_table, speed_commands, prof, memory_table, memory_commands = speed(folder)
    code = "\n".join(["```", *acc_commands, "```"])
    text = f"""## Table models (issue 17)

### Accuracy: 10-fold cross-validation beside scikit-learn's GaussianNB

{acc_table}

Accuracy in %, mean ± population std over the 10 folds. The tables are scikit-learn's package data
(`sklearn/datasets/data/{{iris,wine_data,breast_cancer}}.csv`, read at run time) rewritten as plain CSV
(`f0,...,f{{n-1}},class`). GaussianNB (defaults) is fitted and scored on exactly nbcli's folds
(`nbcli.fit.crossval.stratified_folds`, seed 0), so the differences are paired. Target: nbcli's best
numeric model ≥ GaussianNB on each table. nbcli's commands (iris shown; same for the others):

{code}
{"".join(f"{chr(10)}Note: {n}{chr(10)}" for n in notes)}
### Speed: 1,000,000 rows against scikit-learn

{speed_table}

A seeded synthetic table (`bench-cache/tables/big.csv`, 1,000,000 rows: 10 categorical columns of 6 values
whose distribution depends on the class, 10 numeric columns Gaussian per class, 3 classes). Wall time of
the whole process, median of {RUNS} runs after a warm-up; peak RSS is the largest ru_maxrss (B a row:
÷ 1,000,000). The "(before)" rows run the code of commit {BEFORE} on the same files in the same run. The
scikit-learn peer reads the CSV with numpy (columns chosen by name; nbcli infers them), encodes with
OrdinalEncoder, fits CategoricalNB + GaussianNB and pickles them; scoring sums the two joint
log-likelihoods minus one log prior and writes the same `id, label, probability` lines. Target: within
2x of scikit-learn.

```
{chr(10).join(speed_commands)}
```

### Memory to train, before and after issue 25

{memory_table}

In the same run as the table above: `--calibrate none` and scikit-learn are its training rows (median
of {RUNS}, largest peak); the calibrated runs are one run each. Bytes a row: peak RSS ÷ 1,000,000
rows, the whole process (a Python interpreter with nbcli's imports is about 85 MB of it). nbcli
reads the rows in batches into columns: categorical columns as one-byte category codes, numeric ones
as float64, plus each undecided column's cell texts, zlib-compressed, until its type is inferred; the
model is the same as before, bit for bit.

```
{chr(10).join(memory_commands)}
```

Top costs of one nbcli run each (cProfile, own time):

```
{chr(10).join(prof)}
```

`make bench-tables` ({report.machine()}).
"""
    report.update_section("tables", text)
    print(text)
    return 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--sklearn-peer":
        sys.exit(sklearn_peer(sys.argv[2:]))
    sys.exit(main())
