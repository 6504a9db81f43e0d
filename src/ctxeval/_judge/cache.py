"""The judgment cache: SQLite in WAL mode, one row per finished judgment, committed as it lands.

A judgment's key is the SHA-256 of the canonical JSON of (model, task, prompt version, the rendered
messages, the request parameters); the API key and the endpoint are never part of it or stored (an
endpoint's structured-output dialect is kept under a hash of its address). A re-run finds every
finished judgment and sends nothing; a process killed at any moment (SIGKILL included) loses at most
the judgments still in flight, which the next run requests (a committed row survives the process: WAL
with ``synchronous=NORMAL`` is durable across a crash of the process, not of the machine's power).

An undecided judgment is kept with its reason (``--retry-undecided`` asks it again), and every
judgment with the ids it was asked for (query, passage, ...), its latency and its prompt's size.

Several processes may share a cache: a process *claims* a prompt just before asking it (a row naming
its process, dropped when the judgment lands or the claim expires, or at once when that process is
gone), so another process waits for that judgment instead of asking it again. The cache is checked
for writing when opened, before any request is paid for. A write that finds the cache locked by
another process is kept in memory and retried; at the end the process waits for the lock (saying so)
and, if it never comes, writes the judgments beside the cache (``<cache>.pending-*.jsonl``), which the
next run that opens the cache takes in: a received answer is never lost.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import socket
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import ConfigError

__all__ = ["BUSY", "Cache", "Entry", "default_path", "key_of"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judgments (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    task TEXT NOT NULL,
    version TEXT NOT NULL,
    created REAL NOT NULL,
    value TEXT NOT NULL,            -- JSON: the parsed answer, or null when undecided
    reply TEXT,                     -- the raw reply text (or the logprobs as JSON)
    prompt_tokens INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    cost REAL NOT NULL DEFAULT 0,
    reason TEXT,                    -- why an undecided judgment is undecided
    ref TEXT,                       -- JSON: the ids it was asked for (query, passage, ...)
    seconds REAL,                   -- how long the request(s) took
    prompt_bytes INTEGER            -- the rendered prompt's size (for estimates)
);
CREATE INDEX IF NOT EXISTS judgments_model_task ON judgments (model, task, version);
CREATE TABLE IF NOT EXISTS claims (key TEXT PRIMARY KEY, owner TEXT NOT NULL, host TEXT NOT NULL,
    pid INTEGER NOT NULL, until REAL NOT NULL);
CREATE TABLE IF NOT EXISTS endpoints (id TEXT PRIMARY KEY, dialect TEXT NOT NULL, updated REAL NOT NULL);
CREATE TABLE IF NOT EXISTS rates (id TEXT PRIMARY KEY, seconds REAL NOT NULL, samples INTEGER NOT NULL,
    updated REAL NOT NULL);
"""
#: columns added after the first release (a cache written before them is upgraded in place)
_ADDED = {"reason": "TEXT", "ref": "TEXT", "seconds": "REAL", "prompt_bytes": "INTEGER"}
_COLUMNS = (
    "key, model, task, version, created, value, reply, prompt_tokens, completion_tokens, cost, "
    "reason, ref, seconds, prompt_bytes"
)
BUSY = "busy"  #: :meth:`Cache.claim`: another live process is asking this prompt


def default_path() -> Path:
    """``$CTXEVAL_CACHE_DIR/judgments.sqlite``, else the user's cache directory
    (``$XDG_CACHE_HOME`` or ``~/.cache``)``/ctxeval/judgments.sqlite``."""
    base = os.environ.get("CTXEVAL_CACHE_DIR")
    if base:
        return Path(base) / "judgments.sqlite"
    xdg = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(xdg) / "ctxeval" / "judgments.sqlite"


def key_of(model: str, task: str, version: str, messages: Any, params: Mapping[str, Any]) -> str:
    """The cache key of one judgment (hex SHA-256 of its canonical JSON).

    >>> key_of("m", "grade", "v1", [{"role": "user", "content": "x"}], {"temperature": 0})[:16]
    '4dbc443fabf43ebf'
    """
    doc = {"model": model, "task": task, "version": version, "messages": messages, "params": dict(params)}
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Entry:
    value: Any
    prompt_tokens: int
    completion_tokens: int
    cost: float
    reason: str | None = None  #: why an undecided judgment (value None) is undecided

    @property
    def undecided(self) -> bool:
        return self.value is None


def _locked(exc: BaseException) -> bool:
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _alive(host: str, pid: int) -> bool:
    if host != socket.gethostname():
        return True  # another machine's process: trust its claim's expiry
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


class Cache:
    """A judgment cache at ``path`` (created with its directory when missing). ``write``: check at
    once that it can be written (the judging commands); ``notify`` receives one-line messages
    (waiting for a lock, judgments kept beside the cache)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        write: bool = False,
        lock_wait: float = 300.0,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        self.path = Path(path)
        self.lock_wait = lock_wait
        self.notify = notify or (lambda msg: None)
        self.pending: list[tuple[Any, ...]] = []
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{time.time_ns()}"
        self._db: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"--cache {self.path}: cannot create its folder ({exc.strerror or exc}; is a parent an ordinary file?)"
            ) from None
        if self.path.is_dir():
            raise ConfigError(f"--cache {self.path}: is a folder; give the cache file's path")
        self._guard(self._open)
        if write:
            self._guard(self._check_writable)
        self._guard(self._take_in_spills)

    # --- opening -----------------------------------------------------------------------------------

    def _open(self) -> None:
        self._db = sqlite3.connect(str(self.path), timeout=0.5, isolation_level=None, check_same_thread=False)
        self._wait(lambda: self.db.execute("PRAGMA journal_mode=WAL"), "open")
        self.db.execute("PRAGMA synchronous=NORMAL")
        if not self._has_schema():
            self._wait(lambda: self.db.executescript(_SCHEMA), "create")
        have = {r[1] for r in self.db.execute("PRAGMA table_info(judgments)")}
        for name, kind in _ADDED.items():
            if name not in have:
                sql = f"ALTER TABLE judgments ADD COLUMN {name} {kind}"
                try:
                    self._wait(functools.partial(self.db.execute, sql), "upgrade")
                except sqlite3.OperationalError as exc:  # another process upgraded it meanwhile
                    if "duplicate column" not in str(exc):
                        raise

    def _has_schema(self) -> bool:
        names = {r[0] for r in self.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        return {"judgments", "claims", "endpoints", "rates"} <= names

    def _check_writable(self) -> None:
        try:
            self._wait(lambda: self.db.execute("BEGIN IMMEDIATE"), "check")
            try:
                self.db.execute("INSERT OR REPLACE INTO claims VALUES ('', ?, '', 0, 0)", (self.owner,))
            finally:
                self.db.execute("ROLLBACK")
        except sqlite3.OperationalError as exc:
            if _locked(exc):
                raise
            raise ConfigError(
                f"--cache {self.path}: cannot be written ({exc}); judgments would be paid for and lost: "
                "give a writable --cache"
            ) from None

    @property
    def db(self) -> sqlite3.Connection:
        assert self._db is not None
        return self._db

    def _guard(self, fn: Callable[[], Any]) -> Any:
        """``fn()``, with SQLite's own failures as one-line errors naming the cache."""
        try:
            return fn()
        except ConfigError:
            raise
        except sqlite3.DatabaseError as exc:
            if _locked(exc):
                raise ConfigError(
                    f"--cache {self.path}: locked by another process for over {self.lock_wait:g} s ({exc})"
                ) from None
            raise ConfigError(
                f"--cache {self.path}: not a usable judgment cache ({exc}); move it aside or delete it "
                "(its judgments would be asked again)"
            ) from None

    def _wait(self, fn: Callable[[], Any], what: str) -> Any:
        """``fn()``, waiting up to ``lock_wait`` seconds (with one message) while another process
        holds the cache's lock."""
        start = time.monotonic()
        told = False
        while True:
            try:
                return fn()
            except sqlite3.OperationalError as exc:
                if not _locked(exc) or time.monotonic() - start > self.lock_wait:
                    raise
                if not told:
                    self.notify(f"waiting for the judgment cache {self.path}: another process holds its lock")
                    told = True
                time.sleep(0.2)

    def close(self) -> None:
        if self._db is None:
            return
        try:
            self.flush(wait=True)
        finally:
            self._db.close()
            self._db = None

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- judgments ---------------------------------------------------------------------------------

    def get(self, key: str) -> Entry | None:
        return self._guard(lambda: self._get(key))

    def _get(self, key: str) -> Entry | None:
        for row in self.pending:
            if row[0] == key:
                return Entry(json.loads(row[5]), row[7], row[8], row[9], row[10])
        row = self._wait(
            lambda: self.db.execute(
                "SELECT value, prompt_tokens, completion_tokens, cost, reason FROM judgments WHERE key = ?", (key,)
            ).fetchone(),
            "read",
        )
        return None if row is None else Entry(json.loads(row[0]), row[1], row[2], row[3], row[4])

    def claim(self, key: str, ttl: float, retry_undecided: bool = False) -> Entry | bool | str:
        """Just before asking ``key``: its :class:`Entry` when it has landed meanwhile (an undecided
        one only unless ``retry_undecided``); :data:`BUSY` when another live process is asking it;
        True when this process may ask it (claimed for ``ttl`` seconds, or unclaimed when the cache
        is locked: the answer is then kept until it can be written)."""
        return self._guard(lambda: self._claim(key, ttl, retry_undecided))

    def _claim(self, key: str, ttl: float, retry_undecided: bool) -> Entry | bool | str:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as exc:
            if not _locked(exc):
                raise
            hit = self._get(key)
            return hit if hit is not None and not (hit.undecided and retry_undecided) else True
        try:
            hit = self._get(key)
            if hit is not None and not (hit.undecided and retry_undecided):
                return hit
            row = self.db.execute("SELECT owner, host, pid, until FROM claims WHERE key = ?", (key,)).fetchone()
            now = time.time()
            if row is not None and row[0] != self.owner and row[3] > now and _alive(row[1], row[2]):
                return BUSY
            self.db.execute(
                "INSERT OR REPLACE INTO claims VALUES (?, ?, ?, ?, ?)",
                (key, self.owner, socket.gethostname(), os.getpid(), now + ttl),
            )
            return True
        finally:
            self.db.execute("COMMIT")

    def release(self, key: str) -> None:
        """Drop this process's claim on ``key`` (it will not ask it after all)."""

        def drop() -> None:
            try:
                self.db.execute("DELETE FROM claims WHERE key = ? AND owner = ?", (key, self.owner))
            except sqlite3.OperationalError as exc:
                if not _locked(exc):
                    raise

        self._guard(drop)

    def put(
        self,
        key: str,
        *,
        model: str,
        task: str,
        version: str,
        value: Any,
        reply: str | None,
        prompt_tokens: int = 0,
        completion_tokens: int = 0,
        cost: float = 0.0,
        reason: str | None = None,
        ref: Mapping[str, Any] | None = None,
        seconds: float | None = None,
        prompt_bytes: int | None = None,
    ) -> None:
        """Store one finished judgment (committed at once, or kept until the lock frees)."""
        row = (
            key, model, task, version, time.time(), json.dumps(value), reply, prompt_tokens, completion_tokens,
            cost, reason, json.dumps(dict(ref), sort_keys=True) if ref else None, seconds, prompt_bytes,
        )  # fmt: skip
        self.pending.append(row)
        self._guard(lambda: self.flush(wait=False))

    def flush(self, wait: bool) -> None:
        """Write the judgments kept in memory; with ``wait``, wait for the lock (saying so) up to
        ``lock_wait`` seconds, then keep them beside the cache for the next run."""
        if not self.pending:
            return
        start, told = time.monotonic(), False
        while True:
            try:
                self.db.execute("BEGIN IMMEDIATE")
                try:
                    self.db.executemany(
                        f"INSERT OR REPLACE INTO judgments ({_COLUMNS}) VALUES ({','.join('?' * 14)})", self.pending
                    )
                    self.db.executemany("DELETE FROM claims WHERE key = ?", [(r[0],) for r in self.pending])
                except BaseException:
                    self.db.execute("ROLLBACK")
                    raise
                self.db.execute("COMMIT")
                self.pending.clear()
                return
            except sqlite3.OperationalError as exc:
                if not _locked(exc):
                    raise
                if not wait:
                    return
                if time.monotonic() - start > self.lock_wait:
                    self._spill()
                    return
                if not told:
                    self.notify(
                        f"waiting for the judgment cache {self.path}: another process holds its lock "
                        f"({len(self.pending)} judgments to store)"
                    )
                    told = True
                time.sleep(0.2)

    def _spill(self) -> None:
        spill = self.path.with_name(f"{self.path.name}.pending-{os.getpid()}-{time.time_ns()}.jsonl")
        with open(spill, "w", encoding="utf-8") as f:
            for row in self.pending:
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
        self.notify(
            f"the judgment cache {self.path} stayed locked for {self.lock_wait:g} s: {len(self.pending)} judgments "
            f"kept in {spill} (the next run with this cache takes them in)"
        )
        self.pending.clear()

    def _take_in_spills(self) -> None:
        for spill in sorted(self.path.parent.glob(f"{self.path.name}.pending-*.jsonl")):
            try:
                rows = [tuple(json.loads(line)) for line in spill.read_text(encoding="utf-8").splitlines() if line]
            except (OSError, ValueError):
                continue
            self.pending.extend(r for r in rows if len(r) == 14)
            self.flush(wait=True)
            if not self.pending:
                spill.unlink(missing_ok=True)

    # --- endpoints ---------------------------------------------------------------------------------

    def dialect(self, endpoint: str) -> str | None:
        """The structured-output dialect last detected for ``endpoint`` (kept under its hash)."""
        row = self._guard(
            lambda: self.db.execute("SELECT dialect FROM endpoints WHERE id = ?", (_hash(endpoint),)).fetchone()
        )
        return None if row is None else str(row[0])

    def set_dialect(self, endpoint: str, dialect: str) -> None:
        def write() -> None:
            try:
                self.db.execute(
                    "INSERT OR REPLACE INTO endpoints VALUES (?, ?, ?)", (_hash(endpoint), dialect, time.time())
                )
            except sqlite3.OperationalError as exc:
                if not _locked(exc):
                    raise

        self._guard(write)

    def serial_rate(self, endpoint: str) -> tuple[float, int] | None:
        """Seconds per request the server at ``endpoint`` took with no other request in flight (the
        median of the replies a run measured so), and how many replies that was; None if unknown."""

        def read() -> Any:
            try:
                return self.db.execute("SELECT seconds, samples FROM rates WHERE id = ?", (_hash(endpoint),)).fetchone()
            except sqlite3.OperationalError:  # a cache written before the table: nothing measured
                return None

        row = self._guard(read)
        return None if row is None else (float(row[0]), int(row[1]))

    def set_serial_rate(self, endpoint: str, seconds: float, samples: int) -> None:
        def write() -> None:
            try:
                self.db.execute(
                    "INSERT OR REPLACE INTO rates VALUES (?, ?, ?, ?)", (_hash(endpoint), seconds, samples, time.time())
                )
            except sqlite3.OperationalError as exc:
                if not _locked(exc):
                    raise

        self._guard(write)

    # --- the cache commands ------------------------------------------------------------------------

    def stats(self) -> list[dict[str, Any]]:
        """Per (model, task, version): judgments, undecided, tokens and cost, oldest and newest."""
        rows = self._guard(
            lambda: self.db.execute(
                "SELECT model, task, version, COUNT(*), SUM(value = 'null'), SUM(prompt_tokens), "
                "SUM(completion_tokens), SUM(cost), MIN(created), MAX(created) FROM judgments "
                "GROUP BY model, task, version ORDER BY model, task, version"
            ).fetchall()
        )
        keys = ("model", "task", "version", "judgments", "undecided", "prompt_tokens", "completion_tokens", "cost")
        return [dict(zip(keys, r[:8]), oldest=r[8], newest=r[9]) for r in rows]

    def usage(self, model: str, task: str | None = None) -> dict[str, float]:
        """What the cached judgments of ``model`` (and ``task``) say about the next ones: prompt tokens
        per prompt byte, completion tokens and seconds per judgment (means; 0 where nothing is known)."""
        where = "model = ? AND prompt_bytes > 0 AND prompt_tokens > 0" + (" AND task = ?" if task else "")
        args = (model, task) if task else (model,)
        row = self._guard(
            lambda: self.db.execute(
                "SELECT SUM(prompt_tokens), SUM(prompt_bytes), AVG(completion_tokens), AVG(seconds), COUNT(seconds) "
                f"FROM judgments WHERE {where}",
                args,
            ).fetchone()
        )
        pt, pb, ct, sec, n = row
        return {
            "tokens_per_byte": (pt / pb) if pt and pb else 0.0,
            "completion_tokens": float(ct or 0.0),
            "seconds": float(sec or 0.0),
            "known": float(n or 0),
        }

    def export(self) -> Iterator[dict[str, Any]]:
        """Every judgment as a mapping, in key order, with the ids it was asked for (``ref``)."""
        cur = self._guard(lambda: self.db.execute(f"SELECT {_COLUMNS} FROM judgments ORDER BY key"))
        names = [d[0] for d in cur.description]
        for row in cur:
            rec = dict(zip(names, row))
            rec["value"] = json.loads(rec["value"])
            rec["ref"] = json.loads(rec["ref"]) if rec["ref"] else None
            yield rec

    def prune(
        self,
        *,
        model: str | None = None,
        task: str | None = None,
        older_than_days: float | None = None,
        undecided: bool = False,
    ) -> int:
        """Delete the judgments matching every given filter; how many were deleted."""
        where: list[str] = []
        args: list[Any] = []
        if model is not None:
            where.append("model = ?")
            args.append(model)
        if task is not None:
            where.append("task = ?")
            args.append(task)
        if older_than_days is not None:
            where.append("created < ?")
            args.append(time.time() - older_than_days * 86400.0)
        if undecided:
            where.append("value = 'null'")
        if not where:
            raise ConfigError("prune needs a filter: --model, --task, --older-than DAYS or --undecided")

        def run() -> int:
            cur = self._wait(
                lambda: self.db.execute(f"DELETE FROM judgments WHERE {' AND '.join(where)}", args), "prune"
            )
            self.db.execute("VACUUM")
            return int(cur.rowcount)

        return int(self._guard(run))


def _hash(endpoint: str) -> str:
    return hashlib.sha256(endpoint.encode("utf-8")).hexdigest()[:32]
