-- OAuth state of HTTP/SSE upstreams that sign in: client registration, tokens
-- and discovery, as one AES-256-GCM sealed JSON value bound to the server and
-- the resource (upstream URL) it was obtained for.
-- Migrations run inside a transaction: no PRAGMA journal_mode / VACUUM here.

CREATE TABLE oauth_credentials (
  server_id  INTEGER PRIMARY KEY REFERENCES mcp_servers(id) ON DELETE CASCADE,
  resource   TEXT NOT NULL,
  sealed     TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
