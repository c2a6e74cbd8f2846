-- 0004 (PostgreSQL): the rows a create writes beside its user keep no foreign key to it,
-- nor the user one to its platform, nor an event one to its platform. Each key's check is a
-- query of its own, run for every row inserted, which locks the parent row (FOR KEY SHARE):
-- three per user and one per event, about a third of the database's time in a batch of
-- creates. They guard nothing the statements do not: only CreateUserRows and
-- CreateUsersRows (and the plain CreateUser, CreateWallet and CreateUserSettings) insert
-- into users, wallets and user_settings, and only EmitEvents (and the plain CreateEvent)
-- into events; each writes a row only from its parent's row (a test keeps it so), and
-- EmitEvents fails when an event has no platform. Neither users nor platforms are ever
-- deleted. The other tables that refer to a user keep their keys: their rows are written by
-- requests that name the user.
ALTER TABLE users DROP CONSTRAINT users_platform_id_fkey;
ALTER TABLE wallets DROP CONSTRAINT wallets_user_id_fkey;
ALTER TABLE user_settings DROP CONSTRAINT user_settings_user_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_platform_id_fkey;
