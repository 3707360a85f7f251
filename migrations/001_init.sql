-- Servers, capability preferences (R1: the only persisted capability state) and the audit log.
-- Migrations run inside a transaction: no PRAGMA journal_mode / VACUUM here.

CREATE TABLE mcp_servers (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE,
  -- The ServerConfig without its name; env and header values are AES-256-GCM sealed.
  config     TEXT NOT NULL CHECK (json_valid(config)),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);

CREATE TABLE mcp_capability_preferences (
  id              INTEGER PRIMARY KEY,
  resource_id     INTEGER NOT NULL REFERENCES mcp_servers(id) ON DELETE CASCADE,
  capability_type TEXT NOT NULL CHECK (capability_type IN ('tool', 'resource', 'prompt')),
  capability_key  TEXT NOT NULL,
  enabled         INTEGER NOT NULL CHECK (enabled IN (0, 1)),
  first_seen_at   TEXT NOT NULL,
  last_seen_at    TEXT NOT NULL,
  UNIQUE (resource_id, capability_type, capability_key)
);

-- `server` is a name, not a foreign key: the history outlives a removed server.
CREATE TABLE audit_log (
  id         INTEGER PRIMARY KEY,
  at         TEXT NOT NULL,
  actor      TEXT NOT NULL CHECK (actor IN ('cli', 'api', 'ui', 'system')),
  event_type TEXT NOT NULL,
  server     TEXT,
  payload    TEXT NOT NULL CHECK (json_valid(payload))
);
CREATE INDEX audit_log_server_id ON audit_log (server, id);
CREATE INDEX audit_log_at ON audit_log (at);
