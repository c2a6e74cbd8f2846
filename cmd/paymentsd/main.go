// Paymentsd serves the Platform Payments API and administers its database: one program
// for the server and for everything that has no HTTP route.
//
// Usage:
//
//	paymentsd serve           [-db F] [-addr 127.0.0.1:8080] [-env sandbox|production] [-timestamp-tolerance 300s] [-idempotency-ttl 24h] [-tls-cert FILE -tls-key FILE]
//	                          [-rate-limit R [-rate-burst B]] [-auth-failures 300] [-client-ip-header NAME]
//	                          [-log-level info] [-log-format json|text] [-metrics-addr ADDR] [-db-max-conns N]
//	                          [-data-key-file F] [-old-data-key-file F]... [-webhook-retry-schedule LIST] [-webhook-timeout 15s]
//	                          [-webhook-workers 32] [-webhook-endpoint-concurrency 4] [-event-retention 30d] [-webhook-allow-cidr CIDR]...
//	paymentsd platform create [-db F] [-env sandbox|production] [-require-timestamp] -name NAME
//	paymentsd apikey create   [-db F] -user USER_ID
//	paymentsd user verify     [-db F] [-fail -reason TEXT] USER_ID
//	paymentsd card add        [-db F] -user USER_ID [-brand visa] [-last4 4242] [-exp 12/2030]
//	paymentsd address add     [-db F] -user USER_ID -payee PAYEE_ID FILE|-
//	paymentsd rates set       [-db F] -base USD -payout INR -rate 83.12 [-fixed] [-at 2026-01-02T15:04:05]
//	paymentsd rules load      [-db F] FILE|-
//	paymentsd keys generate   -out FILE
//	paymentsd keys status     [-db F]
//	paymentsd keys rotate     [-db F] -new-key-file FILE [-batch 100] [-rate 1000]
//	paymentsd backup          [-db F] FILE
//	paymentsd webhook add     [-db F] -platform ID -url URL [-events a,b] [-description TEXT] [-signature v1|ed25519]
//	paymentsd webhook list    [-db F] -platform ID
//	paymentsd webhook remove  [-db F] -platform ID ENDPOINT_ID
//	paymentsd webhook trigger [-db F] -platform ID TYPE
//	paymentsd webhook probe   -secret whsec_…|whsk_… [-webhook-allow-cidr CIDR]... [-timeout 15s] [-json] URL
//	paymentsd webhook listen  -secret whsec_…|whpk_… [-addr 127.0.0.1:8090] [-tolerance 5m]
//	paymentsd call [-url URL] (-platform ID -secret S [-timestamp T] | -api-key K -api-secret S) [-header 'Name: value']... METHOD TARGET [BODY]
//	paymentsd test [-v] [-run REGEXP] FILE.txtar...
//	paymentsd bench -url URL -platform ID -secret S [-op OP] [-c 50] [-d 10s] [-baseline]
//	paymentsd openapi
//	paymentsd version         [-json]   (also paymentsd -version)
//
// The administration commands (platform create to keys status; webhook add, list and
// remove) and call are the table of package internal/command, which scenarios run too: a
// scenario line is the same command without -db and -url (a scenario's webhook listen is
// its own receiver, not this one). A FILE argument may be - for standard input; call's
// BODY may also be the JSON itself, when it starts with { or [.
//
// Every command but call, test, keys generate and webhook listen works on the database
// named by -db, else $PAYMENTS_DB, else payments.db (a SQLite file, or a postgres:// URL),
// creating and migrating it on first use, and says on stderr which one when -db does not
// name it; the server and the other commands may use one database at the same time. Full account numbers and platform secrets
// are stored sealed under a data key (base64 of 32 bytes): from -data-key-file FILE, else
// $PAYMENTS_DATA_KEY, else the file named like the database with .key appended, which the
// first command on a new database creates (mode 0600) and says so once. During a key
// rotation, older keys are given with -old-data-key-file FILE (repeatable) or
// $PAYMENTS_OLD_DATA_KEYS. What a command creates is printed on stdout as one line of JSON.
// serve logs JSON on stderr, including the address it listens on, and stops gracefully
// on SIGINT or SIGTERM; each platform and each user-API key may send -rate-limit requests
// a second (-rate-burst at once), and -auth-failures failed authentications a minute from
// one address or for one credential, before 429 (0 turns a limit off). call signs a request as a platform (or authenticates it with a
// user-API key), sends it and prints the response body. test runs scenario scripts (see
// package scenario) against a fresh server each, and reports the failures.
//
// A platform created with -require-timestamp must send X-Timestamp, its Unix seconds,
// covered by the signature (call -timestamp now does both); serve -timestamp-tolerance is
// how far from the server's clock it may be, either way (default 300s).
//
// Every serve flag may come from the environment instead: PAYMENTS_ and its name in
// capitals, dashes to underscores (PAYMENTS_ADDR, PAYMENTS_RATE_LIMIT); a flag given wins.
// call goes, without -url, to $PAYMENTS_URL, else http://$PAYMENTS_ADDR, else
// http://127.0.0.1:8080, and signs with $PAYMENTS_PLATFORM_ID and $PAYMENTS_PLATFORM_SECRET
// when -platform and -secret are not given.
//
// Exit status: 0 on success, 1 when the operation failed (for call: a status other than
// 2xx), 2 for bad flags or arguments. Run 'paymentsd -h' or 'paymentsd COMMAND -h' for
// details.
package main

import (
	"os"
)

func main() {
	os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
