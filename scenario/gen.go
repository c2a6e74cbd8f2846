package scenario

import (
	"os"
	"strconv"
	"strings"

	"github.com/google/uuid"
	"github.com/rogpeppe/go-internal/testscript"
)

// Small helpers for what a script cannot write by hand.

// genPrefix and genSuffix wrap the padding of a generated body.
const genPrefix, genSuffix = `{"name":"`, `"}`

// cmdGenBody: genbody FILE SIZE
func cmdGenBody(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "genbody", "")
	if len(args) != 2 || args[0] == "" {
		usage(ts, "genbody")
	}
	size, err := strconv.Atoi(args[1])
	if err != nil || size < len(genPrefix)+len(genSuffix) {
		usagef(ts, "genbody", "SIZE must be a number of bytes, at least %d, not %q",
			len(genPrefix)+len(genSuffix), args[1])
	}
	body := genPrefix + strings.Repeat("x", size-len(genPrefix)-len(genSuffix)) + genSuffix
	ts.Check(os.WriteFile(ts.MkAbs(args[0]), []byte(body), 0o600))
}

// cmdUUIDForm: uuidform VAR upper|simple|braced|urn ID
func cmdUUIDForm(ts *testscript.TestScript, neg bool, args []string) {
	noNeg(ts, neg, "uuidform", "")
	if len(args) != 3 || args[0] == "" {
		usage(ts, "uuidform")
	}
	id, err := uuid.Parse(args[2])
	if err != nil {
		usagef(ts, "uuidform", "%q is not a UUID", args[2])
	}
	s := id.String()
	switch args[1] {
	case "upper":
		s = strings.ToUpper(s)
	case "simple":
		s = strings.ReplaceAll(s, "-", "")
	case "braced":
		s = "{" + s + "}"
	case "urn":
		s = id.URN()
	default:
		usagef(ts, "uuidform", "unknown form %q", args[1])
	}
	ts.Setenv(args[0], s)
}
