-- Events: written with the change they record (see 0006_events.sql), listed by a
-- platform oldest first with the id as the cursor, pruned when older than the retention.

-- name: CreateEvent :exec
INSERT INTO events (id, platform_id, type, created_at, payload) VALUES (?, ?, ?, ?, ?);

-- name: FanOutEvent :execrows
-- One pending delivery of the event to each enabled endpoint of the platform subscribed
-- to its type.
INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, failures, next_attempt_at)
SELECT sqlc.arg(event_id), e.id, 'pending', 0, 0, sqlc.arg(due_at)
FROM webhook_endpoints e
WHERE e.platform_id = sqlc.arg(platform_id) AND e.status = 'enabled' AND e.deleted_at IS NULL
  AND (e.all_events = 1 OR EXISTS (
      SELECT 1 FROM webhook_subscriptions s WHERE s.endpoint_id = e.id AND s.type = sqlc.arg(type)));

-- name: SubscribedPlatforms :many
-- The platforms with an endpoint subscribed to the type: where a change of the whole
-- deployment (rates, payee rules) is told. A disabled endpoint counts: the event is kept
-- for its recovery (RecoverDeliveries).
SELECT p.id, p.environment FROM platforms p
WHERE EXISTS (
    SELECT 1 FROM webhook_endpoints e
    WHERE e.platform_id = p.id AND e.deleted_at IS NULL
      AND (e.all_events = 1 OR EXISTS (
          SELECT 1 FROM webhook_subscriptions s WHERE s.endpoint_id = e.id AND s.type = sqlc.arg(type))))
ORDER BY p.id;

-- name: ListEvents :many
SELECT * FROM events
WHERE platform_id = sqlc.arg(platform_id) AND id > sqlc.arg(after_id)
  AND (CAST(sqlc.arg(type) AS TEXT) = '' OR type = CAST(sqlc.arg(type) AS TEXT))
ORDER BY id
LIMIT sqlc.arg(page_size);

-- name: GetPlatformEvent :one
SELECT * FROM events WHERE id = ? AND platform_id = ?;

-- name: GetEventPayload :one
SELECT payload FROM events WHERE id = ?;

-- name: ListEventAttempts :many
-- The attempts of webhook_attempts and the deliveries' successes, oldest first.
SELECT a.endpoint_id, a.attempt, a.attempted_at, a.status_code, a.error, a.latency_ms, a.response
FROM webhook_attempts a WHERE a.event_id = sqlc.arg(event_id)
UNION ALL
SELECT d.endpoint_id, d.success_attempt, d.succeeded_at, d.success_status, CAST(NULL AS TEXT), d.success_latency, d.success_answer
FROM webhook_deliveries d WHERE d.event_id = sqlc.arg(event_id) AND d.success_attempt IS NOT NULL
ORDER BY 3, 2;

-- name: PruneAttempts :execrows
-- The three prune statements take the same events (ordered by time, then id), deleting
-- what refers to an event before the event.
DELETE FROM webhook_attempts WHERE event_id IN (
    SELECT old.id FROM events old WHERE old.created_at < sqlc.arg(before) ORDER BY old.created_at, old.id LIMIT sqlc.arg(batch));

-- name: PruneDeliveries :execrows
DELETE FROM webhook_deliveries WHERE event_id IN (
    SELECT old.id FROM events old WHERE old.created_at < sqlc.arg(before) ORDER BY old.created_at, old.id LIMIT sqlc.arg(batch));

-- name: PruneEvents :execrows
DELETE FROM events WHERE id IN (
    SELECT old.id FROM events old WHERE old.created_at < sqlc.arg(before) ORDER BY old.created_at, old.id LIMIT sqlc.arg(batch));
