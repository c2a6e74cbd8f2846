package main

// The command line's dispatch: Main is the whole program, callable from tests: it never
// exits the process and reads only the arguments and streams it is given, and the
// environment variables PAYMENTS_*: the data keys (PAYMENTS_DATA_KEY,
// PAYMENTS_OLD_DATA_KEYS), serve's flags, and call's server and platform.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/platform-payments/payments/internal/command"
)

// Exit statuses.
const (
	exitOK      = 0
	exitFailure = 1 // the operation failed
	exitUsage   = 2 // bad flags or arguments
)

const program = "paymentsd"

// commands is the table Main dispatches on, in the order the help lists them: the shared
// table of package command (what a scenario runs too) with the commands of paymentsd
// alone, serve, keys generate and rotate, backup, webhook listen (after the table's
// webhook commands), bench and test.
var commands = programCommands()

func programCommands() []*command.Command {
	cmds := []*command.Command{serveCommand}
	lastWebhook := -1 // webhook listen follows the table's last webhook command
	for i, c := range command.Table {
		if strings.HasPrefix(c.Name, "webhook ") {
			lastWebhook = i
		}
	}
	for i, c := range command.Table {
		switch {
		case c.Name == "keys status":
			cmds = append(cmds, keysGenerateCommand, c, keysRotateCommand, backupCommand)
		case i == lastWebhook:
			cmds = append(cmds, c, webhookListenCommand, webhookProbeCommand)
		default:
			cmds = append(cmds, c)
		}
	}
	if lastWebhook < 0 {
		cmds = append(cmds, webhookListenCommand, webhookProbeCommand)
	}
	return append(cmds, benchCommand, testCommand, openAPICommand, versionCommand)
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
	if args[0] == "-version" || args[0] == "--version" {
		args = append([]string{"version"}, args[1:]...)
	}
	cmd, rest, err := command.Lookup(commands, program, args)
	if err != nil && len(args) > 1 && isHelp(args[1]) && len(command.Subcommands(commands, args[0])) > 0 {
		printOverview(stdout) // "paymentsd platform -h"
		return exitOK
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	x := newInvocation(cmd, stdin, stdout, stderr)
	return exit(x, cmd.Run(ctx, x, rest))
}

func newInvocation(cmd *command.Command, stdin io.Reader, stdout, stderr io.Writer) *command.Invocation {
	return &command.Invocation{
		Command: cmd,
		Host:    &host{stdin: stdin, stderr: stderr},
		Stdout:  stdout,
		Stderr:  stderr,
	}
}

func isHelp(arg string) bool {
	switch arg {
	case "help", "-h", "-help", "--help":
		return true
	}
	return false
}

// help answers "paymentsd help [COMMAND]" and "paymentsd -h".
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		printOverview(stdout)
		return exitOK
	}
	cmd, rest, err := command.Lookup(commands, program, args)
	if err == nil && len(rest) > 0 {
		err = fmt.Errorf("%s help: unexpected argument %q after %q", program, rest[0], cmd.Name)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitUsage
	}
	// "help COMMAND" is "COMMAND -h": every command parses its flags before doing anything.
	x := newInvocation(cmd, nil, stdout, stderr)
	return exit(x, cmd.Run(context.Background(), x, []string{"-h"}))
}

func printOverview(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s COMMAND [flags] [arguments]\n\n", program)
	fmt.Fprintf(w, "%s serves the Platform Payments API and administers its database,\na SQLite file (the default) or PostgreSQL (-db postgres://...).\n\n", program)
	fmt.Fprintln(w, "Commands:")
	width := 0
	for _, c := range commands {
		width = max(width, len(c.Name))
	}
	for _, c := range commands {
		fmt.Fprintf(w, "  %-*s  %s\n", width, c.Name, c.Summary)
	}
	fmt.Fprintf(w, "\nRun '%s COMMAND -h' for a command's flags and arguments.\n", program)
	fmt.Fprintf(w, "A scenario (%s test) runs the administration commands of the shared table and call, without -db and -url:\n'%s test -h' lists them.\n", program, program)
}

// plainError is a failure whose message is printed as it is, without the command prefix,
// and its note, when set, on a line of its own after it.
type plainError struct{ msg, note string }

func (e *plainError) Error() string { return e.msg }

// exit reports err on the invocation's streams and returns the exit status for it.
func exit(x *command.Invocation, err error) int {
	name := program + " " + x.Command.Name
	var ue *command.UsageError
	var pe *plainError
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, command.ErrHelp):
		x.PrintHelp()
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(x.Stderr, "%s: %s (see '%s -h')\n", name, command.OneLine(ue.Msg), name)
		return exitUsage
	case errors.As(err, &pe):
		fmt.Fprintln(x.Stderr, command.OneLine(pe.msg))
		if pe.note != "" {
			fmt.Fprintln(x.Stderr, command.OneLine(pe.note))
		}
		return exitFailure
	default:
		fmt.Fprintf(x.Stderr, "%s: %s\n", name, command.Failure(err))
		return exitFailure
	}
}

// usageLine is how the help shows a command: its host flags first.
func usageLine(c *command.Command) string {
	line := program + " " + c.Name
	switch c.Uses {
	case command.UsesDatabase:
		line += " [-db F]"
	case command.UsesServer:
		line += " [-url URL]"
	}
	if c.Usage != "" {
		line += " " + c.Usage
	}
	return strings.TrimSpace(line)
}
