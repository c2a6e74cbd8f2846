package command

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// EnvName is the environment variable that may give the flag name of a command whose
// EnvPrefix is prefix: the name upper-cased, dashes to underscores (-rate-limit:
// PAYMENTS_RATE_LIMIT).
func EnvName(prefix, name string) string {
	return prefix + strings.ToUpper(strings.ReplaceAll(name, "-", "_"))
}

// OwnEnv is a flag value that reads its variable itself, for every command that takes it
// (as paymentsd's -db reads $PAYMENTS_DB): setFromEnv leaves it alone, so that its
// flag is set only from the command line, and the help still lists the variable.
type OwnEnv interface {
	flag.Value
	ReadsOwnEnv()
}

// setFromEnv sets every flag of fs not given on the command line from its variable, when
// that is set and not empty: the flag wins over the variable. Done over the parsed set, so
// that a flag added later is covered without more code. A value the flag refuses is a
// usage error naming the variable. A flag whose value is OwnEnv is left to read its own.
func setFromEnv(fs *flag.FlagSet, prefix string) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if _, own := f.Value.(OwnEnv); own || err != nil || given[f.Name] {
			return
		}
		name := EnvName(prefix, f.Name)
		v, ok := os.LookupEnv(name)
		if !ok || v == "" {
			return
		}
		if e := fs.Set(f.Name, v); e != nil {
			err = Usagef("$%s=%q: invalid value for -%s: %v", name, v, f.Name, e)
		}
	})
	return err
}

// printEnv lists the variables of fs's flags, for the help of a command with EnvPrefix.
func printEnv(w io.Writer, fs *flag.FlagSet, prefix string) {
	fmt.Fprintf(w, "\nEnvironment (each read when its flag is not given; the flag wins):\n")
	width := 0
	fs.VisitAll(func(f *flag.Flag) { width = max(width, len(EnvName(prefix, f.Name))) })
	fs.VisitAll(func(f *flag.Flag) {
		fmt.Fprintf(w, "  %-*s  -%s\n", width, EnvName(prefix, f.Name), f.Name)
	})
}
