"""Reaching a checked path beneath its root, one folder at a time, with no link followed blindly.

:meth:`Sandbox.resolve` checks a path by its text and its real path; then every
file operation reaches it with :func:`beneath`. The walk starts from a
descriptor of the path's root and opens each folder relative to the one before
(``openat`` with ``O_NOFOLLOW | O_DIRECTORY``), so the kernel follows no
symbolic link on the way, and a folder swapped for a link between the check and
the open is met as a link, not walked through. The checked path is the real one,
so a link on the way appeared after the check: it is resolved here, one
component at a time, and followed only while it stays beneath the same root and
out of ``.git`` (``symlink_outside_sandbox``, ``git_internals`` otherwise). The
last component is opened by the operation itself, relative to its folder, with
``O_NOFOLLOW``.

A folder moved (renamed) out of the root while a walk is inside it is not
caught; that needs write access to both places, and to move is not to link.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from plansmith.domains.code._errors import RefusedError, os_failure
from plansmith.domains.code._paths import Resolved, git_refusal, link_out_refusal

__all__ = ["MAX_LINKS", "beneath", "open_beneath", "stat_beneath"]

MAX_LINKS = 40  # links followed in one walk, as the kernel's own limit
_FOLDER = os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _link(name: str, folder: int) -> str | None:
    """The target of the link ``name`` in ``folder``, or None if it is not a link."""
    try:
        return os.readlink(name, dir_fd=folder)
    except OSError:
        return None


def _into(part: str, folder: int, make: bool) -> int | str:
    """A descriptor of the folder ``part`` in ``folder`` (made first if missing and ``make``),
    or, if ``part`` is a link, its target, to walk in its place."""
    try:
        return os.open(part, _FOLDER, dir_fd=folder)
    except FileNotFoundError:
        if not make:
            raise
        with suppress(FileExistsError):
            os.mkdir(part, dir_fd=folder)
        return _into(part, folder, make=False)  # whatever is there now, made by us or not
    except OSError as error:
        link = _link(part, folder)
        if error.errno not in (errno.ENOTDIR, errno.ELOOP) or link is None:
            raise
        return link


def _refusal(error: OSError, path: str) -> RefusedError:
    failure = os_failure(error, path)
    assert isinstance(failure, RefusedError)
    return failure


def _inside_root(link: str, root: Path) -> list[str] | None:
    """The components of an absolute link's target below ``root``, or None if not below it."""
    names = [p for p in link.split("/") if p not in ("", ".")]
    top = list(root.parts[1:])
    return names[len(top) :] if names[: len(top)] == top else None


@contextmanager
def beneath(target: Resolved, *, make_folders: bool = False) -> Iterator[tuple[int, str]]:
    """``(folder, name)``: the folder holding ``target``, reached from its root, and its name there.

    ``name`` is ``"."`` when ``target`` is that folder itself. Missing folders on the
    way are made when ``make_folders``. Raises :class:`OSError` as opening would (a
    missing folder, a file where a folder should be) and :class:`RefusedError` for a
    link that leads out of the root or into ``.git``, and for more than
    :data:`MAX_LINKS` links on the way (``symlink_loop``: a ``loop -> loop`` link).
    The descriptors are closed on exit.
    """
    folders = [os.open(target.root, _FOLDER)]
    try:
        pending = target.relative.split("/")[::-1]  # a stack: the next component last
        name = "."
        links = 0
        while pending:
            part = pending.pop()
            if part in ("", "."):
                continue
            if part == "..":
                if len(folders) == 1:
                    raise link_out_refusal(target.relative)
                os.close(folders.pop())
                continue
            if part.casefold() == ".git":
                raise git_refusal(target.relative)
            if pending:
                into = _into(part, folders[-1], make_folders)
                if isinstance(into, int):
                    folders.append(into)
                    continue
                link = into
            else:
                last = _link(part, folders[-1])
                if last is None:
                    name = part
                    break
                link = last
            links += 1
            if links > MAX_LINKS:
                loop = OSError(errno.ELOOP, os.strerror(errno.ELOOP), target.relative)
                raise _refusal(loop, target.relative)
            if link.startswith("/"):
                below = _inside_root(link, target.root)
                if below is None:
                    raise link_out_refusal(target.relative)
                while len(folders) > 1:
                    os.close(folders.pop())
                pending.extend(reversed(below))
            else:
                pending.extend(reversed(link.split("/")))
        yield folders[-1], name
    finally:
        for folder in folders:
            os.close(folder)


def open_beneath(target: Resolved, flags: int, mode: int = 0o644) -> int:
    """``os.open`` of ``target`` (with ``O_NOFOLLOW | O_CLOEXEC``) reached by :func:`beneath`."""
    with beneath(target) as (folder, name):
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=folder)


def stat_beneath(target: Resolved) -> os.stat_result | None:
    """The ``lstat`` of ``target`` reached by :func:`beneath`; None if it does not exist."""
    try:
        with beneath(target) as (folder, name):
            return os.stat(name, dir_fd=folder, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None
