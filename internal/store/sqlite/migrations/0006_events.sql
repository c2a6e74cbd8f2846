-- 0006: events and webhooks. Every change of state writes its event in the change's own
-- transaction (a transactional outbox), with one delivery per webhook endpoint subscribed
-- to it; the dispatcher sends what is due and logs each attempt.

-- The events of each platform. payload is the event object exactly as it is delivered and
-- as the events API shows it; id is a time-ordered UUID, the events list's cursor.
CREATE TABLE events (
    row_id      INTEGER PRIMARY KEY,
    id          TEXT NOT NULL UNIQUE,
    platform_id TEXT NOT NULL REFERENCES platforms (id),
    type        TEXT NOT NULL,
    created_at  TEXT NOT NULL,
    payload     TEXT NOT NULL
) STRICT;
CREATE INDEX events_platform ON events (platform_id, id);
CREATE INDEX events_created ON events (created_at);

-- The URLs a platform receives events at. The signing secret is sealed under a data key,
-- as platform secrets are; after a rotation the previous secret signs too, until
-- previous_until. failing_since is when the current run of failed attempts began (NULL
-- after a success): an endpoint failing for days is disabled.
CREATE TABLE webhook_endpoints (
    id                     TEXT PRIMARY KEY,
    platform_id            TEXT NOT NULL REFERENCES platforms (id),
    url                    TEXT NOT NULL,
    description            TEXT,
    -- 1: every event type; 0: the types in webhook_subscriptions.
    all_events             INTEGER NOT NULL CHECK (all_events IN (0, 1)),
    status                 TEXT NOT NULL CHECK (status IN ('enabled', 'disabled')),
    disabled_reason        TEXT,
    secret_sealed          TEXT NOT NULL,
    previous_secret_sealed TEXT,
    previous_until         TEXT,
    failing_since          TEXT,
    created_at             TEXT NOT NULL,
    deleted_at             TEXT
) STRICT;
CREATE INDEX webhook_endpoints_platform ON webhook_endpoints (platform_id, created_at);

CREATE TABLE webhook_subscriptions (
    endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints (id),
    type        TEXT NOT NULL,
    PRIMARY KEY (endpoint_id, type)
) STRICT;

-- One delivery per (event, endpoint). pending: due at next_attempt_at, unless a dispatcher
-- holds it until lease_until (an instance that dies leaves it due again when the lease
-- ends); succeeded; failed for good. attempts counts every attempt made; failures, those
-- since the last success or resend: the retry schedule's position. resent marks a resend
-- made while an attempt was under way: its record leaves the delivery due again. The
-- success_ columns are the attempt that succeeded, kept here rather than as a row of
-- webhook_attempts (most deliveries succeed at once: one write less for each); a resend
-- moves it to webhook_attempts before the delivery goes again.
CREATE TABLE webhook_deliveries (
    id              INTEGER PRIMARY KEY,
    event_id        TEXT NOT NULL REFERENCES events (id),
    endpoint_id     TEXT NOT NULL REFERENCES webhook_endpoints (id),
    state           TEXT NOT NULL CHECK (state IN ('pending', 'succeeded', 'failed')),
    attempts        INTEGER NOT NULL DEFAULT 0,
    failures        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TEXT NOT NULL,
    lease_until     TEXT,
    resent          INTEGER NOT NULL DEFAULT 0 CHECK (resent IN (0, 1)),
    success_attempt INTEGER,
    succeeded_at    TEXT,
    success_status  INTEGER,
    success_latency INTEGER,
    success_answer  TEXT,
    UNIQUE (event_id, endpoint_id)
) STRICT;
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending';

-- Every attempt but a delivery's success (above): when, the answer's status (NULL without
-- one) or why it failed, how long it took and the first 1 KiB of the answer.
CREATE TABLE webhook_attempts (
    id           INTEGER PRIMARY KEY,
    event_id     TEXT NOT NULL REFERENCES events (id),
    endpoint_id  TEXT NOT NULL REFERENCES webhook_endpoints (id),
    attempt      INTEGER NOT NULL,
    attempted_at TEXT NOT NULL,
    status_code  INTEGER,
    error        TEXT,
    latency_ms   INTEGER NOT NULL,
    response     TEXT NOT NULL
) STRICT;
CREATE INDEX webhook_attempts_event ON webhook_attempts (event_id, id);
