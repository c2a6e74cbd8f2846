package console

import (
	"fmt"
	"html/template"
	"strings"
	"time"

	"github.com/platform-payments/payments/internal/overview"
)

// Outcomes of an attempt, as the chart stacks them (bottom up).
const (
	outcomeOK     = iota // a 2xx answer
	outcomeStatus        // another status
	outcomeError         // no answer: the error that stood for one
	outcomes
)

var outcomeNames = [outcomes]string{"succeeded", "failed with a status", "failed with an error"}
var outcomeColors = [outcomes]string{"#2e7d32", "#ef6c00", "#c62828"}

// chart geometry, in SVG units.
const (
	chartHours  = 24
	chartW      = 720
	chartH      = 200
	chartLeft   = 40
	chartBottom = 24
	chartTop    = 10
)

// attemptsChart draws the attempts of the day before now by hour and outcome, as stacked
// bars in an inline SVG: no script, no style attribute, nothing from elsewhere (it meets
// the console's Content-Security-Policy).
func attemptsChart(attempts []overview.Attempt, now time.Time) template.HTML {
	end := now.UTC().Truncate(time.Hour).Add(time.Hour)
	start := end.Add(-chartHours * time.Hour)
	var counts [chartHours][outcomes]int
	for _, a := range attempts {
		if a.At.Before(start) || !a.At.Before(end) {
			continue
		}
		h := int(a.At.Sub(start) / time.Hour)
		o := outcomeError
		switch {
		case a.OK():
			o = outcomeOK
		case a.StatusCode != nil:
			o = outcomeStatus
		}
		counts[h][o]++
	}
	peak := 1
	for _, c := range counts {
		peak = max(peak, c[0]+c[1]+c[2])
	}
	plotH := float64(chartH - chartBottom - chartTop)
	slot := float64(chartW-chartLeft) / chartHours
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-labelledby="chart-title">`,
		chartW, chartH+20, chartW, chartH+20)
	fmt.Fprintf(&b, `<title id="chart-title">Attempts by hour and outcome, %s to %s UTC (at most %d in an hour)</title>`,
		start.Format("2006-01-02 15:04"), end.Format("2006-01-02 15:04"), peak)
	base := float64(chartH - chartBottom)
	fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#888"/>`, chartLeft, base, chartW, base)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="end">%d</text>`, chartLeft-4, chartTop+8, peak)
	fmt.Fprintf(&b, `<text x="%d" y="%.1f" font-size="11" text-anchor="end">0</text>`, chartLeft-4, base)
	for h, c := range counts {
		x := float64(chartLeft) + float64(h)*slot + 2
		y := base
		for o := range outcomes {
			if c[o] == 0 {
				continue
			}
			height := plotH * float64(c[o]) / float64(peak)
			y -= height
			fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s: %d %s</title></rect>`,
				x, y, slot-4, height, outcomeColors[o], start.Add(time.Duration(h)*time.Hour).Format("15:04"), c[o], outcomeNames[o])
		}
		if h%3 == 0 {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" font-size="11">%s</text>`, x, base+14, start.Add(time.Duration(h)*time.Hour).Format("15h"))
		}
	}
	for o := range outcomes {
		x := chartLeft + o*220
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="10" height="10" fill="%s"/><text x="%d" y="%d" font-size="11">%s</text>`,
			x, chartH+6, outcomeColors[o], x+14, chartH+15, outcomeNames[o])
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) // #nosec G203 -- built above from numbers, times and constants only
}
