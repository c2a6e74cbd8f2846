-- 0002: pw_id numbers each platform's users 1, 2, 3... in creation order. It was one
-- counter over all platforms, so a platform watching its own users' pw_id learned how many
-- users every other platform created. Each user's position within its platform (seq) was
-- already kept, gap-free, by the platform's user_count: it becomes pw_id, and the old
-- global number stays as the row's internal key, row_id, shown nowhere.
ALTER TABLE users RENAME COLUMN pw_id TO row_id;
ALTER TABLE users RENAME COLUMN seq TO pw_id;
