-- The same closed sets of kinds and statuses, written as chains of `=`: SQLite
-- checks `x IN (a, b, c)` by building a temporary b-tree of the list each time
-- an INSERT runs, and the writer inserts a row per call. Every row of 003's
-- table already meets these checks, so the copy keeps all of them, ids included.
-- Migrations run inside a transaction: no PRAGMA journal_mode / VACUUM here.

CREATE TABLE invocations_008 (
  id          INTEGER PRIMARY KEY,
  at          TEXT NOT NULL,
  server      TEXT NOT NULL,
  kind        TEXT NOT NULL CHECK (kind = 'tool' OR kind = 'resource' OR kind = 'prompt'),
  key         TEXT NOT NULL,
  duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0),
  status      TEXT NOT NULL CHECK (status = 'ok' OR status = 'error' OR status = 'timeout' OR status = 'denied'),
  session     TEXT,
  error_code  INTEGER CHECK (error_code IS NULL OR typeof(error_code) = 'integer')
);

INSERT INTO invocations_008 (id, at, server, kind, key, duration_ms, status, session, error_code)
SELECT id, at, server, kind, key, duration_ms, status, session, error_code FROM invocations;

DROP TABLE invocations;
ALTER TABLE invocations_008 RENAME TO invocations;

CREATE INDEX invocations_at ON invocations (at);
CREATE INDEX invocations_server_at ON invocations (server, at);
CREATE INDEX invocations_status_at ON invocations (status, at);
