-- 0009 (PostgreSQL): each event's position in the events list. xact_id is the id of the
-- transaction that wrote the event (pg_current_xact_id(): the top-level transaction's,
-- a 64-bit xid8 that does not wrap around), set by the column's default, so every
-- statement that writes events (CreateEvent, EmitEvents) records it without naming it.
-- The list shows an event only once its transaction id is below the reader's snapshot
-- horizon (pg_snapshot_xmin: every transaction with a smaller id has ended), in the order
-- (xact_id, id): a transaction still open, which alone could write an event listed later,
-- has an id at or above that horizon, so nothing can appear behind a position a reader
-- has passed. Events written before this migration have xact_id 0: they list first, in
-- the id order they listed in (the ALTER waits for the transactions writing events, so
-- none of them commits later).
ALTER TABLE events ADD COLUMN xact_id xid8 NOT NULL DEFAULT '0';
ALTER TABLE events ALTER COLUMN xact_id SET DEFAULT pg_current_xact_id();
CREATE INDEX events_position ON events (platform_id, xact_id, id);
