"""The README's client configurations for `nbcli serve`, tried with the
real clients from Debian's packages (installed by the tests when missing,
as root with apt-get, as in CI; each test skips, saying so, where a package
cannot be had): Exim's `spam =` ACL condition (`exim -bh`),
spamass-milter driven by miltertest, and spamc under procmail."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import SAMPLES, debian_tool, docs_text, run

SPAM = (SAMPLES / "mail" / "test" / "spam" / "0001.eml").read_bytes()
HAM = (SAMPLES / "mail" / "test" / "ham" / "0001.eml").read_bytes()


@pytest.fixture(scope="module")
def daemon(tmp_path_factory):
    """A server on a Unix socket and a free TCP port: (socket path, port)."""
    model = tmp_path_factory.mktemp("serve") / "m.nb"
    assert run(["train", SAMPLES / "mail" / "train", "-o", model, "-q"]).exit_code == 0
    folder = tempfile.mkdtemp(dir="/tmp", prefix="nbc")
    path = os.path.join(folder, "s.sock")
    proc = subprocess.Popen(
        [sys.executable, "-m", "nbcli", "serve", model, "--socket", path, "--port", "0", "--workers", "2"],
        stderr=subprocess.PIPE,
        text=True,
    )
    line = proc.stderr.readline()
    port = int(re.search(r"tcp:127\.0\.0\.1:(\d+)", line).group(1))
    yield path, port
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == 0
    shutil.rmtree(folder, ignore_errors=True)


def _smtp(message: bytes) -> bytes:
    body = message.replace(b"\n.", b"\n..").replace(b"\n", b"\r\n")
    return (
        b"HELO client.example\r\nMAIL FROM:<a@example.org>\r\nRCPT TO:<b@test.example>\r\nDATA\r\n"
        + body
        + b"\r\n.\r\nQUIT\r\n"
    )


def test_exim_rejects_spam_with_the_score_and_report_and_accepts_ham(daemon, tmp_path):
    (exim,) = debian_tool("exim4-daemon-heavy", "exim4", usable=_scans_content)
    _, port = daemon
    readme = docs_text()
    acl = re.search(r"(deny  message = This message scored.*?\n)```", readme, re.S).group(1)
    acl = re.sub(r"(?m)^", "  ", acl.rstrip())
    config = tmp_path / "exim.conf"
    config.write_text(
        f"primary_hostname = test.example\nspamd_address = 127.0.0.1 {port}\n"
        "acl_smtp_rcpt = acl_rcpt\nacl_smtp_data = acl_data\nbegin acl\nacl_rcpt:\n  accept\n"
        f"acl_data:\n{acl}\n  accept\n"
    )
    probe = subprocess.run([exim, "-C", str(config), "-bV"], capture_output=True, text=True, timeout=30)
    if probe.returncode != 0:
        why = [line.strip() for line in probe.stderr.splitlines() if line.strip()]  # exim's last word, one line
        pytest.skip(f"this exim cannot run the ACL ({why[-1][:80] if why else 'no content scanning?'})")
    spam = subprocess.run([exim, "-C", str(config), "-bh", "127.0.0.1"], input=_smtp(SPAM), capture_output=True)
    assert re.search(rb"550-This message scored \d+\.\d points \(nbcli Naive Bayes:", spam.stdout), spam.stdout[-800:]
    ham = subprocess.run([exim, "-C", str(config), "-bh", "127.0.0.1"], input=_smtp(HAM), capture_output=True)
    assert b"250 OK id=" in ham.stdout and b"550" not in ham.stdout, ham.stdout[-800:]


def _scans_content(paths) -> bool:
    """An exim built with content scanning (the `spam =` condition):
    Debian's exim4-daemon-heavy, not -light."""
    shown = subprocess.run([paths[0], "-bV"], capture_output=True, text=True, timeout=30)
    return "Content_Scanning" in shown.stdout


def _lua(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\r", "\\r").replace("\n", "\\n") + '"'


def test_spamass_milter_adds_the_spam_headers(daemon, tmp_path):
    (milter,) = debian_tool("spamass-milter", "spamass-milter")  # it brings spamc
    (tester,) = debian_tool("miltertest", "miltertest")
    _, port = daemon
    sock = os.path.join(tempfile.mkdtemp(dir="/tmp", prefix="nbm"), "milter.sock")
    proc = subprocess.Popen([milter, "-p", sock, "--", "-d", "127.0.0.1", "-p", str(port)], start_new_session=True)
    try:
        for _ in range(100):
            if os.path.exists(sock):
                break
            time.sleep(0.05)
        text = SPAM.decode("latin-1")
        head, body = text.split("\n\n", 1)
        lines = [
            f'conn = mt.connect("unix:{sock}")',
            'assert(conn, "connect")',
            'assert(mt.conninfo(conn, "client.example", "127.0.0.1") == nil)',
            'assert(mt.helo(conn, "client.example") == nil)',
            'mt.macro(conn, SMFIC_MAIL, "i", "QID1")',
            'assert(mt.mailfrom(conn, "<a@example.org>") == nil)',
            'assert(mt.rcptto(conn, "<b@test.example>") == nil)',
        ]
        for name, value in re.findall(r"(?m)^([^\s:]+):[ \t]*(.*(?:\n[ \t].*)*)", head):
            lines.append(f"assert(mt.header(conn, {_lua(name)}, {_lua(value)}) == nil)")
        lines += [
            "assert(mt.eoh(conn) == nil)",
            f"assert(mt.bodystring(conn, {_lua(body.replace(chr(10), chr(13) + chr(10)))}) == nil)",
            "assert(mt.eom(conn) == nil)",
            'for _, h in ipairs({"X-Spam-Flag", "X-Spam-Status"}) do',
            "  if mt.eom_check(conn, MT_HDRINSERT, h) or mt.eom_check(conn, MT_HDRADD, h) then",
            '    print(h .. " added") else print("no " .. h) end',
            "end",
            "mt.disconnect(conn)",
        ]
        script = tmp_path / "spam.lua"
        script.write_text("\n".join(lines) + "\n")
        out = subprocess.run([tester, "-s", str(script)], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert "X-Spam-Flag added" in out.stdout and "X-Spam-Status added" in out.stdout, out.stdout
    finally:  # without -f (which forks it into the background) it is this process: end its group
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait(timeout=10)


def test_the_readme_spamc_recipe_under_procmail(daemon, tmp_path):
    (procmail,) = debian_tool("procmail", "procmail")
    (spamc,) = debian_tool("spamc", "spamc")
    path, _ = daemon
    readme = docs_text()
    recipe = re.search(r"(:0 fw\n\| spamc -U \S+)\n", readme).group(1)
    recipe = re.sub(r"-U \S+", f"-U {path}", recipe)
    mail = tmp_path / "Mail"
    mail.mkdir()
    rc = tmp_path / "rc"
    rc.write_text(
        f"SHELL=/bin/sh\nPATH={os.path.dirname(spamc)}:/usr/bin:/bin\nMAILDIR={mail}\n"
        f"DEFAULT={mail}/inbox.mbox\n\n{recipe}\n"
    )
    for message in (SPAM, HAM):
        proc = subprocess.run([procmail, "-m", str(rc)], input=message, capture_output=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
    inbox = (mail / "inbox.mbox").read_bytes()
    assert len(re.findall(rb"(?m)^X-Spam-Flag: YES$", inbox)) == 1 and inbox.count(b"X-Spam-Status: ") == 2


def test_the_readme_systemd_unit_verifies(tmp_path):
    """systemd-analyze checks the unit (this machine runs no systemd, so the
    unit itself is not started here; its ExecReload and KillSignal are the
    SIGHUP and SIGTERM that tests/spam/test_serve.py sends)."""
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    readme = docs_text()
    unit = re.search(r"(\[Unit\].*?WantedBy=multi-user\.target\n)", readme, re.S).group(1)
    unit = unit.replace("/usr/local/bin/nbcli", str(shutil.which("nbcli") or sys.executable))
    unit = re.sub(r"(?m)^User=nbcli$", "User=root", unit)  # a user that exists everywhere
    path = tmp_path / "nbcli.service"
    path.write_text(unit)
    out = subprocess.run([analyze, "verify", str(path)], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "nbcli.service" not in out.stderr, out.stderr
