-- 0003: idempotency keys. A write request sent with an Idempotency-Key stores its outcome
-- here in the same transaction as its change (or, for an outcome that changed nothing such
-- as a 404 or 409, on its own), so a retry with the same key gets the same answer and
-- nothing runs twice. Rows older than the service's TTL (24 hours by default) are ignored
-- and purged: they are operational records, not the business data that is never deleted.
CREATE TABLE idempotency_keys (
    -- Who sent it and to which operation: "platform:<id> CreateUser", "user:<id> CreatePayee".
    scope         TEXT NOT NULL,
    key           TEXT NOT NULL,
    -- SHA-256 of the request (method, target and body over HTTP; the operation's input
    -- for Go callers): the same key with another request is refused.
    fingerprint   BLOB NOT NULL,
    -- The outcome for Go callers: the operation's error (code and message), or else its
    -- result as JSON.
    error_code    TEXT,
    error_message TEXT,
    result        BLOB,
    -- The outcome as the HTTP layer rendered it, replayed byte for byte.
    status        INTEGER,
    body          BLOB,
    created_at    TEXT NOT NULL,
    PRIMARY KEY (scope, key)
) STRICT;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
