package dispatch

import (
	"errors"
	"flag"
	"fmt"
	"net/netip"
	"strings"
)

// Flags declares the dispatcher's flags on fs, as paymentsd serve and a scenario's
// restart take them: -webhook-retry-schedule, -webhook-timeout, -webhook-workers,
// -webhook-endpoint-concurrency, -event-retention and -webhook-allow-cidr (repeatable). It returns the function that
// gives the options once fs is parsed.
func Flags(fs *flag.FlagSet) func() (Options, error) {
	schedule := fs.String("webhook-retry-schedule", FormatSchedule(DefaultSchedule),
		"retry a failed webhook delivery after each delay of `LIST` in turn (each ±20%), then give up; e.g. 1s,1s,1s")
	timeout := fs.Duration("webhook-timeout", DefaultTimeout, "give up on a webhook delivery attempt after `DURATION`")
	workers := fs.Int("webhook-workers", DefaultWorkers, "send at most `N` webhook deliveries at once")
	perEndpoint := fs.Int("webhook-endpoint-concurrency", DefaultPerEndpoint,
		"send at most `N` webhook deliveries to any one endpoint at once, so that a slow endpoint holds no more workers")
	retention := fs.String("event-retention", "30d", "keep events and their delivery attempts for `DURATION` (30d, 12h)")
	var allow []netip.Prefix
	fs.Func("webhook-allow-cidr", "let webhook endpoints be at addresses in `CIDR` although not public, "+
		"e.g. 127.0.0.0/8 for local development (comma-separated or repeated; default: public addresses only)", func(v string) error {
		ranges, err := ParseCIDRs(v)
		allow = append(allow, ranges...)
		return err
	})
	return func() (Options, error) {
		s, err := ParseSchedule(*schedule)
		if err != nil {
			return Options{}, fmt.Errorf("-webhook-retry-schedule: %w", err)
		}
		keep, err := ParseSchedule(*retention) // one duration, days allowed
		if err != nil || len(keep) != 1 {
			return Options{}, fmt.Errorf("-event-retention %q: want one duration, such as 30d or 12h", *retention)
		}
		switch {
		case *timeout <= 0:
			return Options{}, errors.New("-webhook-timeout must be positive")
		case *workers <= 0:
			return Options{}, errors.New("-webhook-workers must be at least 1")
		case *perEndpoint <= 0:
			return Options{}, errors.New("-webhook-endpoint-concurrency must be at least 1")
		}
		return Options{Schedule: s, Timeout: *timeout, Workers: *workers, PerEndpoint: *perEndpoint,
			Retention: keep[0], Allow: allow}, nil
	}
}

// String describes the options as a log line would.
func (o Options) String() string {
	return fmt.Sprintf("schedule %s, timeout %v, %d workers, %d per endpoint, retention %v, allow %v",
		FormatSchedule(o.Schedule), o.Timeout, o.Workers, o.PerEndpoint, o.Retention, o.Allow)
}

// ParseCIDRs reads ranges separated by commas, as -webhook-allow-cidr takes them (and
// $PAYMENTS_WEBHOOK_ALLOW_CIDR), each masked to its prefix.
func ParseCIDRs(v string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, r := range strings.Split(v, ",") {
		p, err := netip.ParsePrefix(strings.TrimSpace(r))
		if err != nil {
			return out, fmt.Errorf("not a CIDR range: %q", r)
		}
		out = append(out, p.Masked())
	}
	return out, nil
}
