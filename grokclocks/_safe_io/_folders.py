"""Folder walks: no link followed, bounded in entries (one budget per read) and depth; copies through the door."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path

from .. import _validate as V
from . import _limits
from ._limits import _AT, _BUDGET, _DIR, _NOFOLLOW, _Budget, kind, linked_folder


def _paths(root: Path, rels: list[tuple[str, ...]]) -> list[Path]:
    """`root / rel` for each relative path, in the order of the parts (sorting tuples of str, not `Path`s, which
    compare ten times slower)."""
    base = os.fspath(root)
    return [Path(os.path.join(base, *rel)) for rel in sorted(rels)]



class _Folders:
    """The methods of `Reader` that list folders and copy them."""

    def walk(self, root: str | os.PathLike, match: Callable[[str], bool], *, named: str | os.PathLike,
             name: str | None = None, max_entries: int | None = None,
             skip: Callable[[tuple[str, ...]], bool] | None = None) -> list[Path]:
        """Every path under the folder `root` whose file name `match`es, sorted: files, links and other
        non-folders alike (a link found is refused when it is opened, not followed here).

        The walk follows no link to a folder, lists at most `max_entries` entries in all (more is an error:
        not a run folder) and descends at most `MAX_DIR_DEPTH` levels; `skip(parts)` leaves out the folder of
        relative `parts`.  `root` is opened as `open_regular` opens a file (a link followed only where it is
        `named`)."""
        root = Path(root)
        name = name or root.name or str(root)
        found: list[tuple[str, ...]] = []

        def visit(rel: tuple[str, ...], entry: os.DirEntry) -> None:
            if not entry.is_dir(follow_symlinks=False) and match(entry.name):
                found.append(rel)

        self._walk(root, named, name, max_entries, visit, skip)
        return _paths(root, found)

    def subdirs(self, path: str | os.PathLike, *, named: str | os.PathLike, name: str | None = None,
                max_entries: int | None = None) -> list[Path]:
        """The folders directly inside `path` (not links to folders), sorted; at most `max_entries` entries are
        listed (more is an error).  A link to a folder among them (its name not starting with a dot) is
        recorded in the read's `listing_budget` (`linked`), so that the reader can say it was not read."""
        path = Path(path)
        name = name or path.name or str(path)
        budget = _BUDGET.get()
        key = (os.path.abspath(path), os.path.abspath(named))
        if budget is not None and key in budget.subdirs:  # listed once per read, however often it is asked
            return list(budget.subdirs[key])
        found: list[tuple[str, ...]] = []

        def visit(rel: tuple[str, ...], entry: os.DirEntry) -> None:
            if entry.is_dir(follow_symlinks=False):
                found.append(rel)

        self._walk(path, named, name, max_entries, visit, lambda parts: True, links=lambda parts: not
                   parts[-1].startswith("."))
        out = _paths(path, found)
        if budget is not None:
            budget.subdirs[key] = out
        return list(out)

    def _walk(self, root: Path, named: str | os.PathLike, name: str, max_entries: int | None,
              visit: Callable[[tuple[str, ...], os.DirEntry], None],
              skip: Callable[[tuple[str, ...]], bool] | None,
              links: Callable[[tuple[str, ...]], bool] | None = None) -> None:
        """List `root` (see `walk`); each link to a folder met is recorded in the budget's `linked` unless `skip`
        leaves its name out (or `links`, when given, does not accept it): the walk does not enter it, and the
        reader says so."""
        max_entries = _limits.MAX_DIR_ENTRIES if max_entries is None else max_entries
        budget = _BUDGET.get() or _Budget(max_entries)
        limit = min(max_entries, budget.limit)
        seen = 0
        report = links or (lambda parts: not (skip and skip(parts)))

        def count(sub: tuple[str, ...], entry: os.DirEntry) -> None:
            nonlocal seen
            seen += 1
            budget.left -= 1
            if seen > max_entries or budget.left < 0:
                raise self._too_many(name, limit)
            if linked_folder(entry) and report(sub):
                budget.note_link(name, sub)

        if not _AT:  # pragma: no cover - no fd-relative listing (Windows): by path, links not followed
            todo: list[tuple[str, ...]] = [()]
            while todo:
                rel = todo.pop()
                if len(rel) > _limits.MAX_DIR_DEPTH:
                    raise self.error(f"{name}: folders nested deeper than {_limits.MAX_DIR_DEPTH} levels; not a run folder")
                try:
                    with os.scandir(root.joinpath(*rel)) as it:
                        for entry in it:
                            sub = (*rel, entry.name)
                            count(sub, entry)
                            visit(sub, entry)
                            if entry.is_dir(follow_symlinks=False) and not (skip and skip(sub)):
                                todo.append(sub)
                except OSError as exc:
                    raise self.error(f"{name}: the folder cannot be listed ({exc.strerror or exc})") from None
            return
        fd = self._open_fd(root, named, name, _DIR)

        def scan(fd: int, rel: tuple[str, ...]) -> None:
            if len(rel) > _limits.MAX_DIR_DEPTH:
                raise self.error(f"{name}: folders nested deeper than {_limits.MAX_DIR_DEPTH} levels; not a run folder")
            dirs = []
            try:
                with os.scandir(fd) as it:
                    for entry in it:
                        sub = (*rel, entry.name)
                        count(sub, entry)
                        visit(sub, entry)
                        if entry.is_dir(follow_symlinks=False) and not (skip and skip(sub)):
                            dirs.append(entry.name)
            except OSError as exc:
                raise self.error(f"{name}: the folder cannot be listed ({exc.strerror or exc})") from None
            for d in sorted(dirs):
                try:
                    child = os.open(d, _DIR | _NOFOLLOW, dir_fd=fd)
                except OSError:
                    continue  # replaced by a link or removed since it was listed: not followed
                try:
                    scan(child, (*rel, d))
                finally:
                    os.close(child)

        try:
            st = os.fstat(fd)
            if not stat.S_ISDIR(st.st_mode):
                raise self.error(f"{name}: {kind(st.st_mode)}, not a folder")
            scan(fd, ())
        finally:
            os.close(fd)

    def _too_many(self, name: str, limit: int) -> Exception:
        return self.error(f"{name}: more than {limit} folder entries (files and sub-folders, in all the folders "
                          "looked at) were listed without finding the end (a run folder holds a few files); pass "
                          "the log file or the run folder itself")

    def snapshot(self, src: str | os.PathLike, dst: str | os.PathLike, *, named: str | os.PathLike, max_bytes: int,
                 name: str | None = None, files: Callable[[str], bool] = lambda n: True,
                 skip: Callable[[tuple[str, ...]], bool] = lambda parts: False) -> list[tuple[str, ...]]:
        """Copy the folder `src` into the new folder `dst` (a private temporary folder of the caller), so that a
        library that reads by path (Aim, TensorBoard) reads a copy made through the door; the files copied
        (relative parts).

        The files whose name `files` accepts are copied, each opened as `open_regular` opens a file: a link,
        FIFO or device among them is an error; other entries are neither read nor copied.  The folders that
        `skip(parts)` accepts are left out unlisted; links to folders are not followed.  At most `max_bytes`
        bytes in all (a file that grows while copied counts what it grew) and `MAX_DIR_ENTRIES` entries."""
        src, dst = Path(src), Path(dst)
        name = name or src.name or str(src)
        found: list[tuple[str, ...]] = []
        dirs: list[tuple[str, ...]] = []
        listed = 0

        def visit(rel: tuple[str, ...], entry: os.DirEntry) -> None:
            nonlocal listed
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISDIR(st.st_mode):
                if not skip(rel):
                    dirs.append(rel)
            elif files(entry.name):
                if not stat.S_ISREG(st.st_mode):
                    raise self.error(f"{name}: {V.show('/'.join(rel), 120)} is {kind(st.st_mode)}; only regular "
                                     "files are read (links found inside a folder are not followed)")
                listed += st.st_size
                if listed > max_bytes:
                    raise self.over(name, "the folder's files hold at least", listed, max_bytes)
                found.append(rel)

        self._walk(src, named, name, None, visit, skip)
        dst.mkdir()
        for d in sorted(dirs, key=len):
            dst.joinpath(*d).mkdir()
        total = 0
        for rel in found:
            if total >= max_bytes:
                raise self.over(name, "the folder's files hold more than", max_bytes, max_bytes)
            total += self.copy_file(src.joinpath(*rel), dst.joinpath(*rel), named=named, max_bytes=max_bytes - total,
                                    name=f"{name}/{'/'.join(rel)}")
        return found

    def copy_file(self, src: str | os.PathLike, dst: str | os.PathLike, *, named: str | os.PathLike, max_bytes: int,
                  name: str | None = None) -> int:
        """Copy the regular file `src` (opened as `open_regular` opens it) to the new file `dst` in a private
        temporary folder of the caller, at most `max_bytes` bytes (a file that grows past them is refused);
        the bytes copied."""
        src = Path(src)
        name = name or src.name or str(src)
        total = 0
        with self.open_regular(src, max_bytes, named=named, name=name) as f, open(dst, "xb") as out:
            while part := f.read(min(2**20, max_bytes + 1 - total)):
                total += len(part)
                if total > max_bytes:
                    raise self.over(name, "the file holds more than", max_bytes, max_bytes)
                out.write(part)
        return total

