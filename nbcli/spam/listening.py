"""`nbcli serve`'s listening sockets: a Unix socket and/or TCP (on
loopback unless told otherwise), bound by the supervisor before it forks
its workers.

The socket file: `--socket PATH` removes only a socket that refuses
connections (left by a daemon that died); any other file there is an
error, and at exit the path is removed only if it is still this daemon's
socket (`socket_identity`, `remove_socket`). The socket is made mode 0660
by bind (under a umask; no chmod, which would follow a link). The default
folder ($XDG_RUNTIME_DIR/nbcli, else /tmp/nbcli-UID) is made 0700, or used
only if it is a real folder (lstat) of this uid with no group or other
access (`private_folder`).

The refusals are ParameterErrors of `socket_path` (Settings' field): the
supervisor binds before it forks, so they reach the command line's error
boundary, which says --socket.
"""

from __future__ import annotations

import errno
import os
import socket
import stat

from nbcli.errors import NbcliError, ParameterError
from nbcli.spam.settings import Settings


def default_socket() -> str:
    """Where the Unix socket goes by default: $XDG_RUNTIME_DIR/nbcli/spamd.sock,
    else /tmp/nbcli-<uid>/spamd.sock (its folder must be private: see
    `private_folder`)."""
    base = os.environ.get("XDG_RUNTIME_DIR")
    folder = os.path.join(base, "nbcli") if base else f"/tmp/nbcli-{os.getuid()}"
    return os.path.join(folder, "spamd.sock")


def private_folder(folder: str) -> None:
    """Make `folder` with mode 0700, or accept it only if it is a real folder
    (not a link: lstat) owned by this uid with no group or other access, as
    OpenSSH and Dovecot treat their runtime folders. Anything else could be
    another local user's, who could put their own socket in ours' place."""
    try:
        os.mkdir(folder, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise ParameterError(
            "socket_path",
            "cannot make {folder}: {reason}",
            hint="give {socket_path} PATH",
            folder=folder,
            reason=exc.strerror,
        ) from None
    st = os.lstat(folder)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o077:
        what = (
            "a link"
            if stat.S_ISLNK(st.st_mode)
            else "not a folder"
            if not stat.S_ISDIR(st.st_mode)
            else f"owned by uid {st.st_uid}"
            if st.st_uid != os.getuid()
            else f"open to others (mode {stat.S_IMODE(st.st_mode):04o})"
        )
        raise ParameterError(
            "socket_path",
            "refusing the socket folder {folder}: it is {what}; it must be a folder of uid {uid} with mode 0700",
            hint="remove it (nbcli makes it again), or give {socket_path} PATH",
            folder=folder,
            what=what,
            uid=os.getuid(),
        )


def bind(settings: Settings) -> list[socket.socket]:
    """The listening sockets (non-blocking), Unix socket first."""
    sockets = []
    if settings.socket_path:
        sockets.append(_bind_unix(settings.socket_path, settings.private_socket_folder))
    if settings.port is not None:
        for address in settings.listen:
            family = socket.AF_INET6 if ":" in address else socket.AF_INET
            sock = socket.socket(family, socket.SOCK_STREAM)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                sock.bind((address, settings.port))
            except OSError as exc:
                sock.close()
                if address == "::1" and exc.errno in (errno.EADDRNOTAVAIL, errno.EAFNOSUPPORT):
                    continue  # no IPv6 loopback here
                raise NbcliError(f"cannot listen on {address} port {settings.port}: {exc.strerror or exc}") from None
            sockets.append(sock)
    for sock in sockets:
        sock.listen(128)
        sock.setblocking(False)
    return sockets


def _bind_unix(path: str, private: bool) -> socket.socket:
    """A Unix socket bound at `path`, mode 0660. Only a socket that refuses
    connections (a daemon died) is removed to make room; any other file is
    left alone and named in the error.

    The default place's folder is made (`private_folder`); the folder of a
    --socket given must exist. It was made, mode 0700, which (as root, for
    /run/nbcli) locked out the mail server's user the socket's mode 0660
    lets in, and a typo made a folder anywhere: the folder's mode says who
    may connect, which is the administrator's decision (or systemd's
    RuntimeDirectory=)."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        if private:
            private_folder(folder)
        elif not os.path.lexists(folder):  # (a file there fails below, as any path under a file does)
            raise ParameterError(
                "socket_path",
                "cannot listen on {path}: there is no folder {folder}",
                hint="create it (its mode decides who may connect: mkdir -m 755 {folder}), "
                "or let systemd make it (RuntimeDirectory=)",
                path=path,
                folder=folder,
            )
    except OSError as exc:
        raise _cannot_listen(path, exc) from None
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise _cannot_listen(path, exc) from None
    if st is not None:
        if not stat.S_ISSOCK(st.st_mode):
            raise ParameterError(
                "socket_path",
                "{path} exists and is not a socket; nbcli serve replaces only a socket left by a daemon that died",
                hint="give {socket_path} a path of its own",
                path=path,
            )
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            probe.connect(path)
        except ConnectionRefusedError:
            os.unlink(path)  # a socket left by a daemon that died
        except OSError as exc:
            raise _cannot_listen(path, exc) from None
        else:
            raise ParameterError(
                "socket_path",
                "{path}: another server is listening there",
                hint="stop it, or give {socket_path}",
                path=path,
            )
        finally:
            probe.close()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o117)  # the socket is made 0660 by bind itself: no chmod, which would follow a link
    try:
        sock.bind(path)
    except OSError as exc:
        sock.close()
        raise _cannot_listen(path, exc) from None
    finally:
        os.umask(mask)
    return sock


_UNIX_PATH_MAX = 107  # bytes of a Unix socket's path (sun_path is 108 on Linux, with its terminating NUL)


def _cannot_listen(path: str, exc: OSError) -> ParameterError:
    n = len(os.fsencode(path))
    if exc.strerror is None and n > _UNIX_PATH_MAX:  # bind's "AF_UNIX path too long" has no strerror
        return ParameterError(
            "socket_path",
            "cannot listen on {path}: it is {n} bytes long, more than a Unix socket's path can be ({most})",
            hint="give {socket_path} a shorter path",
            path=path,
            n=n,
            most=_UNIX_PATH_MAX,
        )
    return ParameterError(
        "socket_path",
        "cannot listen on {path}: {reason}",
        hint="give {socket_path} a writable place",
        path=path,
        reason=exc.strerror or exc,
    )


def socket_identity(path: str):
    """(device, inode) of the socket at `path`, None if it is not a socket."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISSOCK(st.st_mode) else None


def remove_socket(path: str, identity) -> None:
    """Unlink `path` only if it is still the socket this daemon bound."""
    if identity is not None and socket_identity(path) == identity:
        try:
            os.unlink(path)
        except OSError:
            pass


def addresses(sockets) -> list[str]:
    out = []
    for sock in sockets:
        if sock.family == socket.AF_UNIX:
            out.append(f"unix:{sock.getsockname()}")
        else:
            host, port = sock.getsockname()[:2]
            out.append(f"tcp:{host}:{port}" if ":" not in host else f"tcp:[{host}]:{port}")
    return out
