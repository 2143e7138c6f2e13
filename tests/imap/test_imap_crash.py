"""`nbcli imap` killed (kill -9) at random points, 20 times, then run to
the end: every message is filed once, every correction learned once; the
mailbox and the model end as one uninterrupted pass leaves them (a second
Dovecot with the same mail and the same corrections is the reference)."""

from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time

from imap_helpers import SlowProxy, append, folder, imap_args, samples

from conftest import REPO, model_info, run

KILLS = 20


def setup(server, model, state) -> None:
    """First pass over 24 messages, then a user's corrections and 70 new messages."""
    append(server, "INBOX", samples("spam", 10) + samples("ham", 14))
    assert run(imap_args(server, model, state, "--batch", "4")).exit_code == 0
    junk, inbox = folder(server, "Junk"), folder(server, "INBOX")
    hams = sorted(u for u, (flags, _) in inbox.items() if "$notjunk" in flags)
    filed = sorted(junk)
    with server.client() as imap:
        imap.select("Junk")
        assert imap.uid("MOVE", f"{filed[0]},{filed[1]}", "INBOX")[0] == "OK"
        assert imap.uid("STORE", str(filed[2]), "+FLAGS", "($NotJunk)")[0] == "OK"
        imap.select("INBOX")
        assert imap.uid("MOVE", f"{hams[0]},{hams[1]}", "Junk")[0] == "OK"
        assert imap.uid("STORE", str(hams[2]), "+FLAGS", "($Junk)")[0] == "OK"
    append(server, "INBOX", samples("spam", 40)[10:] + samples("ham", 54)[14:])


def summary_of(stdout: bytes) -> dict:
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", stdout.decode())}


def contents(server) -> dict:
    """folder -> sorted (message, keywords nbcli deals in) of every message."""
    kept = {"$junk", "$notjunk", "$nbcliunsure", "\\seen", "\\deleted"}
    return {
        name: sorted((data, tuple(sorted(flags & kept))) for flags, data in folder(server, name).values())
        for name in ("INBOX", "Junk")
    }


def test_kill_9_at_random_points_then_a_full_pass_ends_as_one_uninterrupted_pass(
    make_dovecot, sample_mail_model, tmp_path
):
    crashed, reference = make_dovecot(), make_dovecot()
    models = {}
    for name, server in (("crashed", crashed), ("reference", reference)):
        models[name] = tmp_path / f"{name}.nb"
        models[name].write_bytes(sample_mail_model.read_bytes())
        setup(server, models[name], tmp_path / f"{name}.json")
    base = model_info(models["reference"])["record"]["per_class"]
    env = dict(os.environ, PYTHONPATH=str(REPO))

    proxies = {name: SlowProxy(server.port, 0.015) for name, server in (("crashed", crashed), ("reference", reference))}

    def command(name, server):
        args = imap_args(server, models[name], tmp_path / f"{name}.json", "--batch", "1", tls=False)
        args[args.index("--port") + 1] = proxies[name].port
        return [sys.executable, "-m", "nbcli", *map(str, args)]

    # the reference pass, uninterrupted, and one with nothing to do: the kills land between them
    started = time.monotonic()
    done = subprocess.run(command("reference", reference), env=env, capture_output=True, timeout=300)
    whole = time.monotonic() - started
    said = summary_of(done.stdout)
    assert said["learned_spam"] == 3 and said["learned_ham"] == 3  # 2 moved in + 1 marked; 2 moved back + 1 marked
    started = time.monotonic()
    subprocess.run(command("reference", reference), env=env, capture_output=True, timeout=300)
    idle = time.monotonic() - started
    rng = random.Random(29)
    for _ in range(KILLS):
        process = subprocess.Popen(
            command("crashed", crashed), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        # from before the work starts to a twentieth of it in: most kills land in the pass's work
        delay = rng.uniform(idle * 0.9, idle + max(whole - idle, 0.05) * 0.05)
        time.sleep(delay)
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait()
    final = subprocess.run(command("crashed", crashed), env=env, capture_output=True, timeout=300)
    assert final.returncode == 0, final.stderr
    assert contents(crashed) == contents(reference)
    assert sum(len(messages) for messages in contents(crashed).values()) == 94  # each message once
    for proxy in proxies.values():
        proxy.close()
    got, want = model_info(models["crashed"]), model_info(models["reference"])
    assert (
        got["record"]["per_class"] == want["record"]["per_class"] == {"ham": base["ham"] + 3, "spam": base["spam"] + 3}
    )
    assert [c["tokens"] for c in got["classes"]] == [c["tokens"] for c in want["classes"]]
    assert got["record"]["entries"] == want["record"]["entries"]
