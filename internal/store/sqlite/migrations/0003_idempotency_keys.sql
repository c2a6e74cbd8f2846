-- 0003: idempotency keys. A write request sent with an Idempotency-Key stores its outcome
-- here in the same transaction as its change (or, for an outcome that changed nothing such
-- as a 404 or 409, on its own), so a retry with the same key gets the same answer and
-- nothing runs twice. Rows older than the service's TTL (24 hours by default) are ignored
-- and purged: they are operational records, not the business data that is never deleted.
CREATE TABLE idempotency_keys (
    id            TEXT PRIMARY KEY,
    -- Who sent it and to which operation: "platform:<id> CreateUser", "user:<id> CreatePayee".
    scope         TEXT NOT NULL,
    key           TEXT NOT NULL,
    -- SHA-256 of the request (method, target and body over HTTP; the operation's input
    -- for Go callers): the same key with another request is refused.
    fingerprint   BLOB NOT NULL,
    -- The outcome for Go callers: the operation's error (code and message), or else its
    -- result; and the status of the response the HTTP layer rendered.
    error_code    TEXT,
    error_message TEXT,
    status        INTEGER,
    -- The result (JSON) and the rendered response body, replayed byte for byte: they hold
    -- what the answers held (names, a payee bank's full account number), so they are
    -- stored sealed under the data key, as JSON {"result": ..., "body": ...} (0005).
    outcome_sealed TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    UNIQUE (scope, key)
) STRICT;
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
