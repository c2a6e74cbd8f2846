package webhook_test

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/webhook"
)

func TestParseSchedule(t *testing.T) {
	const h, m, s, d = time.Hour, time.Minute, time.Second, 24 * time.Hour
	for _, tc := range []struct {
		text string
		want webhook.Schedule
	}{
		{"5s", webhook.Schedule{5 * s}},
		{"5s,5m,30m,2h", webhook.Schedule{5 * s, 5 * m, 30 * m, 2 * h}},
		{"5s,5m,30m,2h,5h,10h,14h,20h,24h", webhook.DefaultSchedule},
		{" 5s , 5m,\t30m ", webhook.Schedule{5 * s, 5 * m, 30 * m}},
		{"1d,2d,10d", webhook.Schedule{d, 2 * d, 10 * d}},
		{"1h30m,90m,1.5h", webhook.Schedule{90 * m, 90 * m, 90 * m}},
		{"500ms,1500us,1µs,1μs,1ns", webhook.Schedule{500 * time.Millisecond, 1500 * time.Microsecond, time.Microsecond, time.Microsecond, 1}},
		{"+5s", webhook.Schedule{5 * s}},
		{"106751d", webhook.Schedule{106751 * d}},
		{strings.Repeat("1s,", webhook.MaxScheduleLength-1) + "1s", slices.Repeat(webhook.Schedule{s}, webhook.MaxScheduleLength)},
	} {
		if tc.want == nil {
			continue
		}
		got, err := webhook.ParseSchedule(tc.text)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("ParseSchedule(%q) = %v, %v; want %v", tc.text, got, err, tc.want)
		}
	}
}

func TestParseScheduleErrors(t *testing.T) {
	for _, tc := range []struct {
		text, want string
	}{
		{"", "invalid retry schedule: empty"},
		{" \t", "invalid retry schedule: empty"},
		{"5s,", `invalid retry schedule: entry 2 is empty`},
		{"5s,,5m", `invalid retry schedule: entry 2 is empty`},
		{",5s", `invalid retry schedule: entry 1 is empty`},
		{"5s,5m,0s", `invalid retry schedule: entry 3 "0s" is not more than 0`},
		{"0", `invalid retry schedule: entry 1 "0" is not more than 0`},
		{"0d", `invalid retry schedule: entry 1 "0d" is not more than 0`},
		{"5s,-5m", `invalid retry schedule: entry 2 "-5m" is not more than 0`},
		{"5", `invalid retry schedule: entry 1 "5" is not a delay such as 5s, 5m, 2h or 1d`},
		{"5s;5m", `invalid retry schedule: entry 1 "5s;5m" is not a delay such as 5s, 5m, 2h or 1d`},
		{"5s 5m", `invalid retry schedule: entry 1 "5s 5m" is not a delay such as 5s, 5m, 2h or 1d`},
		{"1w", `invalid retry schedule: entry 1 "1w" is not a delay such as 5s, 5m, 2h or 1d`},
		{"1h,1d2h", `invalid retry schedule: entry 2 "1d2h" is not a delay such as 5s, 5m, 2h or 1d`},
		{"9999999h", `invalid retry schedule: entry 1 "9999999h" is not a delay such as 5s, 5m, 2h or 1d`},
		{"1.5d", `invalid retry schedule: entry 1 "1.5d" is not a whole number of days such as 1d`},
		{"d", `invalid retry schedule: entry 1 "d" is not a whole number of days such as 1d`},
		{"+1d", `invalid retry schedule: entry 1 "+1d" is not a whole number of days such as 1d`},
		{"-1d", `invalid retry schedule: entry 1 "-1d" is not a whole number of days such as 1d`},
		{"1 d", `invalid retry schedule: entry 1 "1 d" is not a whole number of days such as 1d`},
		{"1D", `invalid retry schedule: entry 1 "1D" is not a delay such as 5s, 5m, 2h or 1d`},
		{"106752d", `invalid retry schedule: entry 1 "106752d" is too long`},
		{"99999999999999999999d", `invalid retry schedule: entry 1 "99999999999999999999d" is too long`},
		{strings.Repeat("1s,", webhook.MaxScheduleLength) + "1s", "invalid retry schedule: 51 delays, more than 50"},
	} {
		s, err := webhook.ParseSchedule(tc.text)
		if err == nil || err.Error() != tc.want || !errors.Is(err, webhook.ErrInvalidSchedule) || s != nil {
			t.Errorf("ParseSchedule(%q) = %v, %v; want %q", tc.text, s, err, tc.want)
		}
	}
}

func TestScheduleString(t *testing.T) {
	const h, m, s = time.Hour, time.Minute, time.Second
	for _, tc := range []struct {
		s    webhook.Schedule
		want string
	}{
		{webhook.DefaultSchedule, "5s,5m,30m,2h,5h,10h,14h,20h,24h"},
		{webhook.Schedule{90 * m, 48 * h, h + s, 61 * s, h + m + s}, "1h30m,48h,1h1s,1m1s,1h1m1s"},
		{webhook.Schedule{1500 * time.Millisecond, 500 * time.Millisecond, h + 500*time.Millisecond, 2 * time.Microsecond, 7}, "1.5s,500ms,1h500ms,2µs,7ns"},
		{webhook.Schedule{m + 30*s + 250*time.Millisecond}, "1m30.25s"},
		{webhook.Schedule{math.MaxInt64}, "2562047h47m16.854775807s"},
		{webhook.Schedule{0, -90 * m, math.MinInt64}, "0s,-1h30m,-2562047h47m16.854775808s"},
		{webhook.Schedule{}, ""},
		{nil, ""},
	} {
		if got := tc.s.String(); got != tc.want {
			t.Errorf("%#v.String() = %q, want %q", []time.Duration(tc.s), got, tc.want)
		}
	}
}

func TestScheduleRoundTrip(t *testing.T) {
	for _, s := range []webhook.Schedule{
		webhook.DefaultSchedule,
		{90 * time.Minute, 48 * time.Hour, time.Hour + time.Second},
		{1500 * time.Millisecond, time.Hour + 500*time.Millisecond, 2 * time.Microsecond, 1},
		{106751 * 24 * time.Hour, math.MaxInt64},
		slices.Repeat(webhook.Schedule{time.Second}, webhook.MaxScheduleLength),
	} {
		got, err := webhook.ParseSchedule(s.String())
		if err != nil || !slices.Equal(got, s) {
			t.Errorf("ParseSchedule(%q) = %v, %v; want %v", s.String(), got, err, s)
		}
	}
	for _, text := range []string{"1d", " 5s , 90m ", "1.5h,+2s"} {
		s, err := webhook.ParseSchedule(text)
		if err != nil {
			t.Fatal(err)
		}
		again, err := webhook.ParseSchedule(s.String())
		if err != nil || !slices.Equal(again, s) {
			t.Errorf("ParseSchedule(%q).String() = %q, which reads as %v, %v", text, s.String(), again, err)
		}
	}
}

// fixed returns an rnd that always returns r.
func fixed(r float64) func() float64 { return func() float64 { return r } }

func TestScheduleDelay(t *testing.T) {
	s := webhook.Schedule{10 * time.Second, time.Minute, time.Hour}
	for _, tc := range []struct {
		name       string
		failed     int
		retryAfter time.Duration
		rnd        func() float64
		want       time.Duration
		ok         bool
	}{
		{"no failure yet", 0, 0, fixed(0.5), 0, true},
		{"negative failures", -3, time.Hour, fixed(0.5), 0, true},
		{"first failure, no jitter", 1, 0, fixed(0.5), 10 * time.Second, true},
		{"first failure, least", 1, 0, fixed(0), 8 * time.Second, true},
		{"first failure, near most", 1, 0, fixed(0.999999), 11999996 * time.Microsecond, true},
		{"second failure, least", 2, 0, fixed(0), 48 * time.Second, true},
		{"third failure, a quarter", 3, 0, fixed(0.25), 54 * time.Minute, true},
		{"rnd below 0 clamped", 3, 0, fixed(-1), 48 * time.Minute, true},
		{"rnd NaN clamped", 3, 0, fixed(math.NaN()), 48 * time.Minute, true},
		{"rnd above 1 clamped", 3, 0, fixed(7), 72 * time.Minute, true},
		{"Retry-After within", 2, 90 * time.Second, fixed(0), 90 * time.Second, true},
		{"Retry-After the step", 2, time.Minute, fixed(0), time.Minute, true},
		{"Retry-After twice the step", 2, 2 * time.Minute, fixed(0), 2 * time.Minute, true},
		{"Retry-After below the step", 2, time.Second, fixed(0), time.Minute, true},
		{"Retry-After above twice", 2, time.Hour, fixed(0), 2 * time.Minute, true},
		{"Retry-After not jittered", 3, 70 * time.Minute, fixed(0.999), 70 * time.Minute, true},
		{"negative Retry-After ignored", 1, -time.Hour, fixed(0), 8 * time.Second, true},
		{"last step", 3, 0, fixed(0.5), time.Hour, true},
		{"exhausted", 4, 0, fixed(0.5), 0, false},
		{"exhausted with Retry-After", 4, time.Minute, fixed(0.5), 0, false},
		{"long exhausted", math.MaxInt, 0, fixed(0.5), 0, false},
	} {
		got, ok := s.Delay(tc.failed, tc.retryAfter, tc.rnd)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: Delay(%d, %v) = %v, %v; want %v, %v", tc.name, tc.failed, tc.retryAfter, got, ok, tc.want, tc.ok)
		}
	}
}

func TestScheduleDelayEdges(t *testing.T) {
	for _, tc := range []struct {
		name       string
		s          webhook.Schedule
		retryAfter time.Duration
		rnd        func() float64
		want       time.Duration
	}{
		{"the longest step, most jitter", webhook.Schedule{math.MaxInt64}, 0, fixed(1), math.MaxInt64},
		{"twice the longest step", webhook.Schedule{math.MaxInt64/2 + 1}, math.MaxInt64, fixed(0), math.MaxInt64},
		{"a zero step", webhook.Schedule{0}, time.Hour, fixed(1), 0},
		{"a negative step", webhook.Schedule{-time.Hour}, 0, fixed(1), 0},
		{"a nanosecond", webhook.Schedule{1}, 0, fixed(0), 1},
		{"empty", webhook.Schedule{}, 0, fixed(0), -1},
	} {
		got, ok := tc.s.Delay(1, tc.retryAfter, tc.rnd)
		if tc.want < 0 {
			if ok {
				t.Errorf("%s: Delay(1) = %v, true; want false", tc.name, got)
			}
			continue
		}
		if got != tc.want || !ok {
			t.Errorf("%s: Delay(1) = %v, %v; want %v", tc.name, got, ok, tc.want)
		}
	}
	// The least jitter of the longest step: four fifths of it, to float64's precision.
	got, _ := webhook.Schedule{math.MaxInt64}.Delay(1, 0, fixed(0))
	if want := math.MaxInt64 / 5 * 4; got < time.Duration(want-1024) || got > time.Duration(want+1024) {
		t.Errorf("the longest step, least jitter: Delay(1) = %v, want about %v", got, time.Duration(want))
	}
}

// With the default rnd every delay of DefaultSchedule is within ±20% of its step, and
// the delays are not all the same.
func TestScheduleDelayJitter(t *testing.T) {
	for i, step := range webhook.DefaultSchedule {
		lo, hi := step*8/10, step*12/10
		seen := map[time.Duration]bool{}
		for range 1000 {
			got, ok := webhook.DefaultSchedule.Delay(i+1, 0, nil)
			if !ok || got < lo || got >= hi {
				t.Fatalf("Delay(%d) = %v, %v; want within [%v, %v)", i+1, got, ok, lo, hi)
			}
			seen[got] = true
		}
		if len(seen) < 100 {
			t.Errorf("Delay(%d) took %d values in 1,000 draws", i+1, len(seen))
		}
	}
	if _, ok := webhook.DefaultSchedule.Delay(len(webhook.DefaultSchedule)+1, 0, nil); ok {
		t.Error("DefaultSchedule is not exhausted after its ten attempts")
	}
}
