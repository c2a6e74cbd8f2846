package main

import (
	"context"
	"fmt"

	"github.com/platform-payments/payments/internal/command"
	"github.com/platform-payments/payments/internal/version"
)

var versionCommand = &command.Command{
	Name:    "version",
	Summary: "Print the build's module version, VCS revision and Go version (also paymentsd -version).",
	Usage:   "[-json]",
	Details: `A binary built with go build or go install inside the repository carries its commit,
its time and whether the working tree was modified; under go run or go test the module
version is (devel) and the revision unknown.`,
	Run: runVersion,
}

func runVersion(_ context.Context, x *command.Invocation, args []string) error {
	fs := x.FlagSet()
	asJSON := fs.Bool("json", false, "print the same as one line of JSON")
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if err := command.NoArgs(fs); err != nil {
		return err
	}
	info := version.Get()
	if *asJSON {
		return x.PrintJSON(info)
	}
	_, err := fmt.Fprintln(x.Stdout, program, info)
	return err
}
