package console_test

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/platform-payments/payments"
)

// updateScreenshots writes the browser test's screenshots into docs/console/, which
// docs/console.md shows: go test ./console -run TestBrowser -update-screenshots.
var updateScreenshots = flag.Bool("update-screenshots", false, "write the browser test's screenshots to docs/console/")

// browserEnv makes TestBrowser fail, rather than skip, without Chromium (.ci/run sets it,
// having installed Debian's chromium).
const browserEnv = "PAYMENTS_TEST_BROWSER"

// TestBrowser uses the console as a person would, in headless Chromium: it logs in, finds
// a user by name, opens an event about the user, resends it and sees the new attempt
// appear. It takes a screenshot of each main page on the way.
func TestBrowser(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv(browserEnv) != "" {
			t.Fatalf("%s is set but there is no chromium on the PATH", browserEnv)
		}
		t.Skip("no chromium on the PATH (.ci/run installs it and sets " + browserEnv + ")")
	}
	f := newFixture(t, payments.Sandbox)
	shots := t.TempDir()
	if *updateScreenshots {
		shots = filepath.Join("..", "docs", "console")
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox, // as root in CI containers; the pages are our own, on loopback
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(1280, 900),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	// A loaded two-core machine starts a browser slowly: a generous bound, never a
	// measure of anything.
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	defer cancelTimeout()

	shot := func(name string) chromedp.Action {
		return chromedp.ActionFunc(func(ctx context.Context) error {
			var png []byte
			if err := chromedp.FullScreenshot(&png, 100).Do(ctx); err != nil { // quality 100: PNG
				return err
			}
			return os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644) // #nosec G306 -- a screenshot for the docs
		})
	}
	run := func(step string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", step, err)
		}
	}

	var title, h1 string
	run("login page",
		chromedp.Navigate(f.srv.URL+"/console/"), // no session: to the login page
		chromedp.WaitVisible(`#token`, chromedp.ByID),
		shot("login"),
		chromedp.SendKeys(`#token`, "wrong", chromedp.ByID),
		chromedp.Submit(`#token`, chromedp.ByID),
		chromedp.WaitVisible(`p.error`, chromedp.ByQuery),
		chromedp.Text(`p.error`, &title, chromedp.ByQuery),
	)
	if !strings.Contains(title, "wrong") {
		t.Errorf("a wrong token shows %q", title)
	}
	run("login",
		chromedp.SendKeys(`#token`, token, chromedp.ByID),
		chromedp.Submit(`#token`, chromedp.ByID),
		chromedp.WaitVisible(`//h1[text()="Platforms"]`),
		chromedp.Location(&title),
		shot("platforms"),
	)
	if strings.Contains(title, "token") {
		t.Errorf("after login the address still has the token: %s", title)
	}
	var email string
	run("find a user",
		chromedp.Click(`//a[text()="Acme Payroll"]`),
		chromedp.WaitVisible(`#q`, chromedp.ByID),
		shot("users"),
		chromedp.SendKeys(`#q`, "lovelace", chromedp.ByID),
		chromedp.Submit(`#q`, chromedp.ByID),
		chromedp.WaitVisible(`//a[text()="Ada Lovelace"]`),
		chromedp.Click(`//a[text()="Ada Lovelace"]`),
		chromedp.WaitVisible(`//h2[text()="Profile"]`),
		chromedp.Text(`//dt[text()="Email"]/following-sibling::dd[1]`, &email),
		shot("user"),
	)
	if email != f.email {
		t.Errorf("the user's page shows email %q, want %q", email, f.email)
	}
	var eventID string
	var before, after int
	count := func(n *int) chromedp.Action {
		return chromedp.Evaluate(`document.querySelectorAll("tr.attempt").length`, n)
	}
	run("open the event",
		chromedp.Click(`//a[text()="`+f.eventID+`"]`),
		chromedp.WaitVisible(`#event-id`, chromedp.ByID),
		chromedp.Text(`#event-id`, &eventID, chromedp.ByID),
		count(&before),
		shot("event"),
	)
	if eventID != f.eventID || before < 1 {
		t.Fatalf("the event's page shows %q with %d attempts", eventID, before)
	}
	run("resend", chromedp.Click(`#resend`, chromedp.ByID), chromedp.WaitVisible(`p.flash`, chromedp.ByQuery))
	f.waitAttempts(t, before+1)
	run("see the new attempt", chromedp.Reload(), chromedp.WaitVisible(`#event-id`, chromedp.ByID), count(&after))
	if after != before+1 {
		t.Errorf("after the resend the page shows %d attempts, want %d", after, before+1)
	}
	run("other pages",
		chromedp.Click(`//nav/a[text()="Events"]`),
		chromedp.WaitVisible(`//h1[starts-with(text(), "Events of")]`),
		shot("events"),
		chromedp.Click(`//nav/a[text()="Webhook endpoints"]`),
		chromedp.WaitVisible(`//h1[starts-with(text(), "Webhook endpoints of")]`),
		chromedp.Click(`//td/a[starts-with(text(), "http://127.0.0.1")]`),
		chromedp.WaitVisible(`svg.chart`, chromedp.ByQuery),
		shot("endpoint"),
		chromedp.Click(`//nav/a[text()="Operations"]`),
		chromedp.WaitVisible(`//h1[text()="Operations"]`),
		shot("operations"),
		chromedp.Navigate(f.srv.URL+"/console/rules?country=GB&currency=GBP"),
		chromedp.WaitVisible(`//h3[text()="Mandatory fields"]`),
		chromedp.Text(`h1`, &h1, chromedp.ByQuery),
	)
	for _, name := range []string{"login", "platforms", "users", "user", "event", "events", "endpoint", "operations"} {
		if st, err := os.Stat(filepath.Join(shots, name+".png")); err != nil || st.Size() == 0 {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
}
