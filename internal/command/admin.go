package command

import (
	"context"
	"errors"
	"flag"
	"fmt"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// The administration of platforms, API keys and users: each command does one thing on
// the database and prints what it created as one line of JSON.

var platformCreate = &Command{
	Name:    "platform create",
	Summary: "Create a platform and print its id, signing secret and environment as JSON.",
	Usage:   "[-env sandbox|production] [-require-timestamp] -name NAME",
	Details: `The secret is shown only once: keep it, it signs every platform request.
With -require-timestamp every request of the platform must carry X-Timestamp (Unix
seconds) covered by its signature and within the server's -timestamp-tolerance; the
JSON then also says "require_timestamp":true. It cannot be changed later.`,
	Uses: UsesDatabase,
	Sets: []Export{{"PLATFORM_ID", "platform_id"}, {"PLATFORM_SECRET", "secret"}},
	Run:  runPlatformCreate,
}

func runPlatformCreate(ctx context.Context, x *Invocation, args []string) error {
	fs := x.FlagSet()
	env := EnvFlag(fs, "", "the environment `ENV` the platform's credentials belong to: sandbox or production (default: the server's, sandbox unless it serves production)")
	name := fs.String("name", "", "the platform's `NAME` (required)")
	requireTimestamp := fs.Bool("require-timestamp", false, "require a signed X-Timestamp on every request of the platform (see call -timestamp)")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if *name == "" {
		return Usagef("-name is required")
	}
	if err := NoArgs(fs); err != nil {
		return err
	}
	return x.printResult(ctx, func(svc *payments.Service) (any, error) {
		return svc.CreatePlatform(ctx, *name, *env, payments.PlatformOptions{RequireTimestamp: *requireTimestamp})
	})
}

var apikeyCreate = &Command{
	Name:    "apikey create",
	Summary: "Issue a user-API key and secret for a user and print them as JSON.",
	Usage:   "-user USER_ID",
	Details: "The secret is shown only once; only its hash is stored.",
	Uses:    UsesDatabase,
	Sets:    []Export{{"API_KEY", "api_key"}, {"API_SECRET", "api_secret"}},
	Run:     runAPIKeyCreate,
}

func runAPIKeyCreate(ctx context.Context, x *Invocation, args []string) error {
	fs := x.FlagSet()
	user := idFlag(fs, "user", "the `USER_ID` of the user the key acts for (required)")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if err := required(user); err != nil {
		return err
	}
	if err := NoArgs(fs); err != nil {
		return err
	}
	return x.printResult(ctx, func(svc *payments.Service) (any, error) {
		return svc.CreateAPIKey(ctx, user.String())
	})
}

var userVerify = &Command{
	Name:    "user verify",
	Summary: "Mark a user identity-verified, or with -fail record why verification failed, and print the outcome as JSON.",
	Usage:   "[-fail -reason TEXT] USER_ID",
	Details: `Prints {"user_id", "verified": true}; verifying a verified user changes nothing and
succeeds. With -fail -reason TEXT it records instead that the user's verification failed,
telling the platform (event user.verification.failed, with the reason), and prints
{"user_id", "verification_failed": true, "reason"}; nothing else about the user changes: a
verified user stays verified.`,
	Uses: UsesDatabase,
	Run:  runUserVerify,
}

// verifiedUser is what user verify prints.
type verifiedUser struct {
	UserID   uuid.UUID `json:"user_id"`
	Verified bool      `json:"verified"`
}

// failedVerification is what user verify -fail prints.
type failedVerification struct {
	UserID uuid.UUID `json:"user_id"`
	Failed bool      `json:"verification_failed"`
	Reason string    `json:"reason"`
}

func runUserVerify(ctx context.Context, x *Invocation, args []string) error {
	fs := x.FlagSet()
	fail := fs.Bool("fail", false, "record that the user's verification failed (with -reason) instead of verifying")
	reason := fs.String("reason", "", "why the verification failed, a `TEXT` the platform is told (with -fail)")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	switch {
	case *fail && *reason == "":
		return Usagef("-fail requires -reason TEXT")
	case !*fail && IsSet(fs, "reason"):
		return Usagef("-reason goes with -fail")
	}
	if fs.NArg() != 1 {
		return Usagef("want exactly one argument, USER_ID; got %d", fs.NArg())
	}
	userID, err := parseID("USER_ID", "user", fs.Arg(0))
	if err != nil {
		return err
	}
	if *fail {
		return x.printResult(ctx, func(svc *payments.Service) (any, error) {
			in := payments.VerificationFailure{Reason: *reason}
			return failedVerification{UserID: userID, Failed: true, Reason: *reason},
				svc.FailUserVerification(ctx, userID.String(), in)
		})
	}
	return x.printResult(ctx, func(svc *payments.Service) (any, error) {
		return verifiedUser{UserID: userID, Verified: true}, svc.VerifyUser(ctx, userID.String())
	})
}

// environment is an -env flag: only sandbox and production are accepted.
type environment payments.Environment

// EnvFlag declares -env on fs with the default def ("" for none) and returns its value.
func EnvFlag(fs *flag.FlagSet, def payments.Environment, usage string) *payments.Environment {
	env := def
	fs.Var((*environment)(&env), "env", usage)
	return &env
}

func (e *environment) String() string { return string(*e) }

func (e *environment) Set(s string) error {
	env, err := payments.ParseEnvironment(s)
	if err != nil {
		return errors.New("want sandbox or production")
	}
	*e = environment(env)
	return nil
}

// id is a flag holding an id: a typo is a usage error and never reaches the database.
type id struct {
	flag  string // its name, "user"
	what  string // what it identifies, "user"
	value uuid.UUID
	set   bool
}

// idFlag declares -name, the id of a name (-user: a user), on fs.
func idFlag(fs *flag.FlagSet, name, usage string) *id {
	f := &id{flag: name, what: name}
	fs.Var(f, name, usage)
	return f
}

func (f *id) String() string {
	if f == nil || !f.set {
		return ""
	}
	return f.value.String()
}

func (f *id) Set(s string) error {
	v, err := uuid.Parse(s)
	if err != nil {
		return fmt.Errorf("not a %s id (want a UUID)", f.what)
	}
	f.value, f.set = v, true
	return nil
}

// required refuses the ids that were not given, naming the first.
func required(ids ...*id) error {
	for _, f := range ids {
		if !f.set {
			return Usagef("-%s is required", f.flag)
		}
	}
	return nil
}

// parseID checks the argument arg, the id of a what (a user, a payee).
func parseID(arg, what, s string) (uuid.UUID, error) {
	v, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, Usagef("%s: %q is not a %s id (want a UUID)", arg, s, what)
	}
	return v, nil
}
