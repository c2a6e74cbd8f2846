-- 0003 (PostgreSQL): the creation time of each platform's newest user, so that one
-- statement (CreateUserRows) can number a user and time it no earlier than the user before
-- it, whichever instance created that one. The row is written under the platform row's
-- lock, which the same statement takes first, and an upsert reads the row as the last
-- writer left it (a statement's snapshot, taken before it waited for the lock, would not).
-- No foreign key: only that statement writes a row, for the platform whose row it has
-- just updated, and a key's check would cost every create.
CREATE TABLE user_clocks (
    platform_id  TEXT COLLATE "C" NOT NULL,
    last_user_at TEXT COLLATE "C" NOT NULL,
    CONSTRAINT user_clocks_pkey PRIMARY KEY (platform_id)
);
INSERT INTO user_clocks (platform_id, last_user_at)
SELECT platform_id, max(created_at) FROM users GROUP BY platform_id;
