"""Connecting and logging in to the IMAP server, with the standard
library's `imaplib` (it speaks everything a pass needs: UID commands,
BODY.PEEK, keywords, MOVE and UID EXPUNGE through `IMAP4.uid`; no library
outside the standard one is needed for it).

TLS always verifies the server's certificate and name
(`ssl.create_default_context`, with `cafile` for a private CA). Every
failure before the pass is one NbcliError line with a hint: a refused
connection, a name that does not resolve, a certificate that does not
verify, a login the server refuses. The password is sent only by
`IMAP4.login` and appears in no message (imaplib's own debug output is
off).
"""

from __future__ import annotations

import imaplib
import socket
import ssl

from nbcli.errors import NbcliError
from nbcli.imap.settings import Settings


def tls_context(settings: Settings) -> ssl.SSLContext:
    try:
        return ssl.create_default_context(cafile=settings.cafile)
    except (OSError, ssl.SSLError) as exc:
        raise NbcliError(
            f"--cafile {settings.cafile}: not a readable PEM certificate ({exc})",
            hint="give the PEM file of your CA's certificate",
        ) from None


def connect(settings: Settings) -> imaplib.IMAP4:
    """An IMAP4 connection to settings.host, TLS verified (or plain text
    where settings.security is "none"), logged in as settings.user, its
    `capabilities` those the server announces after login."""
    settings.checked()
    where = f"{settings.host}:{settings.port_number}"
    context = tls_context(settings) if settings.security != "none" else None
    try:
        if settings.security == "tls":
            imap = imaplib.IMAP4_SSL(settings.host, settings.port_number, ssl_context=context, timeout=settings.timeout)
        else:
            imap = imaplib.IMAP4(settings.host, settings.port_number, timeout=settings.timeout)
            if settings.security == "starttls":
                if "STARTTLS" not in imap.capabilities:
                    imap.shutdown()
                    raise NbcliError(f"{where} does not offer STARTTLS", hint="use --tls (port 993)")
                imap.starttls(ssl_context=context)
    except ssl.SSLCertVerificationError as exc:
        raise NbcliError(
            f"the certificate of {where} could not be verified: {exc.verify_message}",
            hint="give --cafile with the certificate of the CA that signed it",
        ) from None
    except ssl.SSLError as exc:
        raise NbcliError(
            f"TLS with {where} failed: {exc.reason or exc}",
            hint="check --port: 993 is TLS, 143 plain text or --starttls",
        ) from None
    except ConnectionRefusedError:
        raise NbcliError(f"cannot connect to {where}: connection refused", hint="check --host and --port") from None
    except socket.gaierror as exc:
        raise NbcliError(f"cannot connect to {where}: {exc.strerror}", hint="check --host") from None
    except UnicodeError:  # the name's IDNA encoding failed (a label over 63 characters, say): before any lookup
        raise NbcliError(f"cannot connect to {where}: not a valid host name", hint="check --host") from None
    except TimeoutError:
        raise NbcliError(f"cannot connect to {where}: timed out", hint="check --host and --port") from None
    except OSError as exc:
        raise NbcliError(f"cannot connect to {where}: {exc.strerror or exc}", hint="check --host and --port") from None
    except imaplib.IMAP4.error as exc:
        raise NbcliError(f"{where} does not speak IMAP as expected: {_text(exc)}", hint="check --port") from None
    try:
        imap.login(settings.user, settings.password)
        imap.capabilities = tuple(imap.capability()[1][-1].decode("ascii", "replace").upper().split())
    except imaplib.IMAP4.abort:
        raise
    except imaplib.IMAP4.error as exc:
        _close(imap)
        raise NbcliError(
            f"{where} refused the login as {settings.user}: {_text(exc)}",
            hint="check --user and the password (--password-file or NBCLI_IMAP_PASSWORD)",
        ) from None
    return imap


def _text(exc: Exception) -> str:
    text = str(exc.args[0] if exc.args else exc)
    if text.startswith("b'") or text.startswith('b"'):
        text = text[2:-1]
    return text.strip() or type(exc).__name__


def _close(imap: imaplib.IMAP4) -> None:
    try:
        imap.shutdown()
    except OSError:
        pass


def logout(imap: imaplib.IMAP4) -> None:
    """Log out, ignoring a connection that is gone already."""
    try:
        imap.logout()
    except (OSError, imaplib.IMAP4.error):
        pass
