package main

import (
	"context"
	"errors"
	"flag"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// Administrative commands: each opens the database, does one thing, prints what it created
// as JSON and closes the database.

var platformCreateCommand = &command{
	name:    "platform create",
	summary: "Create a platform and print its id, signing secret and environment as JSON.",
	usage:   "[-db F] [-env sandbox|production] [-require-timestamp] -name NAME",
	details: `The secret is shown only once: keep it, it signs every platform request.
With -require-timestamp every request of the platform must carry X-Timestamp (Unix
seconds) covered by its signature and within the server's -timestamp-tolerance; the
JSON then also says "require_timestamp":true. It cannot be changed later.`,
	run: runPlatformCreate,
}

func runPlatformCreate(ctx context.Context, inv *invocation, args []string) error {
	fs := inv.flagSet()
	db := storeFlags(fs)
	env := envFlag(fs, "the environment `ENV` the platform's credentials belong to: sandbox or production")
	name := fs.String("name", "", "the platform's `NAME` (required)")
	requireTimestamp := fs.Bool("require-timestamp", false, "require a signed X-Timestamp on every request of the platform (see call -timestamp)")
	if err := inv.parse(fs, args); err != nil {
		return err
	}
	if err := db.check(); err != nil {
		return err
	}
	if *name == "" {
		return usagef("-name is required")
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	return inv.withService(ctx, db, *env, func(svc *payments.Service) error {
		creds, err := svc.CreatePlatform(ctx, *name, *env, payments.PlatformOptions{RequireTimestamp: *requireTimestamp})
		if err != nil {
			return err
		}
		return inv.printJSON(creds)
	})
}

var apikeyCreateCommand = &command{
	name:    "apikey create",
	summary: "Issue a user-API key and secret for a user and print them as JSON.",
	usage:   "[-db F] -user USER_ID",
	details: "The secret is shown only once; only its hash is stored.",
	run:     runAPIKeyCreate,
}

func runAPIKeyCreate(ctx context.Context, inv *invocation, args []string) error {
	fs := inv.flagSet()
	db := storeFlags(fs)
	user := fs.String("user", "", "the `USER_ID` of the user the key acts for (required)")
	if err := inv.parse(fs, args); err != nil {
		return err
	}
	if err := db.check(); err != nil {
		return err
	}
	if *user == "" {
		return usagef("-user is required")
	}
	userID, err := parseUserID("-user", *user)
	if err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	return inv.withService(ctx, db, "", func(svc *payments.Service) error {
		key, err := svc.CreateAPIKey(ctx, userID.String())
		if err != nil {
			return err
		}
		return inv.printJSON(key)
	})
}

var userVerifyCommand = &command{
	name:    "user verify",
	summary: "Mark a user identity-verified and print {\"user_id\", \"verified\": true}.",
	usage:   "[-db F] USER_ID",
	details: "Verifying a verified user changes nothing and succeeds.",
	run:     runUserVerify,
}

// verifiedUser is what user verify prints.
type verifiedUser struct {
	UserID   uuid.UUID `json:"user_id"`
	Verified bool      `json:"verified"`
}

func runUserVerify(ctx context.Context, inv *invocation, args []string) error {
	fs := inv.flagSet()
	db := storeFlags(fs)
	if err := inv.parse(fs, args); err != nil {
		return err
	}
	if err := db.check(); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usagef("want exactly one argument, USER_ID; got %d", fs.NArg())
	}
	userID, err := parseUserID("USER_ID", fs.Arg(0))
	if err != nil {
		return err
	}
	return inv.withService(ctx, db, "", func(svc *payments.Service) error {
		if err := svc.VerifyUser(ctx, userID.String()); err != nil {
			return err
		}
		return inv.printJSON(verifiedUser{UserID: userID, Verified: true})
	})
}

// environment is the -env flag: only sandbox and production are accepted.
type environment payments.Environment

func envFlag(fs *flag.FlagSet, usage string) *payments.Environment {
	env := payments.Sandbox
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

// noArgs refuses positional arguments after the flags.
func noArgs(fs *flag.FlagSet) error {
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q (flags go before arguments)", fs.Arg(0))
	}
	return nil
}

// parseUserID checks a user id argument, so that a typo is a usage error and never
// touches the database.
func parseUserID(what, s string) (uuid.UUID, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return uuid.Nil, usagef("%s: %q is not a user id (want a UUID)", what, s)
	}
	return id, nil
}
