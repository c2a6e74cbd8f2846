package main

import (
	"context"

	"github.com/platform-payments/payments"
	"github.com/platform-payments/payments/internal/command"
)

var openAPICommand = &command.Command{
	Name:    "openapi",
	Summary: "Print the API's OpenAPI 3.1 document: what GET /openapi.json answers and openapi.json holds.",
	Details: `The document is generated from the route table, the request schemas and the response
types, and built into the binary: no database or server is needed.`,
	Run: runOpenAPI,
}

func runOpenAPI(_ context.Context, x *command.Invocation, args []string) error {
	fs := x.FlagSet()
	if err := x.Parse(fs, args); err != nil {
		return err
	}
	if err := command.NoArgs(fs); err != nil {
		return err
	}
	_, err := x.Stdout.Write(payments.OpenAPI())
	return err
}
