-- Webhook endpoints, deliveries and attempts, as queries/webhooks.sql; deliveries are
-- claimed with FOR UPDATE SKIP LOCKED, so that instances sharing the database take
-- different ones.

-- name: CreateWebhookEndpoint :one
INSERT INTO webhook_endpoints (id, platform_id, url, description, all_events, status, secret_sealed, public_key, created_at)
VALUES ($1, $2, $3, $4, $5, 'enabled', $6, $7, $8)
RETURNING *;

-- name: AddWebhookSubscription :exec
INSERT INTO webhook_subscriptions (endpoint_id, type) VALUES ($1, $2);

-- name: ListWebhookEndpoints :many
SELECT * FROM webhook_endpoints
WHERE platform_id = $1 AND deleted_at IS NULL
ORDER BY created_at, id;

-- name: ListWebhookSubscriptions :many
SELECT s.endpoint_id, s.type FROM webhook_subscriptions s
JOIN webhook_endpoints e ON e.id = s.endpoint_id
WHERE e.platform_id = $1 AND e.deleted_at IS NULL
ORDER BY s.endpoint_id, s.type;

-- name: GetDeliveryEndpoint :one
SELECT * FROM webhook_endpoints WHERE id = $1;

-- name: DeleteWebhookEndpoint :execrows
UPDATE webhook_endpoints SET deleted_at = sqlc.arg(deleted_at)
WHERE id = sqlc.arg(id) AND platform_id = sqlc.arg(platform_id) AND deleted_at IS NULL;

-- name: EnableWebhookEndpoint :one
UPDATE webhook_endpoints SET status = 'enabled', disabled_reason = NULL, failing_since = NULL
WHERE id = $1 AND platform_id = $2 AND deleted_at IS NULL
RETURNING *;

-- name: RotateWebhookSecret :one
UPDATE webhook_endpoints
SET previous_secret_sealed = secret_sealed, previous_until = sqlc.arg(previous_until),
    secret_sealed = sqlc.arg(secret_sealed), public_key = sqlc.narg(public_key)
WHERE id = sqlc.arg(id) AND platform_id = sqlc.arg(platform_id) AND deleted_at IS NULL
RETURNING *;

-- name: DisableWebhookEndpoint :exec
UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = $1
WHERE id = $2 AND status = 'enabled';

-- name: MarkEndpointFailing :one
UPDATE webhook_endpoints SET failing_since = coalesce(failing_since, sqlc.arg(now)::timestamptz)
WHERE id = sqlc.arg(id)
RETURNING failing_since::timestamptz;

-- name: MarkEndpointSucceeding :exec
UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL;

-- name: ReleaseClaims :execrows
-- Frees every delivery a dispatcher holds: for the one dispatcher of a database, at its
-- start, the claims of a process that died.
UPDATE webhook_deliveries SET lease_until = NULL WHERE state = 'pending' AND lease_until IS NOT NULL;

-- name: ClaimDeliveries :many
-- As the sqlite query, the rows locked (SKIP LOCKED: those another claim or record holds
-- are left to it); SerializeClaims first makes the per-endpoint counts exact across
-- instances.
UPDATE webhook_deliveries SET lease_until = sqlc.arg(lease_until), resent = false
WHERE id IN (
    SELECT pick.id FROM webhook_deliveries pick
    WHERE pick.id IN (
        SELECT ranked.id FROM (
            SELECT due.id, due.next_attempt_at, coalesce(h.held, 0) AS held,
                   e.status = 'enabled' AND e.deleted_at IS NULL AND e.failing_since IS NOT NULL AS failing,
                   row_number() OVER (PARTITION BY due.endpoint_id ORDER BY due.next_attempt_at, due.id) AS place
            FROM webhook_deliveries due
            JOIN webhook_endpoints e ON e.id = due.endpoint_id
            LEFT JOIN (
                SELECT w.endpoint_id, sum(CASE WHEN w.lease_until > sqlc.arg(now)::timestamptz THEN 1 ELSE 0 END) AS held,
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
                  ORDER BY first.next_attempt_at LIMIT sqlc.arg(scan)::bigint)
              AND (e.status <> 'enabled' OR e.deleted_at IS NOT NULL OR e.failing_since IS NULL
                   OR due.failures > 0 OR coalesce(h.retrying, 0) < sqlc.arg(break_after)::bigint)
        ) ranked
        WHERE ranked.place + ranked.held <= CASE WHEN ranked.failing THEN 1 ELSE sqlc.arg(per_endpoint)::bigint END
        ORDER BY ranked.next_attempt_at, ranked.id LIMIT sqlc.arg(max)::bigint)
      AND pick.state = 'pending' AND (pick.lease_until IS NULL OR pick.lease_until <= sqlc.arg(now))
    FOR UPDATE SKIP LOCKED)
RETURNING id, event_id, endpoint_id, attempts, failures;

-- name: SerializeClaims :exec
-- Makes the claims of dispatchers sharing the database one after the other, until the
-- claim's transaction ends: the next claim's statement, begun after, counts what this one
-- took.
SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.payments webhook claims'));

-- name: ExtendClaim :exec
-- Keeps a claim while its attempt is under way.
UPDATE webhook_deliveries SET lease_until = sqlc.arg(lease_until)
WHERE id = sqlc.arg(id) AND lease_until IS NOT NULL;

-- name: RecordDelivery :exec
-- Settles a delivery as its claim left it: unless resent meanwhile (then it is due again,
-- its schedule restarted), or claimed by another dispatcher after the lease ran out,
-- which recorded its attempt first. The count of attempts made grows either way.
UPDATE webhook_deliveries
SET state = CASE WHEN resent THEN 'pending' WHEN lease_until IS NOT NULL AND attempts = sqlc.arg(claimed_attempts)::bigint THEN sqlc.arg(state)::text ELSE state END,
    failures = CASE WHEN resent THEN 0 WHEN lease_until IS NOT NULL AND attempts = sqlc.arg(claimed_attempts)::bigint THEN sqlc.arg(failures)::bigint ELSE failures END,
    next_attempt_at = CASE WHEN resent THEN next_attempt_at WHEN lease_until IS NOT NULL AND attempts = sqlc.arg(claimed_attempts)::bigint THEN sqlc.arg(next_attempt_at)::timestamptz ELSE next_attempt_at END,
    lease_until = CASE WHEN resent OR lease_until IS NOT NULL AND attempts = sqlc.arg(claimed_attempts)::bigint THEN NULL ELSE lease_until END,
    resent = false,
    attempts = CASE WHEN attempts < sqlc.arg(attempts)::bigint THEN sqlc.arg(attempts)::bigint ELSE attempts END
WHERE id = sqlc.arg(id);

-- name: RecordSuccess :execrows
-- Settles a delivery whose attempt succeeded, as RecordDelivery does, keeping the attempt
-- in the success_ columns; none affected when they hold one already (a second success, of
-- a claim taken after its lease ran out): that one goes to webhook_attempts.
UPDATE webhook_deliveries
SET state = CASE WHEN resent THEN 'pending' WHEN lease_until IS NOT NULL AND attempts = sqlc.arg(claimed_attempts)::bigint THEN 'succeeded' ELSE state END,
    failures = CASE WHEN resent OR lease_until IS NOT NULL AND attempts = sqlc.arg(claimed_attempts)::bigint THEN 0 ELSE failures END,
    lease_until = CASE WHEN resent OR lease_until IS NOT NULL AND attempts = sqlc.arg(claimed_attempts)::bigint THEN NULL ELSE lease_until END,
    resent = false,
    attempts = CASE WHEN attempts < sqlc.arg(attempt)::bigint THEN sqlc.arg(attempt)::bigint ELSE attempts END,
    success_attempt = sqlc.arg(attempt)::bigint, succeeded_at = sqlc.arg(succeeded_at)::timestamptz,
    success_status = sqlc.arg(status)::bigint, success_latency = sqlc.arg(latency)::bigint,
    success_answer = sqlc.arg(answer)::text
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
VALUES ($1, $2, $3, $4, $5, $6, $7, $8);

-- name: ResendToEndpoint :exec
INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, failures, next_attempt_at)
VALUES (sqlc.arg(event_id), sqlc.arg(endpoint_id), 'pending', 0, 0, sqlc.arg(due_at))
ON CONFLICT (event_id, endpoint_id)
DO UPDATE SET state = 'pending', failures = 0, next_attempt_at = excluded.next_attempt_at,
    success_attempt = NULL, succeeded_at = NULL, success_status = NULL, success_latency = NULL, success_answer = NULL,
    -- An attempt under way keeps its claim; its record leaves the delivery due again.
    resent = webhook_deliveries.lease_until IS NOT NULL;

-- name: PendingDeliveries :one
-- oldest is the time as the service writes it, empty when none is pending.
SELECT count(*) AS pending,
    coalesce(to_char(min(e.created_at) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), '')::text AS oldest
FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
WHERE d.state = 'pending';

-- name: LastWebhookEndpointID :one
SELECT coalesce((SELECT id FROM webhook_endpoints ORDER BY id DESC LIMIT 1)::text, '')::text;

-- name: WebhookSecretsAfter :many
SELECT id, secret_sealed FROM webhook_endpoints
WHERE (sqlc.arg(after)::text = '' OR id > nullif(sqlc.arg(after)::text, '')::uuid)
  AND id <= nullif(sqlc.arg(upto)::text, '')::uuid ORDER BY id LIMIT sqlc.arg(batch)::bigint;

-- name: SetWebhookSecret :exec
UPDATE webhook_endpoints SET secret_sealed = $1 WHERE id = $2;

-- name: WebhookPreviousSecretsAfter :many
SELECT id, CAST(previous_secret_sealed AS TEXT) AS previous_secret_sealed FROM webhook_endpoints
WHERE (sqlc.arg(after)::text = '' OR id > nullif(sqlc.arg(after)::text, '')::uuid)
  AND id <= nullif(sqlc.arg(upto)::text, '')::uuid AND previous_secret_sealed IS NOT NULL
ORDER BY id LIMIT sqlc.arg(batch)::bigint;

-- name: SetWebhookPreviousSecret :exec
UPDATE webhook_endpoints SET previous_secret_sealed = $1 WHERE id = $2;

-- name: GetWebhookEndpoint :one
SELECT * FROM webhook_endpoints
WHERE id = sqlc.arg(id) AND platform_id = sqlc.arg(platform_id) AND deleted_at IS NULL;

-- name: UpdateWebhookEndpoint :one
UPDATE webhook_endpoints
SET url = sqlc.arg(url), description = sqlc.arg(description), all_events = sqlc.arg(all_events)
WHERE id = sqlc.arg(id) AND platform_id = sqlc.arg(platform_id) AND deleted_at IS NULL
RETURNING *;

-- name: ClearWebhookSubscriptions :exec
DELETE FROM webhook_subscriptions WHERE endpoint_id = sqlc.arg(endpoint_id);

-- name: PauseWebhookEndpoint :one
UPDATE webhook_endpoints
SET disabled_reason = CASE WHEN status = 'enabled' THEN sqlc.arg(reason)::text ELSE disabled_reason END,
    status = 'disabled'
WHERE id = sqlc.arg(id) AND platform_id = sqlc.arg(platform_id) AND deleted_at IS NULL
RETURNING *;

-- name: DisableFailingEndpoint :execrows
UPDATE webhook_endpoints SET status = 'disabled', disabled_reason = sqlc.arg(disabled_reason)
WHERE id = sqlc.arg(id) AND status = 'enabled';

-- name: EndpointHealth :one
-- The times as the service writes them ('' for none).
SELECT
    coalesce(to_char((SELECT max(d.succeeded_at) FROM webhook_deliveries d
        WHERE d.endpoint_id = sqlc.arg(id) AND d.success_attempt IS NOT NULL) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), '')::text AS delivery_success,
    coalesce(to_char((SELECT max(a.attempted_at) FROM webhook_attempts a
        WHERE a.endpoint_id = sqlc.arg(id) AND a.error IS NULL AND a.status_code BETWEEN 200 AND 299) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), '')::text AS attempt_success,
    coalesce(to_char((SELECT max(f.attempted_at) FROM webhook_attempts f
        WHERE f.endpoint_id = sqlc.arg(id) AND (f.error IS NOT NULL OR f.status_code IS NULL OR f.status_code NOT BETWEEN 200 AND 299)) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), '')::text AS failure,
    coalesce(to_char((SELECT w.failing_since FROM webhook_endpoints w WHERE w.id = sqlc.arg(id)) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), '')::text AS failing_since,
    (SELECT count(*) FROM webhook_deliveries p WHERE p.endpoint_id = sqlc.arg(id) AND p.state = 'pending') AS pending;

-- name: EndpointAttempts :many
SELECT a.id, a.event_id, e.type, a.attempt, a.attempted_at, a.status_code, a.error, a.latency_ms, a.response
FROM webhook_attempts a JOIN events e ON e.id = a.event_id
WHERE a.endpoint_id = sqlc.arg(endpoint_id)
  AND (sqlc.arg(before_at)::text = '' OR a.attempted_at < nullif(sqlc.arg(before_at)::text, '')::timestamptz
       OR (a.attempted_at = nullif(sqlc.arg(before_at)::text, '')::timestamptz AND a.id < sqlc.arg(before_id)::bigint))
ORDER BY a.attempted_at DESC, a.id DESC
LIMIT sqlc.arg(page_size)::bigint;

-- name: EndpointSuccesses :many
SELECT d.id, d.event_id, e.type, d.success_attempt::bigint AS attempt, d.succeeded_at::timestamptz AS attempted_at,
    d.success_status::bigint AS status_code, d.success_latency::bigint AS latency_ms, d.success_answer::text AS response
FROM webhook_deliveries d JOIN events e ON e.id = d.event_id
WHERE d.endpoint_id = sqlc.arg(endpoint_id) AND d.success_attempt IS NOT NULL
  AND (sqlc.arg(before_at)::text = '' OR d.succeeded_at < nullif(sqlc.arg(before_at)::text, '')::timestamptz
       OR (d.succeeded_at = nullif(sqlc.arg(before_at)::text, '')::timestamptz AND d.id < sqlc.arg(before_id)::bigint))
ORDER BY d.succeeded_at DESC, d.id DESC
LIMIT sqlc.arg(page_size)::bigint;

-- name: AttemptTime :one
SELECT coalesce(to_char(attempted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), '')::text
FROM webhook_attempts WHERE id = sqlc.arg(id) AND endpoint_id = sqlc.arg(endpoint_id);

-- name: SuccessTime :one
SELECT coalesce(to_char(succeeded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'), '')::text
FROM webhook_deliveries
WHERE id = sqlc.arg(id) AND endpoint_id = sqlc.arg(endpoint_id) AND success_attempt IS NOT NULL;

-- name: RecoverDeliveries :execrows
INSERT INTO webhook_deliveries (event_id, endpoint_id, state, attempts, failures, next_attempt_at)
SELECT ev.id, sqlc.arg(endpoint_id)::uuid, 'pending', 0, 0, sqlc.arg(due_at)::timestamptz
FROM events ev
WHERE ev.platform_id = sqlc.arg(platform_id)
  AND ev.created_at >= sqlc.arg(since)::timestamptz AND ev.created_at < sqlc.arg(until)::timestamptz
  AND ev.type <> 'webhook.test'
  AND (sqlc.arg(all_events)::bigint = 1 OR EXISTS (
      SELECT 1 FROM webhook_subscriptions s WHERE s.endpoint_id = sqlc.arg(endpoint_id)::uuid AND s.type = ev.type))
  AND NOT EXISTS (
      SELECT 1 FROM webhook_attempts a WHERE a.event_id = ev.id AND a.endpoint_id = sqlc.arg(endpoint_id)::uuid
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
       WHERE d.endpoint_id = e.id AND d.state = 'pending' AND d.failures > 0) >= sqlc.arg(break_after)::bigint;
