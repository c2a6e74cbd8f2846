package payments

import (
	"bytes"
	_ "embed"
	"io/fs"
)

// The OpenAPI 3.1 document of the HTTP API, as committed in openapi.json. It is generated
// by package httpserver's tests (go test ./httpserver -run TestOpenAPI -update) from the
// route table, the request schemas in schema/ and the response types of this package,
// with examples answered by the real handler; the same test fails while the file is stale.

//go:embed openapi.json
var openAPIDocument []byte

// OpenAPI returns the OpenAPI 3.1 document of the HTTP API: the bytes GET /openapi.json
// answers and paymentsd openapi prints. Each call returns a copy of its own.
func OpenAPI() []byte { return bytes.Clone(openAPIDocument) }

// RequestSchemas returns the JSON Schema files every request is validated against (the
// files of schema/, defs.json among them), for generators of documentation.
func RequestSchemas() fs.FS {
	sub, err := fs.Sub(schemaFiles, "schema")
	if err != nil {
		panic(err) // a constant directory of the embedded files
	}
	return sub
}
