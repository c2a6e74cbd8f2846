package payments_test

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/platform-payments/payments"
)

// The README is the front door, read in five minutes; depth lives in docs/.
const readmeMaxLines = 300

func TestREADMEIsShort(t *testing.T) {
	raw, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(raw), "\n"); n >= readmeMaxLines {
		t.Errorf("README.md has %d lines, want under %d: move the depth to a file of docs/", n, readmeMaxLines)
	}
}

// The root package is the service as its API reads (issue 31): what has a life of its own
// is a package beside it, and the root stays small enough to read whole.
const rootMaxLines = 4000

func TestRootPackageIsSmall(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		n += strings.Count(string(raw), "\n")
	}
	if n >= rootMaxLines {
		t.Errorf("the root package has %d lines of non-test Go, want under %d: move what has a life of its own to a package beside it", n, rootMaxLines)
	}
}

// TestDocLinks: every link of README.md, docs/*.md and docs/decisions/*.md is relative
// and names a file or a directory of the repository, and an anchor into a markdown file
// names one of its headings. No text outside code is a URL (which GitHub would make a
// link): the documents cite what lies outside the repository as plain text.
func TestDocLinks(t *testing.T) {
	docs, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	topics, err := filepath.Glob("docs/decisions/*.md")
	if err != nil || len(topics) == 0 {
		t.Fatalf("docs/decisions/*.md: %d files, %v", len(topics), err)
	}
	docs = append(append([]string{"README.md"}, docs...), topics...)
	anchors := map[string]map[string]bool{} // markdown file -> its headings' anchors
	anchorsOf := func(file string) (map[string]bool, error) {
		if a, ok := anchors[file]; ok {
			return a, nil
		}
		raw, err := os.ReadFile(file) // #nosec G304 -- a document of the repository
		if err != nil {
			return nil, err
		}
		anchors[file] = headingAnchors(string(raw))
		return anchors[file], nil
	}
	for _, doc := range docs {
		raw, err := os.ReadFile(doc) // #nosec G304 -- a document of the repository
		if err != nil {
			t.Fatal(err)
		}
		links, text := markdownLinks(string(raw))
		if len(links) == 0 && doc == "README.md" {
			t.Errorf("%s: no links found", doc)
		}
		if strings.Contains(text, "://") {
			for _, line := range strings.Split(text, "\n") {
				if strings.Contains(line, "://") {
					t.Errorf("%s: a URL outside code: %q", doc, strings.TrimSpace(line))
				}
			}
		}
		for _, link := range links {
			if err := checkLink(doc, link, anchorsOf); err != nil {
				t.Errorf("%s: link %q: %v", doc, link, err)
			}
		}
	}
}

// checkLink reports why link, written in doc, does not resolve.
func checkLink(doc, link string, anchorsOf func(string) (map[string]bool, error)) error {
	if strings.Contains(link, ":") || strings.HasPrefix(link, "/") {
		return fmt.Errorf("not a relative link to a file of the repository")
	}
	target, anchor, _ := strings.Cut(link, "#")
	file := doc
	if target != "" {
		file = filepath.Join(filepath.Dir(doc), filepath.FromSlash(target))
		if file == ".." || strings.HasPrefix(file, ".."+string(filepath.Separator)) {
			return fmt.Errorf("outside the repository")
		}
		if _, err := os.Stat(file); err != nil {
			return fmt.Errorf("no such file or directory: %s", file)
		}
	}
	if anchor == "" || !strings.HasSuffix(file, ".md") {
		return nil
	}
	a, err := anchorsOf(file)
	if err != nil {
		return err
	}
	if !a[anchor] {
		return fmt.Errorf("%s has no heading with the anchor #%s", file, anchor)
	}
	return nil
}

var (
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	inlineLink = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]*)(?:\s+"[^"]*")?\)`)
	refLink    = regexp.MustCompile(`(?m)^ {0,3}\[[^\]]+\]:\s*(\S+)`)
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// markdownLinks returns the targets of doc's links, and its text outside fenced code
// blocks and code spans.
func markdownLinks(doc string) (links []string, text string) {
	var prose []string
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = !fenced
			continue
		}
		if !fenced {
			prose = append(prose, codeSpan.ReplaceAllString(line, "code"))
		}
	}
	text = strings.Join(prose, "\n")
	for _, m := range inlineLink.FindAllStringSubmatch(text, -1) {
		links = append(links, m[1])
	}
	for _, m := range refLink.FindAllStringSubmatch(text, -1) {
		links = append(links, m[1])
	}
	// What remains once the links are gone is the text a reader sees.
	text = inlineLink.ReplaceAllString(text, "link")
	text = refLink.ReplaceAllString(text, "link")
	return links, text
}

// headingAnchors returns the anchors GitHub gives the headings of doc: the heading in lower
// case, without punctuation, spaces as hyphens, and "-1", "-2"... after a repeated one.
func headingAnchors(doc string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") {
			fenced = !fenced
			continue
		}
		m := heading.FindStringSubmatch(line)
		if fenced || m == nil {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(m[1]) {
			switch {
			case r == ' ':
				b.WriteRune('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.Is(unicode.M, r):
				b.WriteRune(r)
			}
		}
		slug := b.String()
		if n := seen[slug]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", slug, n)] = true
		} else {
			anchors[slug] = true
		}
		seen[slug]++
	}
	return anchors
}

// .gitignore keeps out of commits every data key file the program creates by default:
// DefaultKeyFile beside a SQLite database, and in the working directory of a PostgreSQL
// run.
func TestGitignoreCoversDefaultKeyFiles(t *testing.T) {
	raw, err := os.ReadFile(".gitignore")
	if err != nil {
		t.Fatal(err)
	}
	var patterns []string
	for _, line := range strings.Split(string(raw), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			patterns = append(patterns, line)
		}
	}
	for _, dsn := range []string{
		"payments.db",
		"postgres://payments:secret@localhost:5432/payments?sslmode=disable",
		"postgresql://localhost/ledger",
	} {
		file := filepath.Base(payments.DefaultKeyFile(dsn))
		ignored := false
		for _, p := range patterns {
			if ok, _ := path.Match(strings.TrimPrefix(p, "/"), file); ok {
				ignored = true
			}
		}
		if !ignored {
			t.Errorf("%s, the default key file of %s, is not in .gitignore", file, payments.RedactDSN(dsn))
		}
	}
}

// TestREADMEEmbeddingProgram: the README's complete program is examples/embed/main.go (from
// its package clause on), which go vet and go build compile with the repository.
func TestREADMEEmbeddingProgram(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(filepath.Join("examples", "embed", "main.go"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(readme), "\n## Embedding from Go\n")
	_, block, _ := strings.Cut(section, "\n```go\n")
	program, _, ok := strings.Cut(block, "```\n")
	if !ok {
		t.Fatal(`README.md: no program (a ` + "```go" + ` block) in "## Embedding from Go"`)
	}
	_, want, _ := strings.Cut(string(file), "\npackage main\n")
	if want = "package main\n" + want; program != want {
		t.Errorf("README.md's program is not examples/embed/main.go from its package clause on: copy the file into the README\nREADME:\n%s\nfile:\n%s", program, want)
	}
}
