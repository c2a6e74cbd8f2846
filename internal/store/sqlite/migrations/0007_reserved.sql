-- 0007: a placeholder, so that this branch's migrations run in sequence. Issue 32 reserved
-- 0007 for another change made in parallel; at the merge that change's 0007 replaces this
-- file, which does nothing.
SELECT 1;
