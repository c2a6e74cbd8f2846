package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// webhook trigger's refusals on the command line: the service-wide types, an unknown type
// and a missing one are usage errors (exit 2), before the database is touched; a
// production platform is refused (exit 1); a sandbox platform gets its event (exit 0).
func TestWebhookTrigger(t *testing.T) {
	db := filepath.Join(t.TempDir(), "payments.db")
	cmd := func(args ...string) (int, string, string) {
		var stdout, stderr syncBuffer
		code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	platform := func(env string) string {
		code, out, errs := cmd("platform", "create", "-db", db, "-env", env, "-name", env)
		var p struct {
			ID string `json:"platform_id"`
		}
		if code != exitOK || json.Unmarshal([]byte(out), &p) != nil {
			t.Fatalf("platform create: %d %s %s", code, out, errs)
		}
		return p.ID
	}
	sandbox, production := platform("sandbox"), platform("production")
	trigger := func(args ...string) (int, string, string) {
		return cmd(append([]string{"webhook", "trigger", "-db", db}, args...)...)
	}
	for name, c := range map[string]struct {
		args []string
		code int
		says string
	}{
		"exchange_rate.updated": {[]string{"-platform", sandbox, "exchange_rate.updated"}, exitUsage, "change to the whole service"},
		"payee_rules.updated":   {[]string{"-platform", sandbox, "payee_rules.updated"}, exitUsage, "change to the whole service"},
		"unknown type":          {[]string{"-platform", sandbox, "user.deleted"}, exitUsage, `unknown event type "user.deleted"`},
		"no type":               {[]string{"-platform", sandbox}, exitUsage, "want one event TYPE"},
		"no platform":           {[]string{"user.created"}, exitUsage, "-platform"},
		"production":            {[]string{"-platform", production, "user.created"}, exitFailure, "is a production platform"},
		"sandbox":               {[]string{"-platform", sandbox, "card.deleted"}, exitOK, ""},
	} {
		t.Run(name, func(t *testing.T) {
			code, out, errs := trigger(c.args...)
			if code != c.code || !strings.Contains(errs, c.says) {
				t.Fatalf("exit %d, stdout %q, stderr %q: want %d saying %q", code, out, errs, c.code, c.says)
			}
			if c.code == exitOK && (!strings.Contains(out, `"type":"card.deleted"`) || !strings.Contains(out, `"card_id":`)) {
				t.Fatalf("stdout %q", out)
			}
		})
	}
}
