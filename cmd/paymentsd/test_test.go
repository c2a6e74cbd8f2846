package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A scenario that passes, and the same scenario with wrong expectations.
const (
	adaScenario = `# Ada, created and read back.
platform create Acme

# Create her.
call POST /api/platform/users/create ada.json
status 200
json data.name Ada
jsonget USER_ID data.user_id

# Read her back.
call GET /api/platform/users/get/$USER_ID
status 200
cmpjson ada.want
`
	adaFiles = `
-- ada.json --
{"name": "Ada", "email": "ada@example.com"}
-- ada.want --
{"success": true, "message": "Success", "queryGeneratedTime": 0,
 "data": {"user_id": "$USER_ID", "pw_id": "<any>", "name": "Ada", "email": "ada@example.com",
          "phone_country_code": null, "phone": null, "created_at": ""}}
`
)

// writeScenario writes a scenario file in dir and returns its path.
func writeScenario(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}

// wantContains fails for each of wants that s does not contain.
func wantContains(t *testing.T, what, s string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(s, want) {
			t.Errorf("%s does not contain %q:\n%s", what, want, s)
		}
	}
}

func TestTestPasses(t *testing.T) {
	file := writeScenario(t, t.TempDir(), "users_ada.txtar", adaScenario+adaFiles)
	r := runT(t, "", "test", file)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	wantContains(t, "stdout", r.stdout, "--- PASS: "+file+" (", "ok: 1 scenario passed")
	if strings.Contains(r.stdout, "> platform create") {
		t.Errorf("without -v, the log of a passing script is shown:\n%s", r.stdout)
	}

	r = runT(t, "", "test", "-v", file)
	if r.code != 0 {
		t.Fatalf("-v: exit %d, stderr %q", r.code, r.stderr)
	}
	wantContains(t, "-v stdout", r.stdout, "--- PASS: "+file, "> platform create Acme", "> cmpjson ada.want", "PASS\n")
}

func TestTestReportsFailures(t *testing.T) {
	dir := t.TempDir()
	good := writeScenario(t, dir, "good.txtar", adaScenario+adaFiles)
	wrongStatus := writeScenario(t, dir, "wrong_status.txtar",
		strings.Replace(adaScenario, "json data.name Ada\n", "status 201\njson data.name Ada\n", 1)+adaFiles)
	wrongName := writeScenario(t, dir, "wrong_name.txtar",
		strings.Replace(adaScenario, "json data.name Ada", "json data.name Bob", 1)+adaFiles)
	wrongBody := writeScenario(t, dir, "wrong_body.txtar",
		adaScenario+strings.Replace(adaFiles, `"name": "Ada", "email": "ada@example.com",`, `"name": "Bob", "email": "ada@example.com",`, 1))

	r := runT(t, "", "test", good, wrongStatus, wrongName, wrongBody)
	if r.code != 1 {
		t.Fatalf("exit %d, want 1; stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	wantOneLine(t, "stderr", r.stderr, "FAIL: 3 of 4 scenarios failed")
	reports := splitReports(r.stdout)
	if len(reports) != 4 {
		t.Fatalf("want four reports, one per file, in order:\n%s", r.stdout)
	}
	wantContains(t, "the passing report", reports[0], "--- PASS: "+good)

	// The status line: the file and line, both statuses, and the body that came back.
	wantContains(t, "the status report", reports[1],
		"--- FAIL: "+wrongStatus,
		wrongStatus+":7: status 201\n",
		"expected: 201 Created\n",
		"actual:   200 OK\n",
		"response body:\n",
		`"name": "Ada"`,
		"log of the failing part of the script:\n",
		"# Create her.",
		"> call POST /api/platform/users/create ada.json")
	if strings.Contains(reports[1], "# Ada, created") {
		t.Errorf("the log is not trimmed to the failing part:\n%s", reports[1])
	}

	// The json line: the file and line, the path and both values.
	wantContains(t, "the json report", reports[2],
		"--- FAIL: "+wrongName,
		wrongName+":7: json data.name Bob\n",
		"unexpected value at data.name\n",
		`expected: "Bob"`,
		`actual:   "Ada"`)

	// The cmpjson line: a diff of what was expected and what came back.
	wantContains(t, "the cmpjson report", reports[3],
		"--- FAIL: "+wrongBody,
		wrongBody+":13: cmpjson ada.want\n",
		"--- ada.want\n",
		"+++ response\n",
		`-    "name": "Bob",`,
		`+    "name": "Ada",`)
}

// splitReports splits the output of paymentsd test at its "--- " lines.
func splitReports(stdout string) []string {
	var reports []string
	for _, part := range strings.Split(stdout, "\n--- ") {
		if len(reports) > 0 {
			part = "--- " + part
		}
		reports = append(reports, part)
	}
	return reports
}

func TestTestReportsMisuse(t *testing.T) {
	dir := t.TempDir()
	for name, c := range map[string]struct{ script, want string }{
		"status.txtar":  {"platform create Acme\ncall POST /api/platform/users/list empty.json\nstatus ok\n", "usage: status CODE"},
		"json.txtar":    {"platform create Acme\ncall POST /api/platform/users/list empty.json\njson totalRecords\n", "usage: json PATH EXPECTED"},
		"card.txtar":    {"card add 7f0c2a4e-1b7d-4c61-9a53-0d8e7f6b5a41 -exp 2030-12\n", "-exp wants MM/YYYY"},
		"noreply.txtar": {"status 200\n", "no response yet"},
		"stamp.txtar": {"platform create Acme -require-timestamp\ncall -timestamp now-1.5s POST /api/platform/users/list empty.json\n",
			`call: -timestamp "now-1.5s": want now, now+DURATION or now-DURATION in whole seconds (now-400s), or the value to send`},
		"unknown.txtar": {"stauts 200\n", `unknown command "stauts" (did you mean "status"?)`},
		"missing.txtar": {"platform create Acme\ncall POST /api/platform/users/list empty.json\njson records.0.name Ada\n",
			"no value at records.0.name: records has 0 elements: no index 0\n        expected: Ada\n        response body:\n          {\n            \"success\": true,"},
		"member.txtar": {"platform create Acme\ncall POST /api/platform/users/list empty.json\njsonget N totalRecord\n",
			`no value at totalRecord: the body has no member "totalRecord" (it has message, queryGeneratedTime, records, status_code, success, totalRecords)`},
	} {
		file := writeScenario(t, dir, name, c.script+"-- empty.json --\n{}\n")
		r := runT(t, "", "test", file)
		if r.code != 1 {
			t.Errorf("%s: exit %d, want 1", name, r.code)
			continue
		}
		wantContains(t, name, r.stdout, "--- FAIL: "+file, c.want)
	}
}

func TestTestRun(t *testing.T) {
	dir := t.TempDir()
	first := writeScenario(t, dir, "users_first.txtar", adaScenario+adaFiles)
	second := writeScenario(t, dir, "payees_second.txtar", "stauts 200\n")
	r := runT(t, "", "test", "-run", "^users_", first, second)
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q, stdout:\n%s", r.code, r.stderr, r.stdout)
	}
	wantContains(t, "stdout", r.stdout, "--- PASS: "+first, "ok: 1 scenario passed")
	if strings.Contains(r.stdout, second) {
		t.Errorf("-run ^users_ ran %s:\n%s", second, r.stdout)
	}
}

func TestTestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	good := writeScenario(t, dir, "good.txtar", adaScenario+adaFiles)
	notTxtar := writeScenario(t, dir, "notes.txt", adaScenario)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"test"}, "no scenario files given"},
		{[]string{"test", "-v"}, "no scenario files given"},
		{[]string{"test", filepath.Join(dir, "missing.txtar")}, filepath.Join(dir, "missing.txtar") + ": no such file"},
		{[]string{"test", good, filepath.Join(dir, "missing.txtar")}, filepath.Join(dir, "missing.txtar") + ": no such file"},
		{[]string{"test", notTxtar}, notTxtar + ": not a .txtar file"},
		{[]string{"test", dir}, dir + ": not a .txtar file"},
		{[]string{"test", "-run", "(", good}, "-run: error parsing regexp"},
		{[]string{"test", "-run", "nothing", good}, `no scenario file matches -run "nothing"`},
		{[]string{"test", "-x", good}, "flag provided but not defined: -x"},
	} {
		r := runT(t, "", c.args...)
		if r.code != 2 || r.stdout != "" {
			t.Errorf("%q: exit %d, stdout %q; want 2 and nothing", c.args, r.code, r.stdout)
		}
		wantOneLine(t, "stderr", r.stderr, "paymentsd test: "+c.want)
	}
}

func TestTestHelp(t *testing.T) {
	r := runT(t, "", "test", "-h")
	if r.code != 0 {
		t.Fatalf("exit %d, stderr %q", r.code, r.stderr)
	}
	wantContains(t, "help", r.stdout,
		"Usage: paymentsd test [-v] [-run REGEXP] FILE.txtar...",
		"-run REGEXP",
		"  platform create NAME [-env sandbox|production] [-require-timestamp]\n",
		"  cmpjson FILE\n")
}
