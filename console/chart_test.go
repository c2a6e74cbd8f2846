package console

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/platform-payments/payments/internal/overview"
)

func TestAttemptsChart(t *testing.T) {
	now := time.Date(2026, 11, 28, 15, 20, 0, 0, time.UTC)
	status := func(n int64) *int64 { return &n }
	refused := "connection refused"
	tests := []struct {
		name     string
		attempts []overview.Attempt
		bars     []string // the bars' titles, in order
	}{
		{"None", nil, nil},
		{"OneOfEach", []overview.Attempt{
			{At: now.Add(-time.Minute), StatusCode: status(200)},
			{At: now.Add(-time.Minute), StatusCode: status(503)},
			{At: now.Add(-2 * time.Hour), Error: &refused},
		}, []string{"13:00: 1 failed with an error", "15:00: 1 succeeded", "15:00: 1 failed with a status"}},
		{"Stacked", []overview.Attempt{
			{At: now.Add(-23 * time.Hour), StatusCode: status(204)},
			{At: now.Add(-23 * time.Hour), StatusCode: status(299)},
			{At: now.Add(-23 * time.Hour), StatusCode: status(300)},
		}, []string{"16:00: 2 succeeded", "16:00: 1 failed with a status"}},
		{"OutsideTheDay", []overview.Attempt{
			{At: now.Add(-25 * time.Hour), StatusCode: status(200)},
			{At: now.Add(time.Hour), StatusCode: status(200)},
		}, nil},
	}
	title := regexp.MustCompile(`<rect [^>]*><title>([^<]*)</title></rect>`)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			svg := string(attemptsChart(tc.attempts, now))
			var bars []string
			for _, m := range title.FindAllStringSubmatch(svg, -1) {
				bars = append(bars, m[1])
			}
			if strings.Join(bars, "|") != strings.Join(tc.bars, "|") {
				t.Errorf("bars %q, want %q", bars, tc.bars)
			}
			for _, bad := range []string{"<script", "style=", "href"} {
				if strings.Contains(svg, bad) {
					t.Errorf("the chart has %q", bad)
				}
			}
		})
	}
}

func TestCursorAt(t *testing.T) {
	at := time.Date(2026, 11, 28, 15, 20, 0, 0, time.UTC)
	cursor := uuid.MustParse(overview.CursorAt(at))
	if cursor.Version() != 7 || cursor.Variant() != uuid.RFC4122 {
		t.Fatalf("cursor %s: version %d, variant %v", cursor, cursor.Version(), cursor.Variant())
	}
	for _, tc := range []struct {
		at    time.Time
		after bool
	}{{at, true}, {at.Add(time.Millisecond), true}, {at.Add(-time.Millisecond), false}, {at.Add(time.Hour), true}} {
		id, err := uuid.NewV7FromReader(zeroReader{})
		if err != nil {
			t.Fatal(err)
		}
		ms := uint64(tc.at.UnixMilli())
		for i := 0; i < 6; i++ {
			id[i] = byte(ms >> (40 - 8*i))
		}
		if got := id.String() > cursor.String(); got != tc.after {
			t.Errorf("an id of %v sorts after the cursor of %v: %v, want %v", tc.at, at, got, tc.after)
		}
	}
}

// zeroReader reads as zeros: the least random bits an id can have.
type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }
