package webhook

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Schedule is the retry schedule of a delivery: the delays before the second, third, ...
// attempt. A delivery is attempted at most len(s)+1 times.
type Schedule []time.Duration

// DefaultSchedule is the schedule of a delivery unless configured otherwise: ten attempts
// over a little more than three days (75h35m5s before jitter), the retries at 5s, 5m,
// 30m, 2h, 5h, 10h, 14h, 20h and 24h after each failure.
var DefaultSchedule = Schedule{
	5 * time.Second,
	5 * time.Minute,
	30 * time.Minute,
	2 * time.Hour,
	5 * time.Hour,
	10 * time.Hour,
	14 * time.Hour,
	20 * time.Hour,
	24 * time.Hour,
}

// MaxScheduleLength is the most delays a schedule read by ParseSchedule may have.
const MaxScheduleLength = 50

// ErrInvalidSchedule is what ParseSchedule's errors wrap, for errors.Is.
var ErrInvalidSchedule = errors.New("invalid retry schedule")

// day is the unit of ParseSchedule's "d" suffix.
const day = 24 * time.Hour

// ParseSchedule reads a schedule written as delays separated by commas, with spaces
// allowed around them: "5s,5m,30m,2h". A delay is in one of time.ParseDuration's forms
// ("90s", "1h30m", "1.5h") or a whole number of days ("1d"). Every delay is more than 0;
// there is at least one and at most MaxScheduleLength. Its errors wrap ErrInvalidSchedule
// and say which entry is wrong, counting from 1.
func ParseSchedule(text string) (Schedule, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("%w: empty", ErrInvalidSchedule)
	}
	entries := strings.Split(text, ",")
	if len(entries) > MaxScheduleLength {
		return nil, fmt.Errorf("%w: %d delays, more than %d", ErrInvalidSchedule, len(entries), MaxScheduleLength)
	}
	s := make(Schedule, 0, len(entries))
	for i, entry := range entries {
		entry = strings.TrimSpace(entry)
		d, err := parseDelay(entry)
		if err != nil {
			return nil, fmt.Errorf("%w: entry %d %s", ErrInvalidSchedule, i+1, err)
		}
		s = append(s, d)
	}
	return s, nil
}

// parseDelay reads one entry of a schedule; its error completes "entry N ".
func parseDelay(entry string) (time.Duration, error) {
	if entry == "" {
		return 0, errors.New("is empty")
	}
	var d time.Duration
	if days, ok := strings.CutSuffix(entry, "d"); ok {
		n, err := strconv.ParseUint(days, 10, 64)
		switch {
		case err != nil && errors.Is(err, strconv.ErrRange), err == nil && n > math.MaxInt64/uint64(day):
			return 0, fmt.Errorf("%q is too long", entry)
		case err != nil:
			return 0, fmt.Errorf("%q is not a whole number of days such as 1d", entry)
		}
		d = time.Duration(n) * day // #nosec G115 -- n ≤ MaxInt64/day, checked above
	} else {
		var err error
		if d, err = time.ParseDuration(entry); err != nil {
			return 0, fmt.Errorf("%q is not a delay such as 5s, 5m, 2h or 1d", entry)
		}
	}
	if d <= 0 {
		return 0, fmt.Errorf("%q is not more than 0", entry)
	}
	return d, nil
}

// String returns s in the form ParseSchedule reads, each delay without its zero units:
// "5s,5m,30m,2h,5h,10h,14h,20h,24h", "1h30m" for 90 minutes, "500ms". ParseSchedule of
// it is s again when s is a schedule ParseSchedule accepts. The empty schedule is "".
func (s Schedule) String() string {
	var b strings.Builder
	for i, d := range s {
		if i > 0 {
			b.WriteByte(',')
		}
		writeDuration(&b, d)
	}
	return b.String()
}

// writeDuration writes d as time.Duration's String does, less its zero hours, minutes
// and seconds: "5m" rather than "5m0s", "24h" rather than "24h0m0s".
func writeDuration(b *strings.Builder, d time.Duration) {
	if d == 0 {
		b.WriteString("0s")
		return
	}
	u := uint64(d) // #nosec G115 -- the bits of d; a negative d is negated below
	if d < 0 {
		b.WriteByte('-')
		u = -u // the magnitude, math.MinInt64's included
	}
	h, m := u/uint64(time.Hour), u/uint64(time.Minute)%60
	rest := time.Duration(u % uint64(time.Minute)) // what String writes in s, ms, µs or ns
	if h > 0 {
		b.WriteString(strconv.FormatUint(h, 10) + "h")
	}
	if m > 0 {
		b.WriteString(strconv.FormatUint(m, 10) + "m")
	}
	if rest > 0 {
		b.WriteString(rest.String())
	}
}

// Delay returns how long to wait before the next attempt once failed attempts have
// failed, and false when the schedule is exhausted (failed > len(s)): the delivery has
// failed for good. Before any failure (failed < 1) it is 0: the first attempt is not
// delayed.
//
// The delay is the step s[failed-1] jittered by ±20%, step × (0.8 + 0.4 × rnd()), so that
// deliveries that failed together are not retried together; rnd returns a float64 in
// [0, 1) (a value outside is clamped to [0, 1]), and nil is math/rand/v2's Float64. A
// retryAfter more than 0, the Retry-After of a receiver's 429, 502, 503 or 504, is the
// delay instead, kept within [step, 2 × step]: the receiver may slow the schedule down,
// at most twofold, and never speed it up. A step not more than 0 gives 0.
func (s Schedule) Delay(failed int, retryAfter time.Duration, rnd func() float64) (time.Duration, bool) {
	if failed < 1 {
		return 0, true
	}
	if failed > len(s) {
		return 0, false
	}
	step := s[failed-1]
	if step <= 0 {
		return 0, true
	}
	if retryAfter > 0 {
		return min(max(retryAfter, step), double(step)), true
	}
	if rnd == nil {
		rnd = rand.Float64
	}
	r := rnd()
	switch {
	case !(r >= 0): // NaN too
		r = 0
	case r > 1:
		r = 1
	}
	// The jitter is at most a fifth of step, which fits in a Duration; the sum may not.
	jitter := time.Duration(float64(step) * (0.4*r - 0.2))
	if jitter > 0 && step > math.MaxInt64-jitter {
		return math.MaxInt64, true
	}
	return step + jitter, true
}

// double returns 2 × d for d > 0, or the longest Duration when that overflows.
func double(d time.Duration) time.Duration {
	if d > math.MaxInt64/2 {
		return math.MaxInt64
	}
	return 2 * d
}
