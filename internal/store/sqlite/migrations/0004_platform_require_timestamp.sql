-- 0004: a platform may require a signed timestamp (issue 9). Such a platform's requests
-- carry X-Timestamp (Unix seconds), its signature covers the timestamp, and a timestamp
-- outside the server's window is refused: a captured request can be replayed only
-- within that window. Existing platforms keep the specification's scheme (0).
ALTER TABLE platforms ADD COLUMN require_timestamp INTEGER NOT NULL DEFAULT 0
    CHECK (require_timestamp IN (0, 1));
