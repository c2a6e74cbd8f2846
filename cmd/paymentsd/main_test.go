package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/pgtest"
)

// The command line is tested as cmd/go and Hugo test theirs: the real program, registered
// with testscript.Main, run by the scripts in testdata/script with exec, so that the tests
// read as its documentation.

// exitFileVar names the file in which the program registered for the scripts writes its
// exit status, for the exitcode command.
const exitFileVar = "PAYMENTSD_EXIT_FILE"

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"paymentsd": func() {
			code := Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
			if file := os.Getenv(exitFileVar); file != "" {
				if err := os.WriteFile(file, []byte(strconv.Itoa(code)), 0o600); err != nil {
					fmt.Fprintln(os.Stderr, err)
					code = 3
				}
			}
			os.Exit(code)
		},
	})
}

// TestScripts runs the scripts of the command line, testdata/script/*.txtar.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: filepath.Join("testdata", "script"),
		Setup: func(env *testscript.Env) error {
			env.Setenv(exitFileVar, filepath.Join(env.WorkDir, ".exitcode"))
			// $DB is the script's database: payments.db in its work directory, or a
			// PostgreSQL schema (or database, behind a pooler) of its own when
			// $PAYMENTS_TEST_POSTGRES is set; $DBKEY
			// the data key file the commands make for it by default.
			db := "payments.db"
			if pgtest.Enabled() {
				dsn, drop, err := pgtest.New(context.Background())
				if err != nil {
					return err
				}
				t := env.T()
				env.Defer(func() {
					if err := drop(); err != nil {
						t.Fatal(err)
					}
				})
				db = dsn
			}
			env.Setenv("DB", db)
			env.Setenv("DBKEY", payments.DefaultKeyFile(db))
			// The shipped payee rules, for rules load.
			rules, err := os.ReadFile(filepath.Join("..", "..", "data", "payee_rules.json"))
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(env.WorkDir, "shipped_rules.json"), rules, 0o600)
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"exitcode":   cmdExitCode,
			"jsonget":    cmdJSONGet,
			"freeport":   cmdFreePort,
			"waitserver": cmdWaitServer,
			"upper":      cmdUpper,
		},
		Condition:          pgtest.Condition,
		RequireUniqueNames: true,
	})
}

// cmdExitCode: exitcode CODE — the last paymentsd to end (an exec, or a background one
// after wait) ended with exit status CODE.
func cmdExitCode(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: exitcode CODE")
	}
	file := ts.Getenv(exitFileVar)
	got, err := os.ReadFile(file)
	ts.Check(err)
	if string(got) != args[0] {
		ts.Fatalf("exit status %s, want %s", got, args[0])
	}
	ts.Check(os.Remove(file))
}

// cmdJSONGet: jsonget VAR PATH — sets $VAR to the value at PATH (members separated by
// dots: platform_id, data.user_id) of the JSON object on the last command's stdout: a
// string as it is, anything else as JSON.
func cmdJSONGet(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: jsonget VAR PATH")
	}
	var v any
	if err := json.Unmarshal([]byte(ts.ReadFile("stdout")), &v); err != nil {
		ts.Fatalf("jsonget: stdout is not JSON: %v", err)
	}
	for _, member := range strings.Split(args[1], ".") {
		object, _ := v.(map[string]any)
		next, ok := object[member]
		if !ok {
			ts.Fatalf("jsonget: no %s in stdout", args[1])
		}
		v = next
	}
	s, ok := v.(string)
	if !ok {
		b, err := json.Marshal(v)
		ts.Check(err)
		s = string(b)
	}
	ts.Setenv(args[0], s)
}

// cmdFreePort: freeport VAR — sets $VAR to a local TCP address no one listens on, for a
// server started in the background.
func cmdFreePort(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: freeport VAR")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	ts.Check(err)
	addr := ln.Addr().String()
	ts.Check(ln.Close())
	ts.Setenv(args[0], addr)
}

// cmdWaitServer: waitserver ADDR — waits until something listens on ADDR (10 seconds at
// most); with "!", until nothing does.
func cmdWaitServer(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: waitserver ADDR")
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		conn, err := net.DialTimeout("tcp", args[0], time.Second)
		if err == nil {
			conn.Close()
		}
		if (err == nil) != neg {
			return
		}
	}
	if neg {
		ts.Fatalf("%s still accepts connections", args[0])
	}
	ts.Fatalf("nothing listens on %s", args[0])
}

// cmdUpper: upper VAR TEXT — sets $VAR to TEXT in capitals (an id as some clients write it).
func cmdUpper(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: upper VAR TEXT")
	}
	ts.Setenv(args[0], strings.ToUpper(args[1]))
}
