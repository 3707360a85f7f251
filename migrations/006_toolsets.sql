-- Toolsets: named views over the merged surface, user configuration like the
-- switches. `spec` holds the user's server rules and patterns (JSON), never an
-- upstream's names or schemas. A client may be bound to one toolset: it then
-- sees only that set, on every endpoint. A bound toolset cannot be removed
-- (the client would silently see more).
-- Migrations run inside a transaction: no PRAGMA journal_mode / VACUUM here.

CREATE TABLE toolsets (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL UNIQUE,
  description TEXT NOT NULL DEFAULT '',
  spec        TEXT NOT NULL CHECK (json_valid(spec)),
  created_at  TEXT NOT NULL,
  updated_at  TEXT NOT NULL
);

ALTER TABLE mcp_clients ADD COLUMN toolset TEXT REFERENCES toolsets (name) ON DELETE RESTRICT;
