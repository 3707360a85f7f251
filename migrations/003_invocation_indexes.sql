-- Invocations get an INTEGER error_code (the JSON-RPC code; 002 declared it TEXT)
-- and a closed set of kinds, and are indexed for "newest first" under each filter
-- of listInvocations and for prune. The table was empty before this release; the
-- copy still converts any numeric text it finds and drops the rest to NULL.
-- Migrations run inside a transaction: no PRAGMA journal_mode / VACUUM here.

CREATE TABLE invocations_003 (
  id          INTEGER PRIMARY KEY,
  at          TEXT NOT NULL,
  server      TEXT NOT NULL,
  kind        TEXT NOT NULL CHECK (kind IN ('tool', 'resource', 'prompt')),
  key         TEXT NOT NULL,
  duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0),
  status      TEXT NOT NULL CHECK (status IN ('ok', 'error', 'timeout', 'denied')),
  session     TEXT,
  error_code  INTEGER CHECK (error_code IS NULL OR typeof(error_code) = 'integer')
);

INSERT INTO invocations_003 (id, at, server, kind, key, duration_ms, status, session, error_code)
SELECT id, at, server, kind, key, duration_ms, status, session,
       CASE WHEN CAST(CAST(error_code AS INTEGER) AS TEXT) = CAST(error_code AS TEXT) THEN CAST(error_code AS INTEGER) END
FROM invocations
WHERE kind IN ('tool', 'resource', 'prompt');

DROP TABLE invocations;
ALTER TABLE invocations_003 RENAME TO invocations;

-- Each index ends, implicitly, in the rowid: ORDER BY at DESC, id DESC walks it backwards, no sort.
CREATE INDEX invocations_at ON invocations (at);
CREATE INDEX invocations_server_at ON invocations (server, at);
CREATE INDEX invocations_status_at ON invocations (status, at);
