package dispatch

// UserAgent is userAgent, for the tests.
var UserAgent = userAgent
