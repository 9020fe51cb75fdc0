"""SQLite databases, read from their bytes in memory: query-only, no schema function trusted, every statement
time-bounded, plain tables only."""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .. import _validate as V
from . import _limits
from ._limits import SQLITE_MAGIC

if TYPE_CHECKING:  # sqlite3 is imported when a database is read
    import sqlite3


class _SQLite:
    """The methods of `Reader` that read SQLite databases."""

    # ------------------------------------------------------------------------------------ SQLite

    def open_sqlite(self, path: str | os.PathLike, max_bytes: int, *, named: str | os.PathLike,
                    name: str | None = None) -> sqlite3.Connection:
        """An in-memory SQLite connection holding the database file `path`, read through `read_bytes`.

        `sqlite3` never opens the path (no link, journal, WAL or lock file is touched); the connection is
        `query_only` with `trusted_schema = OFF` (no function of the file's schema runs where SQLite can
        refuse it) and stops any statement after `MAX_SQL_SECONDS`.  A database in WAL mode whose `-wal` file
        beside it is not empty is refused (its last writes are not in the file; let the writer finish or
        checkpoint it).  Close it when done."""
        path = Path(path)
        name = name or path.name or str(path)
        import sqlite3

        data = self.read_bytes(path, max_bytes, named=named, name=name)
        if not data.startswith(SQLITE_MAGIC):
            raise self.error(f"{name}: not an SQLite database")
        if len(data) >= 20 and 2 in (data[18], data[19]):  # WAL mode: writes may still be in NAME-wal
            wal = path.with_name(path.name + "-wal")
            try:
                pending = os.lstat(wal).st_size > 0
            except OSError:
                pending = False
            if pending:
                raise self.error(f"{name}: an SQLite database in WAL mode whose write-ahead log {wal.name} is not "
                                 "empty (its last writes are not in the file yet: is a writer still running?); "
                                 "read it after the writer has finished, or checkpoint it (sqlite3 FILE "
                                 "'PRAGMA wal_checkpoint')")
            data = data[:18] + b"\x01\x01" + data[20:]  # read as a rollback-journal database
        con = sqlite3.connect(":memory:")
        try:
            con.deserialize(data)
            deadline = time.monotonic() + _limits.MAX_SQL_SECONDS
            con.set_progress_handler(lambda: int(time.monotonic() > deadline), 10_000)
            con.execute("PRAGMA trusted_schema = OFF")
            con.execute("PRAGMA query_only = ON")
        except sqlite3.Error as exc:
            con.close()
            raise self.error(f"{name}: the SQLite database cannot be opened ({V.show(str(exc), 120)})") from None
        return con

    def sqlite_tables(self, con: sqlite3.Connection, tables: Sequence[str], name: str) -> dict[str, set[str]]:
        """The columns of each of `tables` of the database `con`, refused unless each is a plain table: not a
        view, not a virtual table, without generated or hidden columns (whose expressions would run on every
        read) and without triggers.  A missing table maps to an empty set."""
        out: dict[str, set[str]] = {}
        for table in tables:
            rows = con.execute("SELECT type, sql FROM sqlite_master WHERE name = ?", (table,)).fetchall()
            if not rows:
                out[table] = set()
                continue
            kinds = {str(r[0]) for r in rows}
            sql = " ".join(str(r[1] or "") for r in rows if r[0] == "table").lstrip().upper()
            if kinds != {"table"} or sql.startswith("CREATE VIRTUAL"):
                what = "a virtual table" if sql.startswith("CREATE VIRTUAL") else f"a {'/'.join(sorted(kinds))}"
                raise self.error(f"{name}: {V.show(table)} is {what}, not a plain table; not read")
            cols = con.execute("SELECT name, hidden FROM pragma_table_xinfo(?)", (table,)).fetchall()
            odd = [str(c[0]) for c in cols if c[1]]
            if odd:
                raise self.error(f"{name}: table {V.show(table)} has generated or hidden column(s) "
                                 f"{V.show(odd[:8], 120)}, whose expressions would run on every read; not read")
            trig = con.execute("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?",
                               (table,)).fetchall()
            if trig:
                raise self.error(f"{name}: table {V.show(table)} has trigger(s) {V.show([t[0] for t in trig][:8], 120)}; "
                                 "not read")
            out[table] = {str(c[0]) for c in cols}
        return out


