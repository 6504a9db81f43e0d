"""The judgment cache: SQLite in WAL mode, one row per finished judgment, committed as it lands.

A judgment's key is the SHA-256 of the canonical JSON of (model, task, prompt version, the rendered
messages, the request parameters); the API key and the endpoint are never part of it or stored. A
re-run finds every finished judgment and sends nothing; a process killed at any moment (SIGKILL
included) loses at most the judgments still in flight, which the next run requests (a committed
row survives the process: WAL with ``synchronous=NORMAL`` is durable across a crash of the process,
not of the machine's power).
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._errors import ConfigError

__all__ = ["Cache", "default_path", "key_of"]

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
    cost REAL NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS judgments_model_task ON judgments (model, task, version);
"""


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


class Cache:
    """A judgment cache at ``path`` (created with its directory when missing)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), timeout=30.0, isolation_level=None, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ConfigError(f"{self.path}: not a usable judgment cache ({exc})") from None

    def close(self) -> None:
        self._db.close()

    def __enter__(self) -> Cache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def get(self, key: str) -> Entry | None:
        row = self._db.execute(
            "SELECT value, prompt_tokens, completion_tokens, cost FROM judgments WHERE key = ?", (key,)
        ).fetchone()
        return None if row is None else Entry(json.loads(row[0]), row[1], row[2], row[3])

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
    ) -> None:
        """Store one finished judgment (committed at once)."""
        self._db.execute(
            "INSERT OR REPLACE INTO judgments VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (key, model, task, version, time.time(), json.dumps(value), reply, prompt_tokens, completion_tokens, cost),
        )

    def stats(self) -> list[dict[str, Any]]:
        """Per (model, task, version): judgments, undecided, tokens and cost, oldest and newest."""
        rows = self._db.execute(
            "SELECT model, task, version, COUNT(*), SUM(value = 'null'), SUM(prompt_tokens), "
            "SUM(completion_tokens), SUM(cost), MIN(created), MAX(created) FROM judgments "
            "GROUP BY model, task, version ORDER BY model, task, version"
        ).fetchall()
        keys = ("model", "task", "version", "judgments", "undecided", "prompt_tokens", "completion_tokens", "cost")
        return [dict(zip(keys, r[:8]), oldest=r[8], newest=r[9]) for r in rows]

    def export(self) -> Iterator[dict[str, Any]]:
        """Every judgment as a mapping, in key order."""
        cur = self._db.execute(
            "SELECT key, model, task, version, created, value, reply, prompt_tokens, completion_tokens, cost "
            "FROM judgments ORDER BY key"
        )
        names = [d[0] for d in cur.description]
        for row in cur:
            rec = dict(zip(names, row))
            rec["value"] = json.loads(rec["value"])
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
        cur = self._db.execute(f"DELETE FROM judgments WHERE {' AND '.join(where)}", args)
        self._db.execute("VACUUM")
        return int(cur.rowcount)
