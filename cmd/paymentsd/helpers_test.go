package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Helpers of the Go tests that run paymentsd in this process: those of Go behaviour the
// scripts cannot show (a key rotation under load, bench's requests). The command line's
// behaviour is testdata/script.

// result is what one run of the program left behind.
type result struct {
	code           int
	stdout, stderr string
}

// run runs paymentsd with args and stdin.
func runT(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main(args, strings.NewReader(stdin), &stdout, &stderr)
	return result{code: code, stdout: stdout.String(), stderr: stderr.String()}
}

// wantOneLine fails unless s is exactly one newline-terminated line containing want.
func wantOneLine(t *testing.T, what, s, want string) {
	t.Helper()
	if strings.Count(s, "\n") != 1 || !strings.HasSuffix(s, "\n") {
		t.Errorf("%s = %q, want one line", what, s)
	}
	if !strings.Contains(s, want) {
		t.Errorf("%s = %q, want it to contain %q", what, s, want)
	}
}

// decodeLine decodes stdout, which must be one line of compact JSON, into v, refusing
// unknown fields.
func decodeLine(t *testing.T, stdout string, v any) {
	t.Helper()
	wantOneLine(t, "stdout", stdout, "{")
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("stdout %q: %v", stdout, err)
	}
}

// withoutKeyNote returns stderr without the line a command writes when it creates the
// key file of the new database db, and fails unless that line is there.
func withoutKeyNote(t *testing.T, stderr, db string) string {
	t.Helper()
	prefix := "paymentsd: created the data key file " + db + ".key (key id "
	line, rest, _ := strings.Cut(stderr, "\n")
	if !strings.HasPrefix(line, prefix) || !strings.Contains(line, "$PAYMENTS_DATA_KEY or -data-key-file") {
		t.Errorf("stderr %q: want first the note that %s.key was created", stderr, db)
		return stderr
	}
	return rest
}

// tempDB returns the path of a database file that does not exist yet.
func tempDB(t *testing.T) string {
	return filepath.Join(t.TempDir(), "payments.db")
}

// logLines decodes the JSON log lines written so far.
func logLines(t *testing.T, log string) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(log), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("log line %q: %v", l, err)
		}
		lines = append(lines, m)
	}
	return lines
}

// serve starts paymentsd serve with args; stop cancels it and returns its exit status.
func serve(t *testing.T, args ...string) (addr string, stderr *syncBuffer, stop func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	stderr = &syncBuffer{}
	var stdout syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, append([]string{"serve"}, args...), strings.NewReader(""), &stdout, stderr)
	}()
	stop = func() int {
		cancel()
		select {
		case code := <-done:
			if stdout.String() != "" {
				t.Errorf("serve wrote %q on stdout", stdout.String())
			}
			return code
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not stop")
			return -1
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case code := <-done:
			t.Fatalf("serve exited with %d: %s", code, stderr)
		default:
		}
		for _, l := range logLines(t, stderr.String()) {
			if l["msg"] == "listening" {
				return l["addr"].(string), stderr, stop
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	t.Fatalf("serve never logged listening: %s", stderr)
	return
}

// generateKey runs keys generate into dir and returns the file and the key's id.
func generateKey(t *testing.T, dir, name string) (file, id string) {
	t.Helper()
	file = filepath.Join(dir, name)
	r := runT(t, "", "keys", "generate", "-out", file)
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("keys generate: %+v", r)
	}
	var out struct {
		KeyID   string `json:"key_id"`
		KeyFile string `json:"key_file"`
	}
	decodeLine(t, r.stdout, &out)
	if out.KeyFile != file || len(out.KeyID) != 16 {
		t.Fatalf("keys generate printed %+v", out)
	}
	return file, out.KeyID
}
