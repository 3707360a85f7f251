-- The user's own words for a tool or prompt: the name it is exposed under (the
-- part after the namespace) and its description. User preferences like the
-- switch, on the same row, so they survive restarts, upgrades and a tool that
-- vanishes and comes back (R1, R4, R5); NULL = the upstream's own. Never the
-- upstream's text (R1). Within one server and kind, an own name is unique.
-- Migrations run inside a transaction: no PRAGMA journal_mode / VACUUM here.

ALTER TABLE mcp_capability_preferences ADD COLUMN own_name TEXT;
ALTER TABLE mcp_capability_preferences ADD COLUMN own_description TEXT;
CREATE UNIQUE INDEX mcp_capability_preferences_own_name
  ON mcp_capability_preferences (resource_id, capability_type, own_name) WHERE own_name IS NOT NULL;
