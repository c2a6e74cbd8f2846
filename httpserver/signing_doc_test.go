package httpserver

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/platform-payments/payments"
)

// The worked examples of docs/signing.md's "Debugging a signature", computed with the
// library's signing code, and its table of the reasons authentication refuses for.

const signingDocFile = "../docs/signing.md"

// The generated block of docs/signing.md lies between these lines.
const (
	signingDocBegin = "<!-- Computed by TestSigningDoc (httpserver/signing_doc_test.go) with the library's signing code: go test ./httpserver -run TestSigningDoc -update rewrites it. -->\n"
	signingDocEnd   = "<!-- End of the computed examples. -->\n"
)

// TestSigningDoc: the worked examples of docs/signing.md are what the library computes
// now (-update rewrites them), and its table of reasons, like docs/operations.md, names
// every AuthFailure the library defines and no other.
func TestSigningDoc(t *testing.T) {
	raw, err := os.ReadFile(signingDocFile)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	begin, end := strings.Index(doc, signingDocBegin), strings.Index(doc, signingDocEnd)
	if begin < 0 || end < begin {
		t.Fatalf("%s has no block between %q and %q", signingDocFile, signingDocBegin, signingDocEnd)
	}
	want := doc[:begin] + signingDocBegin + signingExamples() + signingDocEnd + doc[end+len(signingDocEnd):]
	if *update {
		if err := os.WriteFile(signingDocFile, []byte(want), 0o644); err != nil { // #nosec G306 -- a source file of the repository
			t.Fatal(err)
		}
	} else if doc != want {
		t.Errorf("%s's worked examples are stale: run go test ./httpserver -run TestSigningDoc -update and commit it\n%s",
			signingDocFile, firstDifference(raw, []byte(want)))
	}

	reasons := authFailures(t)
	var listed []string
	for line := range strings.Lines(doc) {
		if rest, ok := strings.CutPrefix(line, "| `"); ok && strings.Contains(rest, "` |") {
			name := rest[:strings.Index(rest, "`")]
			if strings.Trim(name, "abcdefghijklmnopqrstuvwxyz_") == "" {
				listed = append(listed, name)
			}
		}
	}
	slices.Sort(listed)
	if listed = slices.Compact(listed); !slices.Equal(listed, reasons) {
		t.Errorf("%s's table of reasons lists %q, want the AuthFailures %q", signingDocFile, listed, reasons)
	}
	ops, err := os.ReadFile("../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"`auth_failure`", "`payments_auth_failures_total`", "`reason`"} {
		if !strings.Contains(string(ops), want) {
			t.Errorf("docs/operations.md does not mention %s", want)
		}
	}
}

// authFailures returns the values of the root package's AuthFailure constants, sorted:
// read from its source, so that a reason added there and not here fails the test.
func authFailures(t *testing.T) []string {
	t.Helper()
	fset := token.NewFileSet()
	files, err := parserFiles(fset, "..")
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, f := range files {
		for _, decl := range f.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.CONST {
				continue
			}
			for _, spec := range gd.Specs {
				vs := spec.(*ast.ValueSpec)
				if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "AuthFailure" {
					continue
				}
				for _, v := range vs.Values {
					lit, ok := v.(*ast.BasicLit)
					if !ok || lit.Kind != token.STRING {
						t.Fatalf("%s: an AuthFailure that is not a string literal", fset.Position(v.Pos()))
					}
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						t.Fatal(err)
					}
					reasons = append(reasons, s)
				}
			}
		}
	}
	if len(reasons) == 0 {
		t.Fatal("no AuthFailure constant found in the root package")
	}
	slices.Sort(reasons)
	return reasons
}

// parserFiles parses the Go files of dir but its tests.
func parserFiles(fset *token.FileSet, dir string) ([]*ast.File, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, dir+"/"+name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}

// The worked examples: a GET with a query, and api.md's POST with a JSON body, both
// signed with api.md's secret.
const (
	exampleGetTarget  = "/api/platform/cross-border/rates?payout_currency=INR"
	examplePostTarget = "/api/platform/users/create"
	examplePostBody   = `{"name":"Ada Lovelace","email":"ada@example.com"}`
)

// signingExamples renders the worked examples of "Debugging a signature".
func signingExamples() string {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	body := []byte(examplePostBody)

	w("\nBoth examples are signed with the secret of\n[api.md's worked example](api.md#authentication-and-signing), ")
	w("the HMAC's key as issued: its %d\ncharacters as text, not the %d bytes they spell in hex.\n\n",
		len(signingSecret), len(signingSecret)/2)
	w("    %s\n\n", signingSecret)

	w("### A GET with a query\n\n")
	w("`%s %s`, without a body.\n\n", "GET", exampleGetTarget)
	signingSteps(w, "GET", exampleGetTarget, nil)

	w("### A POST with a JSON body\n\n")
	w("`%s %s` with this body, %d bytes sent as they are here, with no newline\n", "POST", examplePostTarget, len(body))
	w("after the `}` (`hexdump -C`: offsets in hex, and `.` for a byte not printable, a newline's `0a`\n")
	w("among them):\n\n")
	w("%s\n", indentedDump(body))
	signingSteps(w, "POST", examplePostTarget, body)
	w("A platform that requires signed timestamps appends the `X-Timestamp` value as sent, `%s`\n", signingTimestamp)
	w("here, to the string to sign (%d bytes more, from offset %d), and signs that:\n\n",
		len(signingTimestamp), len(payments.StringToSign("POST", examplePostTarget, body)))
	w("    X-Signature: %s\n\n", payments.SignTimestamped(signingSecret, "POST", examplePostTarget, body, signingTimestamp))

	w("### The same steps by hand\n\n")
	w("The POST's steps in a shell. `printf '%%s'` writes its argument and nothing else, where `echo`\n")
	w("would add a newline, which is a byte of what is hashed:\n\n")
	sts := payments.StringToSign("POST", examplePostTarget, body)
	postSum := sha256.Sum256(body)
	script := [][2]string{ // a command, and its comment
		{"body='" + examplePostBody + "'", ""},
		{"secret='" + signingSecret + "'", ""},
		{`hash=$(printf '%s' "$body" | sha256sum | cut -c1-64)`, "step 1: " + hex.EncodeToString(postSum[:4]) + "…"},
		{`sts="POST` + examplePostTarget + `$hash"`, "step 2"},
		{`printf '%s' "$sts" | hexdump -C`, ""},
		{`printf '%s' "$sts" | openssl dgst -sha256 -hmac "$secret" -r`,
			"step 3: " + payments.Sign(signingSecret, "POST", examplePostTarget, body)[:8] + "…"},
	}
	for _, line := range script {
		if line[1] == "" {
			w("    %s\n", line[0])
		} else {
			w("    %-62s # %s\n", line[0], line[1])
		}
	}
	w("\n")

	w("### What a slip gives\n\n")
	w("Each of these clients makes one mistake in an example above; its request is answered `401`\n")
	w("with `\"Invalid credentials.\"` and logged with the reason shown.\n\n")
	w("| the client | what it signs | its `X-Signature` | logged |\n|---|---|---|---|\n")
	newline := append(body[:len(body):len(body)], '\n')
	sum := sha256.Sum256(newline)
	w("| hashes the POST's body with a newline after it (`json.Encoder` writes one, and a file often ends with one) but sends it without, or the reverse | body hash `%s` | `%s` | `%s` |\n",
		hex.EncodeToString(sum[:]), payments.Sign(signingSecret, "POST", examplePostTarget, newline), payments.AuthFailureBadSignature)
	w("| signs the GET's path without its query | `%s` | `%s` | `%s` |\n",
		payments.StringToSign("GET", "/api/platform/cross-border/rates", nil),
		payments.Sign(signingSecret, "GET", "/api/platform/cross-border/rates", nil), payments.AuthFailureBadSignature)
	decoded, err := hex.DecodeString(signingSecret)
	if err != nil {
		panic(err)
	}
	mac := hmac.New(sha256.New, decoded)
	mac.Write([]byte(sts))
	w("| keys the POST's HMAC with the %d bytes the secret spells in hex | the POST's string to sign | `%s` | `%s` |\n",
		len(decoded), hex.EncodeToString(mac.Sum(nil)), payments.AuthFailureBadSignature)
	w("| appends `X-Timestamp` to the POST's string (and sends it) though its platform does not require signed timestamps | `…%s` | `%s` | `%s` |\n\n",
		signingTimestamp, payments.SignTimestamped(signingSecret, "POST", examplePostTarget, body, signingTimestamp),
		payments.AuthFailureTimestampNotRequired)
	return b.String()
}

// signingSteps renders the three steps of signing a request.
func signingSteps(w func(string, ...any), method, target string, body []byte) {
	sum := sha256.Sum256(body)
	bodyHash := hex.EncodeToString(sum[:])
	sts := payments.StringToSign(method, target, body)

	w("**1. The body's SHA-256**, in lower-case hex")
	if len(body) == 0 {
		w(". A request without a body hashes no bytes at all,\nso every GET has this one")
	}
	w(":\n\n    %s\n\n", bodyHash)

	w("**2. The string to sign**: the method, the request target and step 1, end to end, %d\n", len(sts))
	w("bytes. Nothing separates the parts, and no newline follows the last:\n\n")
	w("| offset | length | part | bytes |\n|---|---|---|---|\n")
	w("| 0 | %d | the method, as sent | `%s` |\n", len(method), method)
	w("| %d | %d | the request target: path and query, exactly as on the request line | `%s` |\n", len(method), len(target), target)
	w("| %d | %d | step 1 | `%s` |\n\n", len(method)+len(target), len(bodyHash), bodyHash)
	w("Byte by byte (`hexdump -C`):\n\n%s\n", indentedDump([]byte(sts)))

	w("**3. The signature**: HMAC-SHA256 of the string to sign under the secret, in hex (the server\n")
	w("takes either case):\n\n")
	w("    X-Signature: %s\n\n", payments.Sign(signingSecret, method, target, body))
}

// indentedDump is what hexdump -C prints of b, its last line the length, as a Markdown
// code block.
func indentedDump(b []byte) string {
	dump := hex.Dump(b) + fmt.Sprintf("%08x\n", len(b))
	var out strings.Builder
	for line := range strings.Lines(dump) {
		out.WriteString("    " + line)
	}
	return out.String()
}
