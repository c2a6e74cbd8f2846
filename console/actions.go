package console

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments"
)

// actionFunc runs an action through the library operation the API runs for it, and
// returns the page to go back to and the message it shows (a key of flashes).
type actionFunc func(c *Console, r *http.Request, platformID uuid.UUID) (back, done string, err error)

// actionRoute is an action of the console: its name (for the log), its pattern (POST,
// under a platform) and what it runs. Adding an action is adding a row here, a func and
// its form on a page.
type actionRoute struct {
	name    string
	pattern string
	run     actionFunc
}

// actions are the console's actions.
var actions = []actionRoute{
	{"resend_event", "/console/platforms/{platform}/events/{event}/resend", (*Console).resendEvent},
	{"enable_endpoint", "/console/platforms/{platform}/endpoints/{endpoint}/enable", (*Console).enableEndpoint},
	{"pause_endpoint", "/console/platforms/{platform}/endpoints/{endpoint}/pause", (*Console).pauseEndpoint},
	{"recover_endpoint", "/console/platforms/{platform}/endpoints/{endpoint}/recover", (*Console).recoverEndpoint},
	{"test_endpoint", "/console/platforms/{platform}/endpoints/{endpoint}/test", (*Console).testEndpoint},
	{"verify_user", "/console/platforms/{platform}/users/{user}/verify", (*Console).verifyUser},
	{"fail_user_verification", "/console/platforms/{platform}/users/{user}/fail-verification", (*Console).failUserVerification},
}

// runAction answers an action's POST (the session and its CSRF token checked by
// action): it runs it, logs it and redirects (303) to its page, or shows its error.
func (c *Console) runAction(a actionRoute) func(w http.ResponseWriter, r *http.Request, sessionID string) {
	return func(w http.ResponseWriter, r *http.Request, _ string) {
		_, s, _ := c.session(r)
		v := view{CSRF: s.csrf, Sandbox: c.svc.Environment() == payments.Sandbox}
		pid, err := platformID(r)
		if err == nil {
			_, err = c.platform(r, &v)
		}
		var back, done string
		if err == nil {
			back, done, err = a.run(c, r, pid)
		}
		attrs := []any{"action", a.name, "platform_id", r.PathValue("platform"), "path", r.URL.Path}
		if err != nil {
			c.log.WarnContext(r.Context(), "console action refused", append(attrs, "error", err.Error())...)
			c.fail(w, r, v, err)
			return
		}
		c.log.InfoContext(r.Context(), "console action", attrs...)
		sep := "?"
		if strings.Contains(back, "?") {
			sep = "&"
		}
		http.Redirect(w, r, back+sep+"done="+url.QueryEscape(done), http.StatusSeeOther)
	}
}

// base is the path of the platform's pages.
func base(platformID uuid.UUID) string { return "/console/platforms/" + platformID.String() }

// resendEvent delivers an event again (Resend Event): to the endpoint of the form's
// endpoint_id, or to every enabled one subscribed to its type when it is empty.
func (c *Console) resendEvent(r *http.Request, pid uuid.UUID) (string, string, error) {
	eventID := r.PathValue("event")
	var in payments.Resend
	if ep := r.PostForm.Get("endpoint_id"); ep != "" {
		in.EndpointID = &ep
	}
	if _, err := c.svc.ResendEvent(r.Context(), pid, eventID, in); err != nil {
		return "", "", err
	}
	return base(pid) + "/events/" + url.PathEscape(eventID), "resent", nil
}

// enableEndpoint enables a disabled endpoint (Enable Webhook Endpoint).
func (c *Console) enableEndpoint(r *http.Request, pid uuid.UUID) (string, string, error) {
	id := r.PathValue("endpoint")
	if _, err := c.svc.EnableWebhookEndpoint(r.Context(), pid, id); err != nil {
		return "", "", err
	}
	return base(pid) + "/endpoints/" + url.PathEscape(id), "enabled", nil
}

// pauseEndpoint disables an endpoint by hand (Disable Webhook Endpoint).
func (c *Console) pauseEndpoint(r *http.Request, pid uuid.UUID) (string, string, error) {
	id := r.PathValue("endpoint")
	if _, err := c.svc.DisableWebhookEndpoint(r.Context(), pid, id); err != nil {
		return "", "", err
	}
	return base(pid) + "/endpoints/" + url.PathEscape(id), "paused", nil
}

// recoverEndpoint queues again, to an enabled endpoint, the events of its types since the
// form's time that it did not receive with a 2xx (Recover Webhook Endpoint). The form's
// since (and until, when given) are RFC 3339, or a datetime-local input's value, in UTC.
func (c *Console) recoverEndpoint(r *http.Request, pid uuid.UUID) (string, string, error) {
	id := r.PathValue("endpoint")
	var in payments.WebhookRecovery
	var err error
	if in.Since, err = formTime(r.PostForm.Get("since")); err != nil {
		return "", "", &errPage{http.StatusUnprocessableEntity, "Recover since: " + err.Error()}
	}
	if until := r.PostForm.Get("until"); until != "" {
		t, err := formTime(until)
		if err != nil {
			return "", "", &errPage{http.StatusUnprocessableEntity, "Recover until: " + err.Error()}
		}
		in.Until = &t
	}
	got, err := c.svc.RecoverWebhookEndpoint(r.Context(), pid, id, in)
	if err != nil {
		return "", "", err
	}
	return base(pid) + "/endpoints/" + url.PathEscape(id) + "?queued=" + strconv.FormatInt(int64(got.Queued), 10), "recovered", nil
}

// formTime reads a time of a form: RFC 3339, or a datetime-local input's value (UTC).
func formTime(v string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, v, time.UTC); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: want 2026-01-02T15:04:05Z", v)
}

// testEndpoint sends an enabled endpoint, and it alone, a webhook.test event (Send Test
// Webhook), and goes to the event's page, where its attempt appears.
func (c *Console) testEndpoint(r *http.Request, pid uuid.UUID) (string, string, error) {
	ev, err := c.svc.SendTestWebhook(r.Context(), pid, r.PathValue("endpoint"))
	if err != nil {
		return "", "", err
	}
	return base(pid) + "/events/" + ev.ID.String(), "tested", nil
}

// sandboxUser returns the user of the path after checking that the service is a sandbox
// and the user the platform's: the verification actions stand for the identity checks a
// sandbox lets its testers decide.
func (c *Console) sandboxUser(r *http.Request, pid uuid.UUID) (string, error) {
	if c.svc.Environment() != payments.Sandbox {
		return "", &errPage{http.StatusForbidden, "Identity verification is decided here on sandbox platforms only."}
	}
	uid, err := uuid.Parse(r.PathValue("user"))
	if err != nil {
		return "", notFound("user")
	}
	if _, err := c.svc.GetUser(r.Context(), pid, uid.String()); err != nil {
		return "", err
	}
	return uid.String(), nil
}

// verifyUser passes a sandbox user's identity verification (VerifyUser).
func (c *Console) verifyUser(r *http.Request, pid uuid.UUID) (string, string, error) {
	uid, err := c.sandboxUser(r, pid)
	if err != nil {
		return "", "", err
	}
	if err := c.svc.VerifyUser(r.Context(), uid); err != nil {
		return "", "", err
	}
	return base(pid) + "/users/" + uid, "verified", nil
}

// failUserVerification fails a sandbox user's identity verification with the form's
// reason (FailUserVerification).
func (c *Console) failUserVerification(r *http.Request, pid uuid.UUID) (string, string, error) {
	uid, err := c.sandboxUser(r, pid)
	if err != nil {
		return "", "", err
	}
	if err := c.svc.FailUserVerification(r.Context(), uid, payments.VerificationFailure{Reason: r.PostForm.Get("reason")}); err != nil {
		return "", "", err
	}
	return base(pid) + "/users/" + uid, "failed", nil
}
