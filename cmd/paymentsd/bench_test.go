package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

func TestBench(t *testing.T) {
	db := tempDB(t)
	r := runT(t, "", "platform", "create", "-db", db, "-name", "Acme")
	var creds struct {
		PlatformID string `json:"platform_id"`
		Secret     string `json:"secret"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &creds); err != nil || r.code != 0 {
		t.Fatalf("platform create: %+v %v", r, err)
	}
	addr, _, stop := serve(t, "-db", db, "-addr", "127.0.0.1:0", "-rate-limit", "0")
	defer stop()

	for _, op := range []string{"create", "get", "list"} {
		t.Run(op, func(t *testing.T) {
			r := runT(t, "", "bench", "-url", "http://"+addr, "-platform", creds.PlatformID, "-secret", creds.Secret,
				"-op", op, "-c", "4", "-d", "300ms", "-baseline", "-baseline-dir", t.TempDir())
			if r.code != 0 {
				t.Fatalf("exit status %d: %s %s", r.code, r.stdout, r.stderr)
			}
			lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
			base := regexp.MustCompile(`^bare net/http: \d+ requests/s, p50 \S+, p99 \S+, slowest \S+, \d+ requests \(200: \d+\)$`)
			ratio := regexp.MustCompile(`^` + op + `: \d+\.\d\d of the bare server's requests a second$`)
			if op == "create" {
				base = regexp.MustCompile(`^raw SQLite writer: \d+ transactions/s, p50 \S+, p99 \S+, slowest \S+, \d+ transactions$`)
				ratio = regexp.MustCompile(`^create: \d+\.\d\d of the raw writer's transactions a second$`)
			}
			want := []*regexp.Regexp{
				base,
				regexp.MustCompile(`^` + op + `: \d+ requests/s, p50 \S+, p99 \S+, slowest \S+, \d+ requests \(200: \d+\)$`),
				ratio,
			}
			if len(lines) != len(want) {
				t.Fatalf("output:\n%s", r.stdout)
			}
			for i, re := range want {
				if !re.MatchString(lines[i]) {
					t.Errorf("line %d: %q, want %s", i+1, lines[i], re)
				}
			}
		})
	}

	t.Run("ErrUsage", func(t *testing.T) {
		for _, args := range [][]string{
			{"bench"},
			{"bench", "-url", "http://" + addr, "-platform", creds.PlatformID},
			{"bench", "-url", "http://" + addr, "-platform", creds.PlatformID, "-secret", "s", "-op", "delete"},
			{"bench", "-url", "http://" + addr, "-platform", creds.PlatformID, "-secret", "s", "-c", "0"},
			{"bench", "-url", "ftp://x", "-platform", creds.PlatformID, "-secret", "s"},
		} {
			if r := runT(t, "", args...); r.code != 2 {
				t.Errorf("%q: exit status %d, want 2 (%s)", args, r.code, r.stderr)
			}
		}
	})
}
