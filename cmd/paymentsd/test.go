package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/command"
	"github.com/platform-payments/payments/scenario"
)

var testCommand = &command.Command{
	Name:    "test",
	Summary: "Run scenario scripts (.txtar) against a fresh server each, and report what failed.",
	Usage:   "[-v] [-run REGEXP] FILE.txtar...",
	Details: `Each script gets its own new database and server, as under go test with package
scenario, and the same commands. A failing script is reported with the line that failed,
what it expected, what came back and the log of the part of the script that failed.
Exit status 0 when every script passed, 1 when one failed, 2 for bad flags or arguments
(no file given, a file that is missing or not .txtar, a -run that matches none). With -v,
a PostgreSQL URL in the log ($DB among the script's environment) shows no password.

Script commands, besides testscript's own (env, exec, stdout, stderr, exists, cmp, ...),
described in docs/scenarios.md:
` + "  " + strings.Join(scenario.Usages(), "\n  "),
	Run: runTest,
}

// phaseLines is how many lines of the failing phase's log a report shows without -v.
const phaseLines = 30

func runTest(ctx context.Context, x *command.Invocation, args []string) error {
	fs := x.FlagSet()
	verbose := fs.Bool("v", false, "show the whole log of every script, passing or not")
	runPattern := fs.String("run", "", "run only the scripts whose name (the file name without .txtar) matches `REGEXP`")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	var run *regexp.Regexp
	if *runPattern != "" {
		re, err := regexp.Compile(*runPattern)
		if err != nil {
			return command.Usagef("-run: %v", err)
		}
		run = re
	}
	if fs.NArg() == 0 {
		return command.Usagef("no scenario files given")
	}
	var files []string
	for _, file := range fs.Args() {
		if err := checkScript(file); err != nil {
			return err
		}
		if run == nil || run.MatchString(scriptName(file)) {
			files = append(files, file)
		}
	}
	if len(files) == 0 {
		return command.Usagef("no scenario file matches -run %q", *runPattern)
	}

	results := runScripts(files, *verbose)
	failed := 0
	for i, file := range files {
		r := <-results[i]
		if !r.passed {
			failed++
		}
		if err := r.report(x.Stdout, file, *verbose); err != nil {
			return err
		}
	}
	if failed > 0 {
		return &plainError{msg: fmt.Sprintf("FAIL: %d of %d scenario%s failed", failed, len(files), command.Plural(len(files)))}
	}
	_, err := fmt.Fprintf(x.Stdout, "ok: %d scenario%s passed\n", len(files), command.Plural(len(files)))
	return err
}

// checkScript refuses anything but an existing .txtar file.
func checkScript(file string) error {
	if !strings.HasSuffix(file, ".txtar") {
		return command.Usagef("%s: not a .txtar file", file)
	}
	info, err := os.Stat(file) // #nosec G703 -- a scenario file the operator named on the command line
	switch {
	case errors.Is(err, os.ErrNotExist):
		return command.Usagef("%s: no such file", file)
	case err != nil:
		return command.Usagef("%v", err)
	case !info.Mode().IsRegular():
		return command.Usagef("%s: not a file", file)
	}
	return nil
}

// scriptName is a script's name for -run: its file name without .txtar.
func scriptName(file string) string {
	return strings.TrimSuffix(filepath.Base(file), ".txtar")
}

// runScripts runs each file as a script of its own, as many at a time as there are CPUs,
// and returns a channel per file that delivers its result.
func runScripts(files []string, verbose bool) []chan scriptResult {
	results := make([]chan scriptResult, len(files))
	slots := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, file := range files {
		results[i] = make(chan scriptResult, 1)
		go func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			results[i] <- runScript(file, verbose)
		}()
	}
	return results
}

// runScript runs one script with the scenario package's setup and commands.
func runScript(file string, verbose bool) scriptResult {
	p := scenario.Params("")
	p.Dir, p.Files = "", []string{file}
	top := &scriptT{verbose: verbose}
	start := time.Now()
	top.do(func() { testscript.RunT(top, p) })
	r := scriptResult{elapsed: time.Since(start)}
	if sub := top.child; sub != nil {
		r.passed, r.skipped, r.entries = !sub.failed, sub.skipped, sub.entries
	}
	r.passed = r.passed && !top.failed
	r.entries = append(top.entries, r.entries...)
	return r
}

// scriptT is testscript's T for a script run outside go test: it records the log and the
// outcome. Each T runs its function in a goroutine of its own, which FailNow and Skip
// end as the testing package's do.
type scriptT struct {
	verbose bool

	mu      sync.Mutex
	entries []string // the Log calls: the server's lines, then the script's log
	failed  bool
	skipped bool
	child   *scriptT // the T of the one script RunT runs
}

var _ testscript.T = (*scriptT)(nil)

// do runs f in a goroutine and waits for it to end, by returning, FailNow or Skip. A
// panic fails the script rather than the whole run.
func (t *scriptT) do(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				buf := make([]byte, 64<<10)
				buf = buf[:runtime.Stack(buf, false)]
				t.Log(fmt.Sprintf("panic: %v\n\n%s", v, buf))
				t.setFailed()
			}
		}()
		f()
	}()
	<-done
}

func (t *scriptT) Run(name string, f func(testscript.T)) {
	sub := &scriptT{verbose: t.verbose}
	t.mu.Lock()
	t.child = sub
	t.mu.Unlock()
	sub.do(func() { f(sub) })
}

// Log records a line of the log, every PostgreSQL URL in it without its password: the
// log shows the script's environment, $DB among it.
func (t *scriptT) Log(args ...any) {
	line := postgresURL.ReplaceAllStringFunc(strings.TrimSuffix(fmt.Sprintln(args...), "\n"), payments.RedactDSN)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entries = append(t.entries, line)
}

// postgresURL matches a PostgreSQL URL in a line of text.
var postgresURL = regexp.MustCompile(`postgres(ql)?://[^\s'"]+`)

func (t *scriptT) setFailed() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.failed = true
}

func (t *scriptT) FailNow() {
	t.setFailed()
	runtime.Goexit()
}

func (t *scriptT) Fatal(args ...any) {
	t.Log(args...)
	t.FailNow()
}

func (t *scriptT) Skip(args ...any) {
	t.Log(args...)
	t.mu.Lock()
	t.skipped = true
	t.mu.Unlock()
	runtime.Goexit()
}

func (t *scriptT) Parallel()     {} // runScripts runs scripts in parallel
func (t *scriptT) Verbose() bool { return t.verbose }

// scriptResult is the outcome of one script.
type scriptResult struct {
	passed, skipped bool
	elapsed         time.Duration
	entries         []string // what was logged: the server's lines, then the script's log
}

// serverPrefix starts the lines package scenario logs for the server.
const serverPrefix = "server: "

// split returns the script's log and the server's lines.
func (r scriptResult) split() (log string, server []string) {
	for _, e := range r.entries {
		if strings.HasPrefix(e, serverPrefix) {
			server = append(server, e)
		} else {
			log += e + "\n"
		}
	}
	return log, server
}

// report writes the result of the script in file: one line when it passed (and its log
// with verbose), a failure report when it failed.
func (r scriptResult) report(w io.Writer, file string, verbose bool) error {
	log, server := r.split()
	var b strings.Builder
	status := "PASS"
	switch {
	case !r.passed:
		status = "FAIL"
	case r.skipped:
		status = "SKIP"
	}
	fmt.Fprintf(&b, "--- %s: %s (%.2fs)\n", status, file, r.elapsed.Seconds())
	switch {
	case !r.passed:
		writeFailure(&b, file, log, verbose)
	case verbose || r.skipped:
		writeIndented(&b, "    ", log)
	}
	if len(server) > 0 && (verbose || !r.passed) {
		fmt.Fprintf(&b, "    server log:\n")
		writeIndented(&b, "      ", strings.Join(server, "\n"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeFailure explains a failed script from its log: the line that failed and why,
// then the log of the part of the script that failed (all of it with verbose).
func writeFailure(b *strings.Builder, file, log string, verbose bool) {
	before, failure, found := cutFailure(log, file)
	if !found { // no script line failed: the setup, say, or a panic
		writeIndented(b, "    ", tail(log, phaseLines, verbose))
		return
	}
	where, message, _ := strings.Cut(failure, "\n")
	lineNo, text, _ := strings.Cut(where, ": ")
	if n, err := strconv.Atoi(lineNo); err == nil && n > 0 {
		fmt.Fprintf(b, "    %s:%d: %s\n", file, n, scriptLine(file, n))
	}
	writeIndented(b, "    ", text+"\n"+message)
	title := "log:"
	if !verbose {
		before, title = failingPhase(before), "log of the failing part of the script:"
	}
	if strings.TrimSpace(before) != "" {
		fmt.Fprintf(b, "\n    %s\n", title)
		writeIndented(b, "      ", tail(before, phaseLines, verbose))
	}
	b.WriteString("\n")
}

// cutFailure splits a script log around the line testscript writes when a script line
// fails, "FAIL: FILE:LINE: MESSAGE", and returns what came before and "LINE: MESSAGE"
// with the rest of the log (the message's further lines).
func cutFailure(log, file string) (before, failure string, found bool) {
	marker := "FAIL: " + file + ":"
	i := strings.Index(log, "\n"+marker)
	if i >= 0 {
		i++
	} else if strings.HasPrefix(log, marker) {
		i = 0
	} else {
		return "", "", false
	}
	return log[:i], strings.TrimRight(log[i+len(marker):], "\n"), true
}

// failingPhase returns the log from the last phase heading (a "#" comment line) on.
func failingPhase(log string) string {
	lines := strings.SplitAfter(log, "\n")
	for i := len(lines) - 1; i >= 0; i-- {
		if strings.HasPrefix(lines[i], "#") {
			return strings.Join(lines[i:], "")
		}
	}
	return log
}

// tail returns the last n lines of text, saying how many it left out; all of them with
// all.
func tail(text string, n int, all bool) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if all || len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	cut := len(lines) - n
	return fmt.Sprintf("… %d earlier lines (-v shows them)\n%s", cut, strings.Join(lines[cut:], "\n"))
}

// scriptLine returns line n of file as written, or "" if it cannot be read.
func scriptLine(file string, n int) string {
	data, err := os.ReadFile(file) // #nosec G304 G703 -- file is a script the operator named on the command line, already run by the test command
	if err != nil {
		return ""
	}
	lines := strings.Split(string(data), "\n")
	if n > len(lines) {
		return ""
	}
	return strings.TrimRight(lines[n-1], "\r")
}

// writeIndented writes each line of text after prefix.
func writeIndented(b *strings.Builder, prefix, text string) {
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if line == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString(prefix + line + "\n")
	}
}
