-- MCP clients: the credentials /mcp accepts besides the daemon's own token.
-- Only the SHA-256 of each token is kept (the token is 256 random bits, shown
-- once when the client is added): a copy of the database lets nobody in.
-- Migrations run inside a transaction: no PRAGMA journal_mode / VACUUM here.

CREATE TABLE mcp_clients (
  id         INTEGER PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE,
  token_hash TEXT NOT NULL UNIQUE CHECK (length(token_hash) = 64),
  created_at TEXT NOT NULL
);
