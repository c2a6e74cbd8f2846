-- 0008 (PostgreSQL): a placeholder for the migration number reserved for another item of
-- issue 32, so that this branch's 0009 applies in sequence; the merge replaces it with
-- that item's migration (or drops it and renumbers). It changes nothing.
SELECT 1;
