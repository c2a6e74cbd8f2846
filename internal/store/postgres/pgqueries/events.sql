-- Events, as queries/events.sql.

-- name: CreateEvent :exec
-- Nothing is written when the platform does not exist: an event is written from its
-- platform's row (events keep no foreign key to it: migrations/0004).
WITH given AS (
    SELECT sqlc.arg(id)::uuid AS id, sqlc.arg(platform_id)::uuid AS platform_id, sqlc.arg(type)::text AS type,
        sqlc.arg(created_at)::timestamptz AS created_at, sqlc.arg(payload)::text AS payload
)
INSERT INTO events (id, platform_id, type, created_at, payload)
SELECT g.id, p.id, g.type, g.created_at, g.payload FROM given g JOIN platforms p ON p.id = g.platform_id;

-- name: FanOutEvent :execrows
INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, failures, next_attempt_at)
SELECT sqlc.arg(event_id)::uuid, e.id, 'pending', 0, 0, sqlc.arg(due_at)::timestamptz
FROM webhook_endpoints e
WHERE e.platform_id = sqlc.arg(platform_id) AND e.status = 'enabled' AND e.deleted_at IS NULL
  AND (e.all_events OR EXISTS (
      SELECT 1 FROM webhook_subscriptions s WHERE s.endpoint_id = e.id AND s.type = sqlc.arg(type)));

-- name: SubscribedPlatforms :many
SELECT p.id, p.environment FROM platforms p
WHERE EXISTS (
    SELECT 1 FROM webhook_endpoints e
    WHERE e.platform_id = p.id AND e.deleted_at IS NULL
      AND (e.all_events OR EXISTS (
          SELECT 1 FROM webhook_subscriptions s WHERE s.endpoint_id = e.id AND s.type = sqlc.arg(type))))
ORDER BY p.id;

-- name: ListEvents :many
-- The platform's events in the order of their positions (xact_id, id), only those whose
-- transaction id is below this statement's snapshot horizon (migrations/0009, 0010): after the
-- position of the event after_id names, or, when after_id names no event of the platform
-- (pruned, or an id never used), those with a greater id; from the start when it is ''.
-- The horizon and the rows are read on one snapshot, the statement's.
WITH cursor AS (
    SELECT c.xact_id, c.id FROM events c
    WHERE c.platform_id = sqlc.arg(platform_id) AND c.id = nullif(sqlc.arg(after_id)::text, '')::uuid
), listed AS ((
    SELECT e.row_id, e.id, e.platform_id, e.type, e.created_at, e.payload, e.xact_id FROM events e
    WHERE e.platform_id = sqlc.arg(platform_id)
      AND e.xact_id < (SELECT payments_events_horizon())
      AND (e.xact_id, e.id) > (
          coalesce((SELECT cursor.xact_id FROM cursor), CASE WHEN sqlc.arg(after_id)::text = '' THEN '0'::xid8 END),
          coalesce((SELECT cursor.id FROM cursor), '00000000-0000-0000-0000-000000000000'::uuid))
      AND (sqlc.arg(type)::text = '' OR e.type = sqlc.arg(type)::text)
    ORDER BY e.xact_id, e.id
    LIMIT sqlc.arg(page_size)::bigint
) UNION ALL (
    SELECT e.row_id, e.id, e.platform_id, e.type, e.created_at, e.payload, e.xact_id FROM events e
    WHERE NOT EXISTS (SELECT 1 FROM cursor) AND sqlc.arg(after_id)::text <> ''
      AND e.platform_id = sqlc.arg(platform_id)
      AND e.xact_id < (SELECT payments_events_horizon())
      AND e.id > nullif(sqlc.arg(after_id)::text, '')::uuid
      AND (sqlc.arg(type)::text = '' OR e.type = sqlc.arg(type)::text)
    ORDER BY e.xact_id, e.id
    LIMIT sqlc.arg(page_size)::bigint
))
-- (At most one of the two lists has rows: the cursor names an event, or it does not.)
SELECT l.row_id, l.id, l.platform_id, l.type, l.created_at, l.payload FROM listed l
ORDER BY l.xact_id, l.id;

-- name: GetPlatformEvent :one
SELECT row_id, id, platform_id, type, created_at, payload FROM events WHERE id = $1 AND platform_id = $2;

-- name: GetEventPayload :one
SELECT payload FROM events WHERE id = $1;

-- name: ListEventAttempts :many
-- The attempts of webhook_attempts and the deliveries' successes, oldest first.
SELECT a.endpoint_id, a.attempt, a.attempted_at, a.status_code, a.error, a.latency_ms, a.response
FROM webhook_attempts a WHERE a.event_id = sqlc.arg(event_id)
UNION ALL
SELECT d.endpoint_id, d.success_attempt, d.succeeded_at, d.success_status, NULL::text, d.success_latency, d.success_answer
FROM webhook_deliveries d WHERE d.event_id = sqlc.arg(event_id) AND d.success_attempt IS NOT NULL
ORDER BY 3, 2;

-- name: PruneAttempts :execrows
-- The three prune statements take the same events (ordered by time, then id), deleting
-- what refers to an event before the event.
DELETE FROM webhook_attempts WHERE event_id IN (
    SELECT old.id FROM events old WHERE old.created_at < sqlc.arg(before) ORDER BY old.created_at, old.id LIMIT sqlc.arg(batch)::bigint);

-- name: PruneDeliveries :execrows
DELETE FROM webhook_deliveries WHERE event_id IN (
    SELECT old.id FROM events old WHERE old.created_at < sqlc.arg(before) ORDER BY old.created_at, old.id LIMIT sqlc.arg(batch)::bigint);

-- name: PruneEvents :execrows
DELETE FROM events WHERE id IN (
    SELECT old.id FROM events old WHERE old.created_at < sqlc.arg(before) ORDER BY old.created_at, old.id LIMIT sqlc.arg(batch)::bigint);

-- name: EmitEvents :one
-- PostgreSQL only: CreateEvent and FanOutEvent for many events at once, in one statement,
-- one round trip (RecordEvent, and a batch's events at its end). The events are a JSON
-- array of objects {id, platform_id, type, created_at, payload}, written in its order, each
-- only when its platform exists (events keep no foreign key to it: migrations/0004). It
-- returns how many deliveries it wrote; an event of no platform fails the statement
-- (payments_refuse, migrations/0005), so that the database refuses it, as the key did.
WITH ev AS (
    INSERT INTO events (id, platform_id, type, created_at, payload)
    SELECT e.id, e.platform_id, e.type, e.created_at, e.payload
    FROM json_to_recordset(sqlc.arg(events)::json) AS e (id uuid, platform_id uuid, type text, created_at timestamptz, payload text)
    WHERE EXISTS (SELECT 1 FROM platforms p WHERE p.id = e.platform_id)
    RETURNING id, platform_id, type, created_at
), d AS (
    INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, failures, next_attempt_at)
    SELECT ev.id, e.id, 'pending', 0, 0, ev.created_at
    FROM ev JOIN webhook_endpoints e ON e.platform_id = ev.platform_id
    WHERE e.status = 'enabled' AND e.deleted_at IS NULL
      AND (e.all_events OR EXISTS (
          SELECT 1 FROM webhook_subscriptions s WHERE s.endpoint_id = e.id AND s.type = ev.type))
    RETURNING 1
)
SELECT (CASE WHEN (SELECT count(*) FROM ev) = json_array_length(sqlc.arg(events)::json)
    THEN (SELECT count(*) FROM d)
    ELSE payments_refuse('payments: an event of no platform') END)::bigint AS deliveries;

-- name: LastUnlistedEvent :one
-- PostgreSQL only: the transaction id of the platform's last committed event (of type; ''
-- for any) after the position of the event after_id names (from the start when it is ''
-- or names no event of the platform), whatever the horizon; '' when there is none. After
-- the last event a list showed, it is one the list held back, or one whose transaction the
-- horizon passed between the list and this statement.
SELECT coalesce((
    SELECT e.xact_id FROM events e
    WHERE e.platform_id = sqlc.arg(platform_id)
      AND (sqlc.arg(type)::text = '' OR e.type = sqlc.arg(type)::text)
      AND (e.xact_id, e.id) > (
          coalesce((SELECT c.xact_id FROM events c
                    WHERE c.platform_id = sqlc.arg(platform_id) AND c.id = nullif(sqlc.arg(after_id)::text, '')::uuid), '0'::xid8),
          coalesce((SELECT c.id FROM events c
                    WHERE c.platform_id = sqlc.arg(platform_id) AND c.id = nullif(sqlc.arg(after_id)::text, '')::uuid),
                   '00000000-0000-0000-0000-000000000000'::uuid))
    ORDER BY e.xact_id DESC LIMIT 1)::text, '')::text AS xact_id;

-- name: HorizonPassed :one
-- PostgreSQL only: whether every transaction of this database up to xact_id has ended
-- (migrations/0010), so that its events
-- are listed.
SELECT (SELECT payments_events_horizon()) > sqlc.arg(xact_id)::text::xid8 AS passed;
