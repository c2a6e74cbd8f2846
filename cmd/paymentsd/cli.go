package main

// The command line's dispatch: Main is the whole program, callable from tests: it never
// exits the process and reads only the arguments and streams it is given, and the
// environment variables that may hold data keys (PAYMENTS_DATA_KEY, PAYMENTS_OLD_DATA_KEYS).

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strings"

	"github.com/platform-payments/payments"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // the operation failed
	exitUsage   = 2 // bad flags or arguments
)

const program = "paymentsd"

// command is one entry of the command table.
type command struct {
	name    string // one or two words, e.g. "platform create"
	summary string // one sentence, for the command list and the command's help
	usage   string // flags and arguments after the name
	// details, when set, is printed in the command's help after the summary.
	details string
	run     func(ctx context.Context, inv *invocation, args []string) error
}

// commands is the table Main dispatches on, in the order the help lists them.
var commands = []*command{
	serveCommand,
	platformCreateCommand,
	apikeyCreateCommand,
	userVerifyCommand,
	cardAddCommand,
	addressAddCommand,
	ratesSetCommand,
	rulesLoadCommand,
	keysGenerateCommand,
	keysStatusCommand,
	keysRotateCommand,
	callCommand,
	benchCommand,
	testCommand,
}

// Main runs paymentsd with args (without the program name) and returns the exit status:
// 0 on success, 1 when the operation failed, 2 for bad flags or arguments.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return run(context.Background(), args, stdin, stdout, stderr)
}

// run is Main under a context whose end stops a running server as a signal would.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintf(stderr, "%s: no command given (see '%s -h')\n", program, program)
		return exitUsage
	}
	if isHelp(args[0]) {
		return help(args[1:], stdout, stderr)
	}
	cmd, rest, err := lookup(args)
	if err != nil && len(args) > 1 && isHelp(args[1]) && len(subcommands(args[0])) > 0 {
		printOverview(stdout) // "paymentsd platform -h"
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	inv := &invocation{cmd: cmd, stdin: stdin, stdout: stdout, stderr: stderr}
	return inv.exit(cmd.run(ctx, inv, rest))
}

func isHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

// lookup finds the command args name and returns it with the arguments after its name.
func lookup(args []string) (*command, []string, error) {
	for _, c := range commands {
		words := strings.Fields(c.name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == c.name {
			return c, args[len(words):], nil
		}
	}
	if subs := subcommands(args[0]); len(subs) > 0 {
		what := "missing subcommand"
		if len(args) > 1 {
			what = fmt.Sprintf("unknown subcommand %q", args[1])
		}
		return nil, nil, fmt.Errorf("%s %s: %s: want %s (see '%s -h')",
			program, args[0], what, strings.Join(subs, " or "), program)
	}
	return nil, nil, fmt.Errorf("%s: unknown command %q (see '%s -h')", program, args[0], program)
}

// subcommands returns the second words of the commands whose first word is group.
func subcommands(group string) []string {
	var subs []string
	for _, c := range commands {
		if first, second, ok := strings.Cut(c.name, " "); ok && first == group {
			subs = append(subs, second)
		}
	}
	return subs
}

// help answers "paymentsd help [COMMAND]" and "paymentsd -h".
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		printOverview(stdout)
		return exitOK
	}
	cmd, rest, err := lookup(args)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("%s help: unexpected argument %q after %q", program, rest[0], cmd.name)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	// "help COMMAND" is "COMMAND -h": every command parses its flags before doing anything.
	inv := &invocation{cmd: cmd, stdout: stdout, stderr: stderr}
	return inv.exit(cmd.run(context.Background(), inv, []string{"-h"}))
}

func printOverview(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s COMMAND [flags] [arguments]\n\n", program)
	fmt.Fprintf(w, "%s serves the Platform Payments API and administers its SQLite database.\n\n", program)
	fmt.Fprintln(w, "Commands:")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.name, c.summary)
	}
	fmt.Fprintf(w, "\nRun '%s COMMAND -h' for a command's flags and arguments.\n", program)
}

// errHelp asks for the command's help on stdout and exit status 0.
var errHelp = errors.New("help requested")

// usageError is a bad flag or argument: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{msg: fmt.Sprintf(format, args...)}
}

// plainError is a failure whose message is printed as it is, without the command prefix.
type plainError struct{ msg string }

func (e *plainError) Error() string { return e.msg }

// invocation is one run of a command: its streams and helpers shared by all commands.
type invocation struct {
	cmd    *command
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
	flags  *flag.FlagSet // set by parse, for the help
	// logger, when set (serve), takes the notes other commands write on stderr.
	logger *slog.Logger
}

// flagSet returns an empty flag set for the command that reports errors only through
// parse, never by printing.
func (inv *invocation) flagSet() *flag.FlagSet {
	fs := flag.NewFlagSet(program+" "+inv.cmd.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// parse parses args into fs, turning -h into errHelp and flag errors into usage errors;
// the command's help, when asked for, lists fs's flags.
func (inv *invocation) parse(fs *flag.FlagSet, args []string) error {
	inv.flags = fs
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return errHelp
	}
	if err != nil {
		return &usageError{msg: err.Error()}
	}
	return nil
}

// exit reports err on the invocation's streams and returns the exit status for it.
func (inv *invocation) exit(err error) int {
	name := program + " " + inv.cmd.name
	var ue *usageError
	var pe *plainError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, errHelp):
		inv.printHelp()
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(inv.stderr, "%s: %s (see '%s -h')\n", name, oneLine(ue.msg), name)
		return exitUsage
	case errors.As(err, &pe):
		fmt.Fprintln(inv.stderr, oneLine(pe.msg))
		return exitFailure
	default:
		fmt.Fprintf(inv.stderr, "%s: %s\n", name, oneLine(failure(err)))
		return exitFailure
	}
}

// printHelp writes the command's usage line, summary and flags to stdout.
func (inv *invocation) printHelp() {
	w := inv.stdout
	c := inv.cmd
	fmt.Fprintf(w, "Usage: %s %s %s\n\n%s\n", program, c.name, c.usage, c.summary)
	if c.details != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.details))
	}
	fs := inv.flags
	n := 0
	if fs != nil {
		fs.VisitAll(func(*flag.Flag) { n++ })
	}
	if n > 0 {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
}

// failure is the one-line message of a failed operation: the library's message for its
// own errors (with the failing fields of a validation error), the error text otherwise.
func failure(err error) string {
	var pe *payments.Error
	if !errors.As(err, &pe) {
		return err.Error()
	}
	msg := pe.Message
	if len(pe.Fields) > 0 {
		msg = strings.TrimSuffix(msg, ".")
	}
	for i, f := range pe.Fields {
		sep := "; "
		if i == 0 {
			sep = ": "
		}
		loc := make([]string, len(f.Loc))
		for j, l := range f.Loc {
			loc[j] = fmt.Sprint(l)
		}
		msg += fmt.Sprintf("%s%s: %s", sep, strings.Join(loc, "."), f.Msg)
	}
	return msg
}

var newlines = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// oneLine keeps a message on one line of the terminal.
func oneLine(s string) string {
	return newlines.Replace(strings.TrimSpace(s))
}

// printJSON writes v to stdout compactly, without HTML escaping, on one line.
func (inv *invocation) printJSON(v any) error {
	enc := json.NewEncoder(inv.stdout)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
