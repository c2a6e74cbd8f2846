-- 0004 (PostgreSQL): the rows a create writes beside its user keep no foreign key to it,
-- nor the user one to its platform. Each key's check is a query of its own, run for every
-- row inserted, which locks the parent row (FOR KEY SHARE): three per user, about a third
-- of the database's time in a batch of creates. They guard nothing the statements do not:
-- only CreateUserRows and CreateUsersRows insert into these tables (a test keeps it so),
-- each in one statement that selects the platform's row it has just locked and inserts the
-- wallet and settings of the users it inserts, and neither users nor platforms are ever
-- deleted. The other tables that refer to a user keep their keys: their rows are written
-- by requests that name the user.
ALTER TABLE users DROP CONSTRAINT users_platform_id_fkey;
ALTER TABLE wallets DROP CONSTRAINT wallets_user_id_fkey;
ALTER TABLE user_settings DROP CONSTRAINT user_settings_user_id_fkey;
