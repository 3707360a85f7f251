-- Invocation records (filled by a later issue) and how long each history table is kept.

-- `server` is a name, not a foreign key: the history outlives a removed server.
CREATE TABLE invocations (
  id          INTEGER PRIMARY KEY,
  at          TEXT NOT NULL,
  server      TEXT NOT NULL,
  kind        TEXT NOT NULL,
  key         TEXT NOT NULL,
  duration_ms INTEGER NOT NULL CHECK (duration_ms >= 0),
  status      TEXT NOT NULL CHECK (status IN ('ok', 'error', 'timeout', 'denied')),
  session     TEXT,
  error_code  TEXT
);
CREATE INDEX invocations_server_id ON invocations (server, id);
CREATE INDEX invocations_at ON invocations (at);

-- days NULL = kept forever.
CREATE TABLE retention_policies (
  table_name TEXT PRIMARY KEY,
  days       INTEGER CHECK (days IS NULL OR days > 0)
);
INSERT INTO retention_policies (table_name, days) VALUES ('audit', 365), ('invocations', 30);
