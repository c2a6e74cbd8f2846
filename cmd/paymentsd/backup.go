package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/command"
)

// backup is paymentsd's alone, not a command of the shared table: it writes a file where
// the operator says, which a scenario (whose database is its own) has no use for, and the
// Host interface has no way to name an output file of the script's.
var backupCommand = &command.Command{
	Name:    "backup",
	Summary: "Write a consistent copy of the database to the new FILE (mode 0600) and print {\"backup_file\", \"data_key_id\"}.",
	Usage:   "FILE",
	Details: `Safe while a server serves the database: the copy (SQLite's VACUUM INTO) reads one
snapshot, holding every write committed before it began, and does not stop writes. An
existing FILE is never replaced. The copy stays sealed under the database's data key
(data_key_id): back the key up too, kept apart from the copies; without it a copy does
not open. To restore, stop the server and put the copy in the database's place.`,
	Uses: command.UsesDatabase,
	Run:  runBackup,
}

// backupDone is what backup prints.
type backupDone struct {
	BackupFile string `json:"backup_file"`
	DataKeyID  string `json:"data_key_id"`
}

func runBackup(ctx context.Context, x *command.Invocation, args []string) error {
	fs := x.FlagSet()
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return command.Usagef("want exactly one argument, FILE; got %d", fs.NArg())
	}
	out := fs.Arg(0)
	// Opening a database that is not there would create one (and a key): a backup of
	// nothing is a mistake.
	db := hostOf(x).store.path
	if payments.IsPostgres(db) {
		return errors.New("only a SQLite database is backed up by the service; back up PostgreSQL with its own tools (pg_dump, or base backups with WAL archiving)")
	}
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("no database %s to back up", db)
	}
	return x.Host.Service(ctx, func(svc *payments.Service) error {
		if err := svc.Backup(ctx, out); err != nil {
			return err
		}
		return x.PrintJSON(backupDone{BackupFile: out, DataKeyID: svc.DataKeys().SealingID()})
	})
}
