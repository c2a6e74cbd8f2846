// Package scenario runs end-to-end scenarios of the Platform Payments API: scripts in
// the txtar format of testscript (github.com/rogpeppe/go-internal/testscript) that read
// like a terminal session.
//
// Each script gets a fresh database file, $WORK/payments.db (in $DB), with its data key
// in $DB.key (created by the first open, as for any new database), and the real server
// (payments.Open and httpserver.New) running on it, at $URL, in the sandbox environment.
// When $PAYMENTS_TEST_POSTGRES holds a PostgreSQL URL, the database is instead a schema of
// its own in that database ($DB its URL, the key in $WORK/payments.key), dropped when the
// script ends; the conditions [sqlite] and [postgres] say which engine a script runs on,
// for the lines that look at SQLite's files. Files written after the script as
// "-- name --" sections are request bodies and expected answers. Scripts run in parallel,
// each in its own world.
//
//	func TestScripts(t *testing.T) { scenario.Run(t, "testdata") }
//
// Without Go, "paymentsd test FILE.txtar..." runs the same scripts with the same
// commands and reports each failure: the script line, what was expected, what came back.
//
// A line starting with "!" expects the command to fail. Commands that cannot
// meaningfully fail (call, restart, jsonget, sign, webhook listen, genbody, uuidform)
// refuse "!"; a
// misused command fails with its usage line either way. Besides the standard testscript
// commands (env, exists, stdout, stderr, cmp, ...), scripts use these:
//
// # Administration and call: paymentsd's commands
//
// The administration commands and call are paymentsd's, from the one table of package
// internal/command: a script line is the paymentsd command without -db and -url, which
// the script implies (its database and its server), and is parsed by the same code.
// "paymentsd COMMAND -h" describes each. A FILE is a file of the script; a script has no
// standard input for them, so "-" is refused. Each prints what it made as one line of
// JSON and sets the variables its table entry names:
//
//	platform create [-env sandbox|production] [-require-timestamp] -name NAME
//
// Creates a platform (of the server's environment unless -env says otherwise) and sets
// $PLATFORM_ID and $PLATFORM_SECRET, the credentials call uses by default.
//
//	apikey create -user USER_ID
//
// Issues a user-API key for the user and sets $API_KEY and $API_SECRET, for
// call -api-key $API_KEY -api-secret $API_SECRET.
//
//	user verify [-fail -reason TEXT] USER_ID
//
// Marks the user identity-verified and prints {"user_id", "verified": true}. With -fail
// -reason TEXT it records instead that the user's verification failed (the event
// user.verification.failed, with the reason) and prints {"user_id",
// "verification_failed": true, "reason"}; a verified user stays verified. -fail without
// -reason, or -reason without -fail, is a usage error.
//
//	card add -user USER_ID [-brand visa] [-last4 4242] [-exp 12/2030]
//
// Saves a card for the user and sets $CARD_ID.
//
//	address add -user USER_ID -payee PAYEE_ID FILE
//
// Stores the address in FILE (a JSON object, validated as an API body) for the user's
// payee, prints the API's record of it and sets $ADDRESS_ID.
//
//	rates set -base USD -payout INR -rate 83.12 [-fixed] [-at 2026-01-02T15:04:05]
//
// Adds an exchange rate to the history, applying from now unless -at says when.
//
//	rules load FILE
//
// Replaces the payee rules with the JSON array in FILE; a faulty file changes nothing.
//
//	keys status
//
// Prints the data keys of the database and how many values each seals.
//
//	call [-platform ID] [-secret S] [-sig SIGNATURE] [-timestamp T] [-api-key K -api-secret S] [-nosign] [-type CONTENT_TYPE] [-header 'Name: value']... [-expand] METHOD TARGET [BODY]
//
// Sends a request to $URL+TARGET (the path and query, sent byte for byte) and prints the
// response body; the status line goes to stderr, and the answer becomes the last response.
// A platform request carries X-Platform-ID $PLATFORM_ID and X-Signature computed from
// $PLATFORM_SECRET: -platform and -secret change the credentials, -sig sends the given
// signature instead, an empty -platform or -sig leaves out just that header, and -nosign
// sends no credentials. With -api-key and -api-secret it is a user-API request (an empty
// one leaves out its header). -timestamp T sends X-Timestamp and signs it with the request:
// T is now, the Unix seconds of the server's clock when the command runs; now-DURATION or
// now+DURATION, that far from it in whole seconds (now-400s, now+5m); or anything else,
// sent and signed exactly as written (1700000000, or a malformed value such as yesterday).
// BODY is a file of the script, sent without its one trailing newline, with $VARS expanded
// when -expand is given; or, when it starts with { or [, the JSON itself. A body is sent
// as application/json unless -type says otherwise; an empty -type sends no Content-Type.
// -header adds a header, or replaces one call would send, and may be repeated. The
// command succeeds whatever the status: assert it with status, and the body with json,
// cmpjson or testscript's stdout.
//
// # The server
//
//	restart [-env sandbox|production] [-timestamp-tolerance DURATION] [-rate-limit R] [-rate-burst B] [-auth-failures N] [-client-ip-header NAME] [-webhook-retry-schedule LIST] [-webhook-timeout DURATION] [-webhook-workers N] [-webhook-endpoint-concurrency N] [-event-retention DURATION] [-webhook-allow-cidr CIDR|none]
//
// Stops the server and closes the database, then opens the same file again and serves
// it in the given environment (sandbox by default) at a new $URL: what survives was
// stored. The last response is forgotten, and so is what the limits counted.
// -timestamp-tolerance sets how far X-Timestamp may be from the server's clock (whole
// seconds: 30s, 5m; 300s unless given). The limit flags are those of paymentsd serve,
// with its defaults: low limits make a 429 come soon (restart -rate-limit 0.01
// -rate-burst 2: two requests, then one every 100 seconds), 0 turns a limit off, and with
// -client-ip-header X-Forwarded-For a request sent with -header 'X-Forwarded-For:
// 203.0.113.7' comes from that address. The webhook flags are paymentsd serve's too: the
// server of a script runs a dispatcher that allows loopback addresses (127.0.0.0/8, ::1)
// and retries after 1s, 1s and 1s; a flag left out keeps its value, and
// -webhook-allow-cidr none allows public addresses only, as paymentsd serve does by
// default.
//
// # Signatures
//
//	sign [-secret S] [-upper] [-timestamp T] [-expand] VAR METHOD TARGET [BODY]
//
// Sets $VAR to the X-Signature of that request under $PLATFORM_SECRET (or S), in upper
// case hex with -upper: with call -sig, it sends a request signed for another one.
// -timestamp T signs the timestamped form with T as call reads it; now is read when
// sign runs, so a later call -timestamp now may send another second. METHOD, TARGET and
// BODY are read as call reads them.
//
// # The last response
//
//	status CODE
//
// Asserts the last response's status (with "!": that it was any other). A failure shows
// the expected and the actual status and the response body.
//
//	header NAME VALUE_REGEXP
//
// Asserts that a value of the last response's header NAME matches the regular
// expression (with "!": that none does).
//
//	jsonget VAR PATH
//
// Sets $VAR to the value at PATH in the last response body: a string as it is, anything
// else as compact JSON. A path names members and array indexes with dots
// (data.user_id, records.0.name, detail.1.loc); "." is the whole body.
//
//	json PATH EXPECTED
//
// Asserts the value at PATH: a string must equal EXPECTED, anything else must be the
// JSON EXPECTED (json data.email null, json totalRecords 3,
// json detail.0.loc '["body","name"]'). With "!": the value differs or is absent. A
// failure shows the path, the expected and the actual value.
//
//	cmpjson FILE
//
// Asserts that the last response body is the JSON in FILE, after expanding $VARS in it
// (write $$ for a "$" that comes before a letter).
// Member order and spacing do not matter. The clock fields queryGeneratedTime,
// created_at and updated_at are not compared when both sides have them; the string
// "<any>" in FILE matches any value that is present, and "<uuid>" any UUID in the form
// the API answers (a generated id). A mismatch prints a diff of both, indented. With
// "!": the body differs.
//
// # Webhooks
//
// A script receives the server's webhook deliveries itself, on a receiver of its own on
// the loopback address, and checks them. The receiver verifies each delivery (its
// webhook-id, webhook-timestamp and webhook-signature headers, Standard Webhooks) under
// every webhook secret the script has seen: a "secret" member starting with whsec_ (or a
// "public_key" member starting with whpk_, of an endpoint signing ed25519 v1a), at the top
// level or in "data", of any answer to call or of the JSON an administration command
// prints. Secrets are kept once seen, so while a rotated secret is still live a
// delivery signed under either verifies.
//
// The endpoints themselves are set up with paymentsd's commands (the table's, as the
// administration commands are, done on the database):
//
//	webhook add -platform ID -url URL [-events a,b] [-description TEXT] [-signature v1|ed25519]
//
// Registers URL as an endpoint of the platform, for the event types -events lists
// (separated by commas; every type, "*", unless given), prints the endpoint with its
// secret, which the script then knows, and sets $WEBHOOK_ID and $WEBHOOK_SECRET (with
// -signature ed25519: the endpoint's public_key, which verifies its v1a signatures). The URL
// and the types are checked as the API checks them: a URL the server refuses (ftp://x)
// or an unknown type fails with the API's message.
//
//	webhook trigger -platform ID TYPE
//
// Makes a real event of TYPE on the sandbox platform by making the change that emits it
// (a new user "Trigger Test", and the card, payee, payee bank, ... the type needs), as
// paymentsd webhook trigger does; prints what it made and sets $TRIGGER_USER_ID and
// $TRIGGER_OBJECT_ID (the event's data.object.id). A production or unknown platform fails;
// the service-wide types (exchange_rate.updated, payee_rules.updated) and an unknown type
// are usage errors.
//
//	webhook list -platform ID
//
// Prints the platform's endpoints, oldest first, as a JSON array on one line, without
// their secrets.
//
//	webhook remove -platform ID ENDPOINT_ID
//
// Deletes the endpoint and prints {"id", "deleted": true}; an endpoint the platform does
// not have fails (not found).
//
//	webhook get -platform ID ENDPOINT_ID
//	webhook update -platform ID [-url URL] [-events a,b] [-description TEXT | -no-description] [-signature v1|ed25519] ENDPOINT_ID
//	webhook disable -platform ID ENDPOINT_ID
//	webhook enable -platform ID ENDPOINT_ID
//	webhook recover -platform ID -since TIME [-until TIME] ENDPOINT_ID
//	webhook test -platform ID ENDPOINT_ID
//	webhook attempts -platform ID [-after ATTEMPT_ID] [-limit N] ENDPOINT_ID
//
// The API's Get, Update, Disable and Enable Webhook Endpoint, Recover Webhook Endpoint
// (TIME in RFC 3339), Send Test Webhook and List Webhook Attempts, done on the database;
// each prints the answer's data as JSON on one line, and fails with the API's message
// where the API refuses.
//
// The script's receiver:
//
//	webhook listen [-fail N] [-status CODE]
//
// Starts the receiver and sets $WEBHOOK_URL to its URL (http://127.0.0.1:PORT/hook),
// the URL to register as an endpoint. It records every request and answers CODE (200
// unless given), or 500 to the next N deliveries, then CODE. Run again, it changes the
// answers of the same receiver (same URL, the N failures counted afresh) and keeps what
// it received. It stops when the script ends; a restart of the server leaves it running.
//
//	webhook expect TYPE [-within DURATION]
//
// Waits up to DURATION (10s unless given) for a delivery of an event of type TYPE
// ("user.created") whose signature verifies and that no earlier webhook expect returned:
// the oldest such, in the order they arrived, each attempt of a retried event counted as
// a delivery of its own. The delivery becomes the last response, status 200 with the
// delivery's request headers and body, so that json data.object.id $USER_ID, header
// webhook-id $EVENT_ID and jsonget read it; its body is printed, and $EVENT_ID is set to
// the event's id. A failure lists what did arrive: each delivery's type and webhook-id,
// whether it verified (and why not) and the status answered. With "!": no such delivery
// arrives within DURATION (give a short one, -within 500ms).
//
//	webhook count TYPE N
//
// Asserts that exactly N deliveries of type TYPE that verify have arrived so far, every
// attempt counted, whether or not webhook expect returned them (with "!": any other
// number). A failure lists what did arrive.
//
// # Generators
//
//	genbody FILE SIZE
//
// Writes FILE: a JSON object {"name":"xxx…"} of exactly SIZE bytes, for the body size
// limit.
//
//	uuidform VAR upper|simple|braced|urn ID
//
// Sets $VAR to the UUID ID written another way: in capitals, as 32 hex digits, in
// braces, or as a urn:uuid: URN.
package scenario
