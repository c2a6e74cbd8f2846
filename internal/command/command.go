// Package command is the one grammar of the administration commands and of call: the
// table that both paymentsd and the scenario toolkit run. A scenario line is the paymentsd
// command without the flags that name what the scenario implies (-db, -url): the words are
// parsed by the same code, so the two cannot disagree.
//
// Each command parses its flags with a flag.FlagSet, then asks its Host for what lies
// outside the words: the database (paymentsd opens the file -db names, a scenario has its
// own), the input files (FILE, or - for standard input) and the server a call goes to.
package command

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/platform-payments/payments"
)

// Command is one entry of the table.
type Command struct {
	Name    string // one or two words, e.g. "platform create"
	Summary string // one sentence, for the command list and the command's help
	Usage   string // flags and arguments after the name, without the host's own flags
	Details string // printed in the command's help after the summary, when set
	Uses    Use    // what the command needs of its host besides its words
	// ReadsOnly: the command only reads the database, and its host opens it so
	// (payments.Options.ReadOnly): nothing created, migrated or registered.
	ReadsOnly bool
	// Sets lists the scenario variables the command sets from what it prints.
	Sets []Export
	// EnvPrefix, when set, lets every flag come from an environment variable instead:
	// PREFIX and the flag's name upper-cased, dashes to underscores (see EnvName).
	EnvPrefix string
	Run       func(ctx context.Context, x *Invocation, args []string) error
}

// Use says what a command needs of its host.
type Use int

const (
	UsesNothing  Use = iota
	UsesDatabase     // the service over a database: paymentsd's -db, a scenario's own
	UsesServer       // a running server: paymentsd's -url, a scenario's own
)

// Export is a scenario variable a command sets: Var, from the member Member of the JSON
// object the command prints (or the first present of Member's names separated by "|").
type Export struct {
	Var, Member string
}

// Table is the command table, in the order the references list it.
var Table = []*Command{
	platformCreate,
	apikeyCreate,
	userVerify,
	cardAdd,
	addressAdd,
	ratesSet,
	rulesLoad,
	keysStatus,
	webhookAdd,
	webhookList,
	webhookRemove,
	webhookGet,
	webhookUpdate,
	webhookDisable,
	webhookEnable,
	webhookRecover,
	webhookTest,
	webhookAttempts,
	webhookTrigger,
	Call,
}

// Host is what runs the table's commands: paymentsd on the database and the server its
// flags name, a scenario on its own.
type Host interface {
	// Flags declares the host's own flags of cmd on fs (paymentsd: -db and the data key
	// flags, or -url) and returns the check to run once they are parsed, or nil.
	Flags(cmd *Command, fs *flag.FlagSet) func() error
	// Usage returns the usage line of cmd, as the host's help and messages show it.
	Usage(cmd *Command) string
	// Service runs fn with the service over the host's database.
	Service(ctx context.Context, fn func(*payments.Service) error) error
	// ReadFile returns the input a command's FILE argument names; "-" is standard input.
	ReadFile(name string) ([]byte, error)
	// Getenv returns the variable a body's $NAME stands for (call -expand).
	Getenv(name string) string
	// Server returns the server call sends its request to.
	Server() (Server, error)
	// Answered takes the answer to a call, whose body call has printed on stdout.
	Answered(resp *http.Response, body []byte) error
}

// Server is where call sends its request, and what it assumes when not told.
type Server struct {
	URL    *url.URL // scheme://host:port, without a path
	Client *http.Client
	Now    func() time.Time // the server's clock, for -timestamp now
	// PlatformID and Secret are the credentials a platform call uses when not given;
	// empty when there are none.
	PlatformID, Secret string
	// PlatformIDFrom and SecretFrom name where PlatformID and Secret come from
	// ("$PAYMENTS_PLATFORM_ID"), for the message of a call without them; empty: unsaid.
	PlatformIDFrom, SecretFrom string
}

// Invocation is one run of a command.
type Invocation struct {
	Command        *Command
	Host           Host
	Stdout, Stderr io.Writer

	flags   *flag.FlagSet // set by Parse, for the help
	printed []byte        // what PrintJSON printed last
}

// ErrHelp asks for the command's help on stdout, and success.
var ErrHelp = errors.New("help requested")

// UsageError is a bad flag or argument: paymentsd exits with status 2, a scenario fails
// with or without "!".
type UsageError struct{ Msg string }

func (e *UsageError) Error() string { return e.Msg }

// Usagef returns a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Msg: fmt.Sprintf(format, args...)}
}

// FlagSet returns an empty flag set that reports errors only through Parse, never by
// printing.
func (x *Invocation) FlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet(x.Command.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return fs
}

// Parse declares the host's flags on fs, parses args, and checks the host's flags:
// -h becomes ErrHelp and a flag error a UsageError. The command's help lists fs's flags.
func (x *Invocation) Parse(fs *flag.FlagSet, args []string) error {
	check := x.Host.Flags(x.Command, fs)
	x.flags = fs
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return ErrHelp
	}
	if err != nil {
		return &UsageError{Msg: err.Error()}
	}
	if x.Command.EnvPrefix != "" {
		if err := setFromEnv(fs, x.Command.EnvPrefix); err != nil {
			return err
		}
	}
	if check != nil {
		return check()
	}
	return nil
}

// PrintHelp writes the command's usage line, summary, details and flags to stdout.
func (x *Invocation) PrintHelp() {
	w := x.Stdout
	c := x.Command
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", x.Host.Usage(c), c.Summary)
	if c.Details != "" {
		fmt.Fprintf(w, "\n%s\n", strings.TrimSpace(c.Details))
	}
	fs := x.flags
	n := 0
	if fs != nil {
		fs.VisitAll(func(*flag.Flag) { n++ })
	}
	if n > 0 {
		fmt.Fprintln(w, "\nFlags:")
		fs.SetOutput(w)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
		if c.EnvPrefix != "" {
			printEnv(w, fs, c.EnvPrefix)
		}
	}
}

// PrintJSON writes v to stdout compactly, without HTML escaping, on one line.
func (x *Invocation) PrintJSON(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	x.printed = b.Bytes()
	_, err := x.Stdout.Write(x.printed)
	return err
}

// printResult runs op on the host's service and prints what it returns.
func (x *Invocation) printResult(ctx context.Context, op func(*payments.Service) (any, error)) error {
	return x.Host.Service(ctx, func(svc *payments.Service) error {
		v, err := op(svc)
		if err != nil {
			return err
		}
		return x.PrintJSON(v)
	})
}

// Exports returns the values of the command's Sets, from the JSON it printed.
func (x *Invocation) Exports() (map[string]string, error) {
	if len(x.Command.Sets) == 0 {
		return nil, nil
	}
	var members map[string]any
	if err := json.Unmarshal(x.printed, &members); err != nil {
		return nil, fmt.Errorf("%s printed no JSON object to set variables from: %w", x.Command.Name, err)
	}
	vars := map[string]string{}
	for _, e := range x.Command.Sets {
		var v string
		ok := false
		for name := range strings.SplitSeq(e.Member, "|") {
			if v, ok = members[name].(string); ok {
				break
			}
		}
		if !ok {
			return nil, fmt.Errorf("%s printed no %q to set $%s from", x.Command.Name, e.Member, e.Var)
		}
		vars[e.Var] = v
	}
	return vars, nil
}

// Lookup finds the command args name in cmds and returns it with the arguments after its
// name; program names the caller in the error of an unknown command.
func Lookup(cmds []*Command, program string, args []string) (*Command, []string, error) {
	for _, c := range cmds {
		words := strings.Fields(c.Name)
		if len(args) >= len(words) && strings.Join(args[:len(words)], " ") == c.Name {
			return c, args[len(words):], nil
		}
	}
	if len(args) == 0 {
		return nil, nil, fmt.Errorf("%s: no command given (see '%s -h')", program, program)
	}
	if subs := Subcommands(cmds, args[0]); len(subs) > 0 {
		what := "missing subcommand"
		if len(args) > 1 {
			what = fmt.Sprintf("unknown subcommand %q", args[1])
		}
		return nil, nil, fmt.Errorf("%s %s: %s: want %s (see '%s -h')",
			program, args[0], what, strings.Join(subs, " or "), program)
	}
	return nil, nil, fmt.Errorf("%s: unknown command %q (see '%s -h')", program, args[0], program)
}

// Subcommands returns the second words of the commands of cmds whose first word is group.
func Subcommands(cmds []*Command, group string) []string {
	var subs []string
	for _, c := range cmds {
		if first, second, ok := strings.Cut(c.Name, " "); ok && first == group {
			subs = append(subs, second)
		}
	}
	return subs
}

// Failure is the one-line message of a failed operation: the library's message for its
// own errors (with the failing fields of a validation error), the error text otherwise.
func Failure(err error) string {
	var pe *payments.Error
	if !errors.As(err, &pe) {
		return OneLine(err.Error())
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
	return OneLine(msg)
}

var newlines = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ")

// OneLine keeps a message on one line of the terminal.
func OneLine(s string) string {
	return newlines.Replace(strings.TrimSpace(s))
}

// NoArgs refuses positional arguments after the flags.
func NoArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return Usagef("unexpected argument %q (flags go before arguments)", fs.Arg(0))
	}
	return nil
}

// IsSet reports whether the flag named name was given on the command line.
func IsSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// Plural returns "s" unless n is 1.
func Plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
