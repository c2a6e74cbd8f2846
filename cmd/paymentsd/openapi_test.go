package main

import (
	"bytes"
	"os"
	"testing"
)

// TestOpenAPICommand: paymentsd openapi prints the committed openapi.json byte for byte
// (which GET /openapi.json answers: httpserver's TestOpenAPIServed).
func TestOpenAPICommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"openapi"}, nil, &stdout, &stderr); code != 0 {
		t.Fatalf("exit status %d: %s", code, stderr.String())
	}
	committed, err := os.ReadFile("../../openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(stdout.Bytes(), committed) {
		t.Error("paymentsd openapi does not print the committed openapi.json")
	}
}
