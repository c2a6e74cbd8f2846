// Package scenario runs end-to-end scenarios of the Platform Payments API: scripts in
// the txtar format of testscript (github.com/rogpeppe/go-internal/testscript) that read
// like a terminal session.
//
// Each script gets a fresh database file, $WORK/payments.db (in $DB), with its data key
// in $DB.key (created by the first open, as for any new database), and the real server
// (payments.Open and httpserver.New) running on it, at $URL, in the sandbox environment. Files written after the script as "-- name --" sections are request
// bodies and expected answers. Scripts run in parallel, each in its own world.
//
//	func TestScripts(t *testing.T) { scenario.Run(t, "testdata") }
//
// Without Go, "paymentsd test FILE.txtar..." runs the same scripts with the same
// commands and reports each failure: the script line, what was expected, what came back.
//
// A line starting with "!" expects the command to fail. Commands that cannot
// meaningfully fail (call, userapi, restart, jsonget, sign, genbody, uuidform) refuse
// "!"; a misused command fails with its usage line either way. Besides the standard
// testscript commands (env, exists, stdout, stderr, cmp, ...), scripts use these:
//
// # Administration (through the library, as an operator would)
//
//	platform create NAME [-env sandbox|production] [-require-timestamp]
//
// Creates a platform (of the server's environment unless -env says otherwise), prints
// {"platform_id","secret","environment"} and sets $PLATFORM_ID and $PLATFORM_SECRET, the
// credentials call uses by default. With -require-timestamp the platform's requests must
// carry a signed X-Timestamp (see call -timestamp), and the JSON ends with
// "require_timestamp":true.
//
//	apikey USER_ID
//
// Issues a user-API key for the user, prints {"api_key","api_secret"} and sets $API_KEY
// and $API_SECRET, the credentials userapi uses by default.
//
//	verify USER_ID
//
// Marks the user identity-verified and prints {"user_id","verified":true}.
//
//	card add USER_ID [-brand BRAND] [-last4 DDDD] [-exp MM/YYYY]
//
// Saves a card for the user (visa, 4242, 12/2030 unless given), prints it and sets
// $CARD_ID.
//
//	address add USER_ID PAYEE_ID FILE
//
// Stores the address in the script's FILE (a JSON object, validated as an API body) for
// the user's payee, prints the API's record of it and sets $ADDRESS_ID.
//
//	rates set BASE PAYOUT RATE [-fixed] [-at YYYY-MM-DDTHH:MM:SS]
//
// Adds an exchange rate to the history (applying from now unless -at says when) and
// prints the rate record.
//
//	rules load FILE
//
// Replaces the payee rules with the JSON array in the script's FILE and prints how many
// were loaded; a faulty file changes nothing.
//
//	restart [-env sandbox|production] [-timestamp-tolerance DURATION] [-rate-limit R] [-rate-burst B] [-auth-failures N] [-client-ip-header NAME]
//
// Stops the server and closes the database, then opens the same file again and serves
// it in the given environment (sandbox by default) at a new $URL: what survives was
// stored. The last response is forgotten, and so is what the limits counted.
// -timestamp-tolerance sets how far X-Timestamp may be from the server's clock (whole
// seconds: 30s, 5m; 300s unless given). The limit flags are those of paymentsd serve,
// with its defaults: low limits make a 429 come soon (restart -rate-limit 0.01
// -rate-burst 2: two requests, then one every 100 seconds), 0 turns a limit off, and with
// -client-ip-header X-Forwarded-For a request sent with -header 'X-Forwarded-For:
// 203.0.113.7' comes from that address.
//
// # Requests
//
//	call [-platform ID] [-secret S] [-sig SIGNATURE] [-nosign] [-timestamp T] [-type CONTENT_TYPE] [-header 'Name: value']... [-expand] METHOD TARGET [BODYFILE]
//
// Sends a platform request to $URL+TARGET (the path and query, sent byte for byte), with
// X-Platform-ID $PLATFORM_ID and X-Signature computed from $PLATFORM_SECRET, and prints
// the response body (the status line goes to stderr). -platform and -secret change the
// credentials, -sig sends the given signature instead, -nosign sends neither header; an
// empty -platform or -sig leaves out just that header. -timestamp T sends X-Timestamp
// and signs it with the request (the form a platform created with -require-timestamp
// verifies). T is now, the Unix seconds of the server's clock when the command runs;
// now-DURATION or now+DURATION, that far from it in whole seconds (now-400s, now+5m);
// or anything else, sent and signed exactly as written (1700000000, or a malformed
// value such as yesterday). BODYFILE is a file of the script;
// the body is its content without its one trailing newline, with $VARS expanded when
// -expand is given. A body is sent as application/json unless -type says otherwise; an
// empty -type sends no Content-Type. -header adds a header, and may be repeated. The
// command succeeds whatever the status: assert it with status, and the body with json,
// cmpjson or testscript's stdout.
//
//	userapi [-key K] [-secret S] [-nokey] [-type CONTENT_TYPE] [-header 'Name: value']... [-expand] METHOD TARGET [BODYFILE]
//
// Sends a user-API request as call does, with X-Api-Key $API_KEY and X-Api-Secret
// $API_SECRET; -key and -secret change them, an empty one leaves out that header, and
// -nokey leaves out both.
//
//	sign [-secret S] [-upper] [-timestamp T] [-expand] VAR METHOD TARGET [BODYFILE]
//
// Sets $VAR to the X-Signature of that request under $PLATFORM_SECRET (or S), in upper
// case hex with -upper: with call -sig, it sends a request signed for another one.
// -timestamp T signs the timestamped form with T as call reads it; now is read when
// sign runs, so a later call -timestamp now may send another second.
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
