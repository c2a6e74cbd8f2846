-- 0007 (PostgreSQL), as SQLite's 0007_endpoint_health.sql: what an endpoint's health, its attempts list and its recovery read, by endpoint:
-- its attempts and its successes newest first, its pending deliveries, and a platform's
-- events by time.
CREATE INDEX webhook_attempts_endpoint ON webhook_attempts (endpoint_id, attempted_at, id);
CREATE INDEX webhook_deliveries_endpoint_success ON webhook_deliveries (endpoint_id, succeeded_at, id)
    WHERE success_attempt IS NOT NULL;
CREATE INDEX webhook_deliveries_endpoint_pending ON webhook_deliveries (endpoint_id) WHERE state = 'pending';
CREATE INDEX events_platform_created ON events (platform_id, created_at);
