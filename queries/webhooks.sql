-- Webhook endpoints, their deliveries and the attempts at them.

-- name: CreateWebhookEndpoint :one
INSERT INTO webhook_endpoints (id, platform_id, url, description, all_events, status, secret_sealed, public_key, created_at)
VALUES (?, ?, ?, ?, ?, 'enabled', ?, ?, ?)
RETURNING *;

-- name: AddWebhookSubscription :exec
INSERT INTO webhook_subscriptions (endpoint_id, type) VALUES (?, ?);

-- name: ListWebhookEndpoints :many
SELECT * FROM webhook_endpoints
WHERE platform_id = ? AND deleted_at IS NULL
ORDER BY created_at, id;

-- name: ListWebhookSubscriptions :many
SELECT s.endpoint_id, s.type FROM webhook_subscriptions s
JOIN webhook_endpoints e ON e.id = s.endpoint_id
WHERE e.platform_id = ? AND e.deleted_at IS NULL
ORDER BY s.endpoint_id, s.type;

-- name: GetDeliveryEndpoint :one
SELECT * FROM webhook_endpoints WHERE id = ?;

-- name: DeleteWebhookEndpoint :execrows
UPDATE webhook_endpoints SET deleted_at = sqlc.arg(deleted_at)
WHERE id = sqlc.arg(id) AND platform_id = sqlc.arg(platform_id) AND deleted_at IS NULL;

-- name: EnableWebhookEndpoint :one
UPDATE webhook_endpoints SET status = 'enabled', disabled_reason = NULL, failing_since = NULL
WHERE id = ? AND platform_id = ? AND deleted_at IS NULL
RETURNING *;

-- name: RotateWebhookSecret :one
UPDATE webhook_endpoints
SET previous_secret_sealed = secret_sealed, previous_until = sqlc.arg(previous_until),
    secret_sealed = sqlc.arg(secret_sealed), public_key = sqlc.narg(public_key)
WHERE id = sqlc.arg(id) AND platform_id = sqlc.arg(platform_id) AND deleted_at IS NULL
RETURNING *;

-- name: DisableWebhookEndpoint :exec
UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = ?
WHERE id = ? AND status = 'enabled';

-- name: MarkEndpointFailing :one
-- Returns when the endpoint's current run of failures began.
UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, CAST(sqlc.arg(now) AS TEXT))
WHERE id = sqlc.arg(id)
RETURNING CAST(failing_since AS TEXT);

-- name: MarkEndpointSucceeding :exec
UPDATE webhook_endpoints SET failing_since = NULL WHERE id = ? AND failing_since IS NOT NULL;

-- name: ReleaseClaims :execrows
-- Frees every delivery a dispatcher holds: for the one dispatcher of a database, at its
-- start, the claims of a process that died.
UPDATE webhook_deliveries SET lease_until = NULL WHERE state = 'pending' AND lease_until IS NOT NULL;

-- name: ClaimDeliveries :many
-- Takes up to max due deliveries for a lease: each is due again when the lease ends,
-- unless its attempt is recorded first. The longest due go first, but no endpoint gets
-- more than per_endpoint held at once, by any dispatcher (those held already count), and
-- a failing endpoint (enabled, its last attempt failed) one. Once break_after of a
-- failing endpoint's deliveries wait to be retried, its circuit is open: only those
-- retries go, each at its time, one at a time (the probes), until one succeeds. Only the
-- scan due longest are considered (ClaimFair scans them all when that falls short).
UPDATE webhook_deliveries SET lease_until = sqlc.arg(lease_until), resent = 0
WHERE id IN (
    SELECT ranked.id FROM (
        SELECT due.id, due.next_attempt_at, coalesce(h.held, 0) AS held,
               e.status = 'enabled' AND e.deleted_at IS NULL AND e.failing_since IS NOT NULL AS failing,
               row_number() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.id) AS place
        FROM webhook_deliveries due
        JOIN webhook_endpoints e ON e.id = due.endpoint_id
        LEFT JOIN (
            SELECT w.endpoint_id, sum(CASE WHEN w.lease_until > CAST(sqlc.arg(now) AS TEXT) THEN 1 ELSE 0 END) AS held,
                   sum(CASE WHEN w.failures > 0 THEN 1 ELSE 0 END) AS retrying
            FROM webhook_deliveries w
            WHERE w.state = 'pending' AND (w.lease_until > sqlc.arg(now) OR w.failures > 0)
            GROUP BY w.endpoint_id
        ) h ON h.endpoint_id = due.endpoint_id
        WHERE due.state = 'pending' AND due.next_attempt_at <= sqlc.arg(now)
          AND (due.lease_until IS NULL OR due.lease_until <= sqlc.arg(now))
          AND due.id IN (
              SELECT first.id FROM webhook_deliveries first
              WHERE first.state = 'pending' AND first.next_attempt_at <= sqlc.arg(now)
                AND (first.lease_until IS NULL OR first.lease_until <= sqlc.arg(now))
              ORDER BY first.next_attempt_at LIMIT CAST(sqlc.arg(scan) AS INTEGER))
          AND (e.status <> 'enabled' OR e.deleted_at IS NOT NULL OR e.failing_since IS NULL
               OR due.failures > 0 OR coalesce(h.retrying, 0) < CAST(sqlc.arg(break_after) AS INTEGER))
    ) ranked
    WHERE ranked.place + ranked.held <= CASE WHEN ranked.failing THEN 1 ELSE CAST(sqlc.arg(per_endpoint) AS INTEGER) END
    ORDER BY ranked.next_attempt_at, ranked.id LIMIT sqlc.arg(max))
RETURNING id, event_id, endpoint_id, attempts, failures;

-- name: SerializeClaims :exec
-- Makes the claims of dispatchers sharing a database one after the other, so that each
-- counts what the others hold (PostgreSQL); SQLite's one writer does it already.
SELECT 1;

-- name: ExtendClaim :exec
-- Keeps a claim while its attempt is under way.
UPDATE webhook_deliveries SET lease_until = sqlc.arg(lease_until)
WHERE id = sqlc.arg(id) AND lease_until IS NOT NULL;

-- name: RecordDelivery :exec
-- Settles a delivery as its claim left it: unless resent meanwhile (then it is due again,
-- its schedule restarted), or claimed by another dispatcher after the lease ran out,
-- which recorded its attempt first. The count of attempts made grows either way.
UPDATE webhook_deliveries
SET state = CASE WHEN resent = 1 THEN 'pending' WHEN lease_until IS NOT NULL AND attempts = CAST(sqlc.arg(claimed_attempts) AS INTEGER) THEN CAST(sqlc.arg(state) AS TEXT) ELSE state END,
    failures = CASE WHEN resent = 1 THEN 0 WHEN lease_until IS NOT NULL AND attempts = CAST(sqlc.arg(claimed_attempts) AS INTEGER) THEN CAST(sqlc.arg(failures) AS INTEGER) ELSE failures END,
    next_attempt_at = CASE WHEN resent = 1 THEN next_attempt_at WHEN lease_until IS NOT NULL AND attempts = CAST(sqlc.arg(claimed_attempts) AS INTEGER) THEN CAST(sqlc.arg(next_attempt_at) AS TEXT) ELSE next_attempt_at END,
    lease_until = CASE WHEN resent = 1 OR lease_until IS NOT NULL AND attempts = CAST(sqlc.arg(claimed_attempts) AS INTEGER) THEN NULL ELSE lease_until END,
    resent = 0,
    attempts = CASE WHEN attempts < CAST(sqlc.arg(attempts) AS INTEGER) THEN CAST(sqlc.arg(attempts) AS INTEGER) ELSE attempts END
WHERE id = sqlc.arg(id);

-- name: RecordSuccess :execrows
-- Settles a delivery whose attempt succeeded, as RecordDelivery does, keeping the attempt
-- in the success_ columns; none affected when they hold one already (a second success, of
-- a claim taken after its lease ran out): that one goes to webhook_attempts.
UPDATE webhook_deliveries
SET state = CASE WHEN resent = 1 THEN 'pending' WHEN lease_until IS NOT NULL AND attempts = CAST(sqlc.arg(claimed_attempts) AS INTEGER) THEN 'succeeded' ELSE state END,
    failures = CASE WHEN resent = 1 OR lease_until IS NOT NULL AND attempts = CAST(sqlc.arg(claimed_attempts) AS INTEGER) THEN 0 ELSE failures END,
    lease_until = CASE WHEN resent = 1 OR lease_until IS NOT NULL AND attempts = CAST(sqlc.arg(claimed_attempts) AS INTEGER) THEN NULL ELSE lease_until END,
    resent = 0,
    attempts = CASE WHEN attempts < CAST(sqlc.arg(attempt) AS INTEGER) THEN CAST(sqlc.arg(attempt) AS INTEGER) ELSE attempts END,
    success_attempt = CAST(sqlc.arg(attempt) AS INTEGER), succeeded_at = CAST(sqlc.arg(succeeded_at) AS TEXT),
    success_status = CAST(sqlc.arg(status) AS INTEGER), success_latency = CAST(sqlc.arg(latency) AS INTEGER),
    success_answer = CAST(sqlc.arg(answer) AS TEXT)
WHERE id = sqlc.arg(id) AND success_attempt IS NULL;

-- name: HoldDelivery :exec
-- Waits for, and holds until the commit, the delivery's row: an attempt being recorded
-- meanwhile is seen whole by the statements that follow (a resend keeps its success).
UPDATE webhook_deliveries SET resent = resent
WHERE event_id = sqlc.arg(event_id) AND endpoint_id = sqlc.arg(endpoint_id);

-- name: KeepSuccessAsAttempt :exec
-- Before a resend: the delivery's success becomes a row of webhook_attempts.
INSERT INTO webhook_attempts (event_id, endpoint_id, attempt, attempted_at, status_code, error, latency_ms, response)
SELECT d.event_id, d.endpoint_id, d.success_attempt, d.succeeded_at, d.success_status, NULL, d.success_latency, d.success_answer
FROM webhook_deliveries d
WHERE d.event_id = sqlc.arg(event_id) AND d.endpoint_id = sqlc.arg(endpoint_id) AND d.success_attempt IS NOT NULL;

-- name: CreateAttempt :exec
INSERT INTO webhook_attempts (event_id, endpoint_id, attempt, attempted_at, status_code, error, latency_ms, response)
VALUES (?, ?, ?, ?, ?, ?, ?, ?);

-- name: ResendToEndpoint :exec
INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, failures, next_attempt_at)
VALUES (sqlc.arg(event_id), sqlc.arg(endpoint_id), 'pending', 0, 0, sqlc.arg(due_at))
ON CONFLICT (event_id, endpoint_id)
DO UPDATE SET state = 'pending', failures = 0, next_attempt_at = excluded.next_attempt_at,
    success_attempt = NULL, succeeded_at = NULL, success_status = NULL, success_latency = NULL, success_answer = NULL,
    -- An attempt under way keeps its claim; its record leaves the delivery due again.
    resent = CASE WHEN webhook_deliveries.lease_until IS NULL THEN 0 ELSE 1 END;

-- name: PendingDeliveries :one
-- How many deliveries wait, and the time of the oldest event among them.
SELECT count(*) AS pending, CAST(coalesce(min(e.created_at), '') AS TEXT) AS oldest
FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
WHERE d.state = 'pending';

-- name: LastWebhookEndpointID :one
SELECT CAST(coalesce(max(id), '') AS TEXT) FROM webhook_endpoints;

-- name: WebhookSecretsAfter :many
SELECT id, secret_sealed FROM webhook_endpoints
WHERE id > sqlc.arg(after) AND id <= sqlc.arg(upto) ORDER BY id LIMIT sqlc.arg(batch);

-- name: SetWebhookSecret :exec
UPDATE webhook_endpoints SET secret_sealed = ? WHERE id = ?;

-- name: WebhookPreviousSecretsAfter :many
SELECT id, CAST(previous_secret_sealed AS TEXT) AS previous_secret_sealed FROM webhook_endpoints
WHERE id > sqlc.arg(after) AND id <= sqlc.arg(upto) AND previous_secret_sealed IS NOT NULL
ORDER BY id LIMIT sqlc.arg(batch);

-- name: SetWebhookPreviousSecret :exec
UPDATE webhook_endpoints SET previous_secret_sealed = ? WHERE id = ?;

-- name: GetWebhookEndpoint :one
SELECT * FROM webhook_endpoints
WHERE id = sqlc.arg(id) AND platform_id = sqlc.arg(platform_id) AND deleted_at IS NULL;

-- name: UpdateWebhookEndpoint :one
-- Sets an endpoint's URL, description and whether it takes every type; its secret and
-- status stay.
UPDATE webhook_endpoints
SET url = sqlc.arg(url), description = sqlc.arg(description), all_events = sqlc.arg(all_events)
WHERE id = sqlc.arg(id) AND platform_id = sqlc.arg(platform_id) AND deleted_at IS NULL
RETURNING *;

-- name: ClearWebhookSubscriptions :exec
DELETE FROM webhook_subscriptions WHERE endpoint_id = sqlc.arg(endpoint_id);

-- name: PauseWebhookEndpoint :one
-- Disables an endpoint by hand; one disabled already keeps its reason.
UPDATE webhook_endpoints
SET disabled_reason = CASE WHEN status = 'enabled' THEN CAST(sqlc.arg(reason) AS TEXT) ELSE disabled_reason END,
    status = 'disabled'
WHERE id = sqlc.arg(id) AND platform_id = sqlc.arg(platform_id) AND deleted_at IS NULL
RETURNING *;

-- name: DisableFailingEndpoint :execrows
-- Disables an enabled endpoint for its failures (none affected when it was not enabled).
UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = sqlc.arg(disabled_reason)
WHERE id = sqlc.arg(id) AND status = 'enabled';

-- name: EndpointHealth :one
-- The times of an endpoint's last success and last failure and of the start of its run of
-- failures ('' for none), and how many of its deliveries wait.
SELECT
    CAST(coalesce((SELECT max(d.succeeded_at) FROM webhook_deliveries d
        WHERE d.endpoint_id = sqlc.arg(id) AND d.success_attempt IS NOT NULL), '') AS TEXT) AS delivery_success,
    CAST(coalesce((SELECT max(a.attempted_at) FROM webhook_attempts a
        WHERE a.endpoint_id = sqlc.arg(id) AND a.error IS NULL AND a.status_code BETWEEN 200 AND 299), '') AS TEXT) AS attempt_success,
    CAST(coalesce((SELECT max(f.attempted_at) FROM webhook_attempts f
        WHERE f.endpoint_id = sqlc.arg(id) AND (f.error IS NOT NULL OR f.status_code IS NULL OR f.status_code NOT BETWEEN 200 AND 299)), '') AS TEXT) AS failure,
    CAST(coalesce((SELECT w.failing_since FROM webhook_endpoints w WHERE w.id = sqlc.arg(id)), '') AS TEXT) AS failing_since,
    (SELECT count(*) FROM webhook_deliveries p WHERE p.endpoint_id = sqlc.arg(id) AND p.state = 'pending') AS pending;

-- name: EndpointAttempts :many
-- The endpoint's attempts logged in webhook_attempts, newest first, those before the
-- position (before_at, before_id) when before_at is not ''.
SELECT a.id, a.event_id, e.type, a.attempt, a.attempted_at, a.status_code, a.error, a.latency_ms, a.response
FROM webhook_attempts a JOIN events e ON e.id = a.event_id
WHERE a.endpoint_id = sqlc.arg(endpoint_id)
  AND (CAST(sqlc.arg(before_at) AS TEXT) = '' OR a.attempted_at < CAST(sqlc.arg(before_at) AS TEXT)
       OR (a.attempted_at = CAST(sqlc.arg(before_at) AS TEXT) AND a.id < CAST(sqlc.arg(before_id) AS INTEGER)))
ORDER BY a.attempted_at DESC, a.id DESC
LIMIT sqlc.arg(page_size);

-- name: EndpointSuccesses :many
-- The endpoint's successes kept in its deliveries' rows, newest first, as EndpointAttempts.
SELECT d.id, d.event_id, e.type, CAST(d.success_attempt AS INTEGER) AS attempt, CAST(d.succeeded_at AS TEXT) AS attempted_at,
    CAST(d.success_status AS INTEGER) AS status_code, CAST(d.success_latency AS INTEGER) AS latency_ms,
    CAST(d.success_answer AS TEXT) AS response
FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
WHERE d.endpoint_id = sqlc.arg(endpoint_id) AND d.success_attempt IS NOT NULL
  AND (CAST(sqlc.arg(before_at) AS TEXT) = '' OR d.succeeded_at < CAST(sqlc.arg(before_at) AS TEXT)
       OR (d.succeeded_at = CAST(sqlc.arg(before_at) AS TEXT) AND d.id < CAST(sqlc.arg(before_id) AS INTEGER)))
ORDER BY d.succeeded_at DESC, d.id DESC
LIMIT sqlc.arg(page_size);

-- name: AttemptTime :one
SELECT CAST(attempted_at AS TEXT) FROM webhook_attempts WHERE id = sqlc.arg(id) AND endpoint_id = sqlc.arg(endpoint_id);

-- name: SuccessTime :one
SELECT CAST(succeeded_at AS TEXT) FROM webhook_deliveries
WHERE id = sqlc.arg(id) AND endpoint_id = sqlc.arg(endpoint_id) AND success_attempt IS NOT NULL;

-- name: RecoverDeliveries :execrows
-- Queues a delivery to the endpoint of each event of the platform created in [since,
-- until) of the types it takes, but test events, that it has not received with a 2xx:
-- a new one, or a failed one due again; one pending or succeeded is left as it is.
INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, failures, next_attempt_at)
SELECT ev.id, CAST(sqlc.arg(endpoint_id) AS TEXT), 'pending', 0, 0, CAST(sqlc.arg(due_at) AS TEXT)
FROM events ev
WHERE ev.platform_id = sqlc.arg(platform_id)
  AND ev.created_at >= CAST(sqlc.arg(since) AS TEXT) AND ev.created_at < CAST(sqlc.arg(until) AS TEXT)
  AND ev.type <> 'webhook.test'
  AND (CAST(sqlc.arg(all_events) AS INTEGER) = 1 OR EXISTS (
      SELECT 1 FROM webhook_subscriptions s WHERE s.endpoint_id = CAST(sqlc.arg(endpoint_id) AS TEXT) AND s.type = ev.type))
  AND NOT EXISTS (
      SELECT 1 FROM webhook_attempts a WHERE a.event_id = ev.id AND a.endpoint_id = CAST(sqlc.arg(endpoint_id) AS TEXT)
        AND a.error IS NULL AND a.status_code BETWEEN 200 AND 299)
ON CONFLICT (event_id, endpoint_id)
DO UPDATE SET state = 'pending', failures = 0, next_attempt_at = excluded.next_attempt_at
WHERE webhook_deliveries.state = 'failed';

-- name: OpenCircuits :one
-- How many enabled endpoints have their circuit open: failing, with break_after or more
-- deliveries waiting to be retried.
SELECT count(*) FROM webhook_endpoints e
WHERE e.status = 'enabled' AND e.deleted_at IS NULL AND e.failing_since IS NOT NULL
  AND (SELECT count(*) FROM webhook_deliveries d
       WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.failures > 0) >= CAST(sqlc.arg(break_after) AS INTEGER);
