package main

import (
	"regexp"
	"strings"
	"testing"
)

// A database is named in messages by its file path, or by its PostgreSQL host and name:
// never with its user, password or parameters. (db_env.txtar runs the commands.)
func TestDescribeDB(t *testing.T) {
	for _, tt := range []struct{ dsn, want string }{
		{"payments.db", "payments.db"},
		{"/var/lib/payments/payments.db", "/var/lib/payments/payments.db"},
		{"postgres://payments:hunter2@db.internal:5432/payments", "postgres://db.internal:5432/payments"},
		{"postgresql://payments:hunter2@db.internal/payments?sslmode=require", "postgresql://db.internal/payments"},
		{"postgres://payments@db.internal/payments?password=hunter2", "postgres://db.internal/payments"},
		{"postgres://payments:hunter2@db1.internal,db2.internal/payments", "postgres://db1.internal,db2.internal/payments"},
		// Not a URL Go parses: nothing of it is shown.
		{"postgres://payments:hunter%zz@db.internal/payments", "the PostgreSQL database"},
	} {
		got := describeDB(tt.dsn)
		if got != tt.want {
			t.Errorf("describeDB(%q) = %q, want %q", tt.dsn, got, tt.want)
		}
		if strings.Contains(got, "hunter") {
			t.Errorf("describeDB(%q) = %q shows the password", tt.dsn, got)
		}
	}
}

// Every command of the database resolves it alike: -db, else $PAYMENTS_DB, else
// payments.db; where it came from is said unless -db named it.
func TestResolveDB(t *testing.T) {
	defer func(g func(string) string) { getenv = g }(getenv)
	for _, tt := range []struct {
		name      string
		flag      dbFlag
		env       string
		path, why string
	}{
		{"flag", dbFlag{value: "a.db", given: true}, "b.db", "a.db", ""},
		{"empty flag", dbFlag{value: "", given: true}, "b.db", "", ""},
		{"env", dbFlag{}, "postgres://u:p@h/b", "postgres://u:p@h/b", "$PAYMENTS_DB"},
		{"default", dbFlag{}, "", "payments.db", "the default"},
	} {
		getenv = func(name string) string {
			if name == envDB {
				return tt.env
			}
			return ""
		}
		path, from := resolveDB(tt.flag)
		if path != tt.path || from != tt.why {
			t.Errorf("%s: resolveDB = %q, %q; want %q, %q", tt.name, path, from, tt.path, tt.why)
		}
	}
}

// serve -h's usage line names every flag serve takes.
func TestServeUsageNamesEveryFlag(t *testing.T) {
	r := runT(t, "", "serve", "-h")
	usage, _, _ := strings.Cut(r.stdout, "\n")
	_, flags, ok := strings.Cut(r.stdout, "\nFlags:\n")
	if !ok {
		t.Fatalf("serve -h lists no flags:\n%s", r.stdout)
	}
	flags, _, _ = strings.Cut(flags, "\nEnvironment")
	names := regexp.MustCompile(`(?m)^  (-[a-z0-9-]+)`).FindAllStringSubmatch(flags, -1)
	if len(names) == 0 {
		t.Fatalf("no flags found in serve -h:\n%s", flags)
	}
	for _, m := range names {
		if !regexp.MustCompile(`[[ ]` + regexp.QuoteMeta(m[1]) + `[ \]]`).MatchString(usage) {
			t.Errorf("serve -h's usage line leaves out %s:\n%s", m[1], usage)
		}
	}
}
