"""One per-model SQLite: seeding, crash-safe per-sample writes, reads and the resume rule."""

from __future__ import annotations

import json
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import Self

from oracleproto.agent.result import EXCLUSION_ERRORS, SAMPLE_FIELDS, SampleResult
from oracleproto.dataset.models import PromptTemplates, Question
from oracleproto.errors import StoreError
from oracleproto.primitives import killpoints
from oracleproto.primitives.safe_text import storable
from oracleproto.primitives.sqlite_text import damaged_cell_message, is_decode_error, undecodable_cells
from oracleproto.store.codec import (
    JSON_CELLS,
    SqlValue,
    decode_sample,
    encode_options,
    encode_sample,
    storable_cells,
)
from oracleproto.store.naming import format_timestamp
from oracleproto.store.run_meta import IDENTITY_FIELDS, RunMeta
from oracleproto.store.schema import (
    PAGE_CACHE_SIZE,
    SAMPLE_ENTRIES_TABLE,
    SCHEMA_VERSION,
    apply_pragmas,
    init_schema,
    sample_column,
    sample_columns,
    stored_version,
    table_columns,
)

Slot = tuple[str, int]


def _connect(path: Path, *, readonly: bool) -> sqlite3.Connection:
    if readonly and not path.exists():
        raise StoreError(f"{path}: model database not found; check the run directory's db/ folder")
    try:
        if readonly:
            conn = sqlite3.connect(
                f"{path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False, isolation_level=None
            )
            conn.execute("PRAGMA busy_timeout = 5000")
            conn.execute(f"PRAGMA cache_size = {PAGE_CACHE_SIZE}")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            apply_pragmas(conn)
        conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
    except sqlite3.DatabaseError as exc:
        if readonly:
            raise StoreError(
                f"{path}: not a valid SQLite database ({exc}); the run is damaged: restore this file "
                "from a backup or the published bundle"
            ) from exc
        raise StoreError(
            f"{path}: not a usable SQLite database ({exc}); if the disk is full or read-only, free space "
            "or choose another runs root; otherwise move the file aside or use a new run id"
        ) from exc
    return conn


class ModelStore:
    """The per-model DB of one virtual slug. Thread-safe; each sample write is one transaction."""

    def __init__(self, conn: sqlite3.Connection, path: Path, sampling_n: int, *, readonly: bool) -> None:
        self._conn = conn
        self._lock = threading.Lock()
        self.path = path
        self.sampling_n = sampling_n
        self.readonly = readonly

    @classmethod
    def open(
        cls,
        path: Path,
        *,
        meta: RunMeta,
        questions: Sequence[Question],
        templates: PromptTemplates,
        imported_at: datetime,
    ) -> ModelStore:
        """Create or resume the DB: migrate, then seed questions, templates and run_meta idempotently.

        ``imported_at`` is the run's ``started_at`` (never the wall clock) so replay writes the
        same content. Resuming with a different run identity (hashes, n, model) is an error.
        """
        conn = _connect(path, readonly=False)
        stamp = format_timestamp(imported_at)
        try:
            init_schema(conn, meta.sampling_n, stamp, path)
            store = cls(conn, path, meta.sampling_n, readonly=False)
            store._seed(meta, questions, templates, stamp)
        except BaseException:
            conn.close()
            raise
        return store

    @classmethod
    def open_existing(cls, path: Path) -> ModelStore:
        """Open a DB read-only as written (ours or the earlier implementation's); no migration."""
        conn = _connect(path, readonly=True)
        try:
            _refuse_newer_schema(conn, path)
            n = _stored_sampling_n(conn, path)
        except BaseException:
            conn.close()
            raise
        return cls(conn, path, n, readonly=True)

    def _seed(
        self, meta: RunMeta, questions: Sequence[Question], templates: PromptTemplates, stamp: str
    ) -> None:
        existing = self._meta_row()
        row = meta.to_row()
        if existing is not None:
            for name in IDENTITY_FIELDS:
                if existing.get(name) != row[name]:
                    raise StoreError(
                        f"{self.path}: cannot resume: run_meta.{name} is {existing.get(name)!r} in the "
                        f"database but {row[name]!r} now; rerun with the original settings and dataset "
                        "or start a new run id"
                    )
        with self._transaction():
            if existing is None:
                cols = ", ".join(row)
                snapshots = {i for i, name in enumerate(row) if name.endswith("_snapshot")}
                _execute(
                    self._conn,
                    f"INSERT INTO run_meta ({cols}) VALUES ({', '.join('?' * len(row))})",
                    tuple(row.values()),
                    snapshots,
                )
            rows = [
                (
                    q.id,
                    q.choice_type,
                    q.question_type,
                    q.event,
                    encode_options(q.options),
                    q.answer_text,
                    q.end_time.isoformat(),
                    stamp,
                )
                for q in questions
            ]
            sql = (
                "INSERT OR IGNORE INTO questions (id, choice_type, question_type, event, options, answer, "
                "end_time, imported_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
            )
            try:
                self._conn.executemany(sql, rows)
            except UnicodeEncodeError:
                # A text holds a lone surrogate: all rows again, storable (OR IGNORE skips those written).
                self._conn.executemany(sql, [storable_cells(r) for r in rows])
            self._conn.executemany(
                "INSERT OR IGNORE INTO prompt_templates (key, value, imported_at) VALUES (?, ?, ?)",
                [(key, value, stamp) for key, value in templates.values],
            )

    def _transaction(self) -> _Transaction:
        return _Transaction(self._conn, self._lock)

    def _meta_row(self) -> dict[str, SqlValue] | None:
        if not table_columns(self._conn, "run_meta"):
            return None
        cursor = self._conn.execute("SELECT * FROM run_meta")
        try:
            rows = cursor.fetchall()
        except sqlite3.OperationalError as exc:
            if not is_decode_error(exc):
                raise
            raise StoreError(
                _damaged(self._conn, "SELECT * FROM run_meta", (), f"{self.path}: run_meta")
            ) from None
        if len(rows) > 1:
            raise StoreError(f"{self.path}: run_meta has {len(rows)} rows, expected one")
        if not rows:
            return None
        return dict(zip([d[0] for d in cursor.description], rows[0], strict=True))

    def read_meta(self) -> RunMeta:
        """The run_meta row; a DB without one is a :class:`StoreError`."""
        with self._lock:
            row = self._meta_row()
        if row is None:
            raise StoreError(f"{self.path}: run_meta is empty; the run never started writing this model")
        if row.get("sampling_n") is None:
            # Very old rows lack it; the sample columns present say how many samples there are.
            row["sampling_n"] = self.sampling_n
        return RunMeta.from_row(row, str(self.path))

    def _check_slot(self, question_id: str, sample_index: int) -> None:
        if not 0 <= sample_index < self.sampling_n:
            raise StoreError(
                f"{self.path}: sample index {sample_index} for question {question_id!r} is outside "
                f"0..{self.sampling_n - 1} (sampling_n={self.sampling_n})"
            )

    def write_sample(
        self,
        question_id: str,
        sample_index: int,
        user_prompt: str | None,
        result: SampleResult,
        *,
        overwrite: bool = False,
        entry_keys: Sequence[str] | None = None,
    ) -> None:
        """Store one sample in its own transaction (a crash loses at most in-flight samples).

        Rewriting a slot that is already done under the resume rule is refused unless
        ``overwrite``: it would mean a sample was run twice. ``entry_keys`` (the cassette entries
        the sample used) go to ``oracleproto_sample_entries`` in the same transaction.
        """
        if self.readonly:
            raise StoreError(f"{self.path}: opened read-only; use ModelStore.open to write")
        self._check_slot(question_id, sample_index)
        cols = sample_columns(sample_index)
        values = encode_sample(result)
        # Stored as SQLite can hold it, so the next sample's prompt compares equal (see storable_cells).
        user_prompt = None if user_prompt is None else storable(user_prompt)
        where = f"{self.path}: question {question_id!r} sample {sample_index}"
        with self._transaction():
            current = self._conn.execute(
                f"SELECT user_prompt, {sample_column(sample_index, 'created_at')}, "
                f"{sample_column(sample_index, 'error')} FROM run_results WHERE question_id = ?",
                (question_id,),
            ).fetchone()
            if current is None:
                self._insert_row(question_id, user_prompt, cols, values, where)
            else:
                stored_prompt, created, error = current
                if stored_prompt is not None and user_prompt is not None and stored_prompt != user_prompt:
                    raise StoreError(f"{where}: user prompt differs from the one stored for earlier samples")
                if not overwrite and _is_done(created, error):
                    raise StoreError(f"{where}: slot is already done; pass overwrite=True to replace it")
                assignments = ", ".join(f"{c} = ?" for c in cols)
                _execute(
                    self._conn,
                    f"UPDATE run_results SET user_prompt = COALESCE(user_prompt, ?), {assignments} "
                    "WHERE question_id = ?",
                    (user_prompt, *values, question_id),
                    {i + 1 for i in JSON_CELLS},
                )
            if entry_keys is not None:
                self._conn.execute(
                    f"INSERT OR REPLACE INTO {SAMPLE_ENTRIES_TABLE} (question_id, sample, entry_keys) "
                    "VALUES (?, ?, ?)",
                    (question_id, sample_index, json.dumps(sorted(set(entry_keys)))),
                )
        killpoints.reached("commit")

    def _insert_row(
        self,
        question_id: str,
        user_prompt: str | None,
        cols: Sequence[str],
        values: Sequence[SqlValue],
        where: str,
    ) -> None:
        names = ", ".join(("question_id", "user_prompt", *cols))
        marks = ", ".join("?" * (2 + len(cols)))
        try:
            _execute(
                self._conn,
                f"INSERT INTO run_results ({names}) VALUES ({marks})",
                (question_id, user_prompt, *values),
                {i + 2 for i in JSON_CELLS},
            )
        except sqlite3.IntegrityError as exc:
            raise StoreError(
                f"{where}: the question is not in this database's questions table ({exc}); "
                "open the store with every question of the run"
            ) from exc

    def read_sample(self, question_id: str, sample_index: int) -> SampleResult | None:
        """Decode one slot back to a ``SampleResult``; ``None`` when it was never written."""
        self._check_slot(question_id, sample_index)
        with self._lock:
            existing = table_columns(self._conn, "run_results")
            fields = [f for f in SAMPLE_FIELDS if sample_column(sample_index, f) in existing]
            if not fields:
                return None
            sql = (
                f"SELECT {', '.join(sample_column(sample_index, f) for f in fields)} "
                "FROM run_results WHERE question_id = ?"
            )
            where = f"{self.path}: question {question_id!r} sample {sample_index}"
            try:
                row = self._conn.execute(sql, (question_id,)).fetchone()
            except sqlite3.OperationalError as exc:
                if not is_decode_error(exc):
                    raise
                raise StoreError(_damaged(self._conn, sql, (question_id,), where)) from None
        if row is None:
            return None
        return decode_sample(dict(zip(fields, row, strict=True)), where)

    def read_user_prompt(self, question_id: str) -> str | None:
        """The stored user prompt of a question, if any."""
        with self._lock:
            row = self._conn.execute(
                "SELECT user_prompt FROM run_results WHERE question_id = ?", (question_id,)
            ).fetchone()
        return None if row is None or row[0] is None else str(row[0])

    def done_slots(self) -> set[Slot]:
        """Slots done under the resume rule: created_at set and error NULL or the cutoff skip."""
        return self._slots_where(_is_done)

    def stored_slots(self) -> set[Slot]:
        """Slots holding a stored sample (created_at set), done or ended in a call error."""
        return self._slots_where(lambda created, _error: created is not None)

    def _slots_where(self, keep: Callable[[SqlValue, SqlValue], bool]) -> set[Slot]:
        found: set[Slot] = set()
        with self._lock:
            existing = table_columns(self._conn, "run_results")
            for i in range(self.sampling_n):
                created, error = sample_column(i, "created_at"), sample_column(i, "error")
                if created not in existing:
                    continue
                error_sql = error if error in existing else "NULL"
                rows = self._conn.execute(f"SELECT question_id, {created}, {error_sql} FROM run_results")
                found.update((str(qid), i) for qid, c, e in rows if keep(c, e))
        return found

    def sample_entry_keys(self) -> dict[Slot, list[str]] | None:
        """Slot → the cassette entry keys it used; None when the DB predates this record."""
        with self._lock:
            if not table_columns(self._conn, SAMPLE_ENTRIES_TABLE):
                return None
            rows = self._conn.execute(f"SELECT question_id, sample, entry_keys FROM {SAMPLE_ENTRIES_TABLE}")
            return {(str(q), int(i)): [str(k) for k in json.loads(keys)] for q, i, keys in rows}

    def done_detector_failures(self) -> set[str]:
        """The ``failed:<kind>`` detector verdicts that done samples recorded in their search calls."""
        found: set[str] = set()
        done = self.done_slots()
        with self._lock:
            existing = table_columns(self._conn, "run_results")
            for i in range(self.sampling_n):
                column = sample_column(i, "search_calls")
                if column not in existing:
                    continue
                for qid, text in self._conn.execute(f"SELECT question_id, {column} FROM run_results"):
                    if (str(qid), i) not in done or not text:
                        continue
                    for call in json.loads(text):
                        verdicts = call.get("detector_verdicts") if isinstance(call, dict) else None
                        failures = (
                            v for v in verdicts or () if isinstance(v, str) and v.startswith("failed:")
                        )
                        found.update(failures)
        return found

    def pending_slots(self, question_ids: Iterable[str], n: int) -> list[Slot]:
        """Slots still to run, in question order then sample order."""
        if n != self.sampling_n:
            raise StoreError(f"{self.path}: asked for n={n} samples but the DB holds {self.sampling_n}")
        done = self.done_slots()
        return [(qid, i) for qid in question_ids for i in range(n) if (qid, i) not in done]

    def finish(self, finished_at: datetime) -> None:
        """Stamp ``run_meta.finished_at`` (the caller's clock, for replay)."""
        with self._transaction():
            self._conn.execute("UPDATE run_meta SET finished_at = ?", (format_timestamp(finished_at),))

    def close(self) -> None:
        """Checkpoint the WAL into the main file (so the .db alone is complete) and close."""
        with self._lock:
            if not self.readonly:
                self._conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            self._conn.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()


def _damaged(conn: sqlite3.Connection, sql: str, params: Sequence[SqlValue], where: str) -> str:
    """The message for the first cell of ``sql``'s result that is not UTF-8 (``sqlite_text``)."""
    cells = undecodable_cells(conn, sql, params)
    if not cells:
        return f"{where}: a TEXT cell is not UTF-8; the database is damaged: restore it from a backup"
    _, column, offset = cells[0]
    return damaged_cell_message(where, column, offset)


def _execute(
    conn: sqlite3.Connection, sql: str, params: Sequence[SqlValue], json_at: set[int]
) -> sqlite3.Cursor:
    """``conn.execute``; a row holding lone surrogates (which UTF-8 cannot bind) is made storable.

    The bind fails before SQLite runs the statement, so the retry is the only write.
    """
    try:
        return conn.execute(sql, params)
    except UnicodeEncodeError:
        return conn.execute(sql, storable_cells(params, json_at))


def _is_done(created_at: SqlValue, error: SqlValue) -> bool:
    """The paper's resume rule (Eq. resume-rule), with δ = 0's after-resolution exclusion as done too."""
    return created_at is not None and (error is None or error in EXCLUSION_ERRORS)


def _refuse_newer_schema(conn: sqlite3.Connection, path: Path) -> None:
    """StoreError for a DB of a newer schema: its columns may mean other things than version 5's."""
    try:
        version = stored_version(conn)
    except sqlite3.DatabaseError as exc:  # a schema_version table of another shape
        raise StoreError(f"{path}: table schema_version cannot be read ({exc})") from None
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: schema version {version} is newer than this oracleproto understands "
            f"({SCHEMA_VERSION}); upgrade oracleproto to read this run"
        )


def _stored_sampling_n(conn: sqlite3.Connection, path: Path) -> int:
    existing = table_columns(conn, "run_results")
    if not existing:
        raise StoreError(f"{path}: no run_results table; this is not a per-model run database")
    if table_columns(conn, "run_meta"):
        row = conn.execute("SELECT sampling_n FROM run_meta").fetchone()
        if row is not None and isinstance(row[0], int) and row[0] > 0:
            return row[0]
    n = 0
    while sample_column(n, "created_at") in existing:
        n += 1
    if n == 0:
        raise StoreError(f"{path}: run_results has no s0_created_at column and run_meta has no sampling_n")
    return n


class _Transaction:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` under the store lock; rollback on any exception."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.Lock) -> None:
        self._conn = conn
        self._lock = lock

    def __enter__(self) -> None:
        self._lock.acquire()
        try:
            self._conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.release()
            raise

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            self._conn.execute("ROLLBACK" if exc_type is not None else "COMMIT")
        finally:
            self._lock.release()
