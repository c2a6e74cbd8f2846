// Command genadapter writes pgqueries/adapter.go (see package genadapter). Run from the
// pgqueries directory by go generate, after sqlc:
//
//	go generate ./internal/store/postgres/pgqueries
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/platform-payments/payments/internal/genadapter"
)

func main() {
	queriesDir := flag.String("queries", "../../../../queries", "the sqlc package the adapter presents (queries)")
	pgDir := flag.String("pg", ".", "the sqlc package the adapter calls (pgqueries), where adapter.go is written")
	flag.Parse()
	src, err := genadapter.Generate(*queriesDir, *pgDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if err := os.WriteFile(filepath.Join(*pgDir, genadapter.Output), src, 0o644); err != nil { // #nosec G306 -- a source file, readable like the others
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
