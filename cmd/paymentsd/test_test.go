package main

import "testing"

// paymentsd test -v shows the script's environment, $DB among it: a PostgreSQL URL there,
// or anywhere in the log, shows no password.
func TestScriptLogRedactsPassword(t *testing.T) {
	for _, tt := range []struct{ logged, want string }{
		{"DB=postgres://payments:SECRET@db.internal:5432/payments?sslmode=require",
			"DB=postgres://payments:xxxxx@db.internal:5432/payments?sslmode=require"},
		{"DB=postgresql://payments@db/payments?password=SECRET&search_path=s1",
			"DB=postgresql://payments@db/payments?password=xxxxx&search_path=s1"},
		{"> exec paymentsd keys status -db 'postgres://u:SECRET@127.0.0.1:5432/p' now",
			"> exec paymentsd keys status -db 'postgres://u:xxxxx@127.0.0.1:5432/p' now"},
		{"DB=postgres://postgres@127.0.0.1:30738/payments?sslmode=disable",
			"DB=postgres://postgres@127.0.0.1:30738/payments?sslmode=disable"},
		{"DB=payments.db", "DB=payments.db"},
	} {
		var st scriptT
		st.Log(tt.logged)
		if len(st.entries) != 1 || st.entries[0] != tt.want {
			t.Errorf("Log(%q) recorded %q, want %q", tt.logged, st.entries, tt.want)
		}
	}
}
