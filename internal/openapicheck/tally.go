package openapicheck

import (
	"errors"
	"net/http"
	"sync/atomic"
)

// Tally checks the answers a run of scenarios receives against one document
// (scenario.CheckResponses takes its Check), and counts them: checked, outside the
// document's operations (an unknown path, a method its path does not take, the
// operations endpoints: not the document's to describe, so passed), and refused. It
// checks the webhook deliveries the scenarios' receivers get the same way
// (scenario.CheckDeliveries takes its CheckDelivery), against the document's webhooks
// section, and counts them apart.
type Tally struct {
	c *Checker
	// lenient counts a refused answer or delivery instead of failing its script.
	lenient                    bool
	checked, outside, refused  atomic.Int64
	delivered, deliveryRefused atomic.Int64
}

// NewTally loads doc (New) for a Tally; a lenient one never fails a script, and only
// counts what it refuses.
func NewTally(doc []byte, lenient bool) (*Tally, error) {
	c, err := New(doc)
	if err != nil {
		return nil, err
	}
	return &Tally{c: c, lenient: lenient}, nil
}

// Check checks the answer resp (to resp.Request) with its body.
func (t *Tally) Check(resp *http.Response, body []byte) error {
	err := t.c.Check(resp.Request, resp.StatusCode, resp.Header, body)
	switch {
	case errors.Is(err, ErrNoOperation):
		t.outside.Add(1)
		return nil
	case err != nil:
		t.refused.Add(1)
		if t.lenient {
			return nil
		}
	}
	t.checked.Add(1)
	return err
}

// Counts returns the answers checked (refused ones among them), those outside the
// document's operations, and those refused.
func (t *Tally) Counts() (checked, outside, refused int64) {
	return t.checked.Load(), t.outside.Load(), t.refused.Load()
}

// CheckDelivery checks a webhook delivery, its request headers and body, against the
// document's webhooks section (Checker.CheckWebhook).
func (t *Tally) CheckDelivery(header http.Header, body []byte) error {
	err := t.c.CheckWebhook(header, body)
	t.delivered.Add(1)
	if err != nil {
		t.deliveryRefused.Add(1)
		if t.lenient {
			return nil
		}
	}
	return err
}

// DeliveryCounts returns the webhook deliveries checked (refused ones among them) and
// those refused.
func (t *Tally) DeliveryCounts() (checked, refused int64) {
	return t.delivered.Load(), t.deliveryRefused.Load()
}
