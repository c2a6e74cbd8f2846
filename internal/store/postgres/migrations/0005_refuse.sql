-- 0005 (PostgreSQL): payments_refuse(message) fails the statement that calls it, with
-- message, as the foreign key it stands for would have (SQLSTATE 23503). EmitEvents calls
-- it for an event of no platform (events keep no key to their platform: 0004), so that
-- the refusal is the database's own: a COMMIT sent behind the statement, in the same round
-- trip, then commits nothing.
CREATE FUNCTION payments_refuse(message text) RETURNS bigint LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RAISE EXCEPTION USING MESSAGE = message, ERRCODE = 'foreign_key_violation';
END
$$;
