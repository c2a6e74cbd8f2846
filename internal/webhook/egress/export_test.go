package egress

// RetryAfter is retryAfter, for the tests.
var RetryAfter = retryAfter
