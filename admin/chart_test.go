package admin

import (
	"encoding/xml"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var nan = math.NaN()

func TestChartTop(t *testing.T) {
	for _, tc := range []struct {
		name      string
		values    []float64
		top, step float64
	}{
		{"no data", nil, 1, 0.25},
		{"only gaps", []float64{nan, nan}, 1, 0.25},
		{"zeros", []float64{0, 0}, 1, 0.25},
		{"one", []float64{1}, 1, 0.25},
		{"seven", []float64{3, 7}, 8, 2},
		{"a round number", []float64{100}, 100, 25},
		{"just above one", []float64{101}, 150, 50},
		{"fractions", []float64{0.3}, 0.3, 0.1},
		{"gaps ignored", []float64{nan, 40, math.Inf(1)}, 40, 10},
		{"huge", []float64{9e18}, 1e19, 2.5e18},
		{"the largest float", []float64{math.MaxFloat64}, math.MaxFloat64, math.MaxFloat64 / 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			top, step := Chart{Series: []Series{{Values: tc.values}}}.top()
			if math.Abs(top-tc.top) > tc.top*1e-12 || math.Abs(step-tc.step) > tc.step*1e-12 {
				t.Fatalf("top %g step %g, want %g and %g", top, step, tc.top, tc.step)
			}
		})
	}
}

func TestCompact(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{0, "0"}, {0.25, "0.25"}, {7.5, "7.5"}, {999, "999"}, {1000, "1k"}, {2500, "2.5k"},
		{1.25e6, "1.3M"}, {1e19, "10E"}, {-2000, "-2k"},
	} {
		if got := compact(tc.v); got != tc.want {
			t.Errorf("compact(%g) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

// chartOf is a one-hour chart at one slot a minute starting 14:00 UTC.
func chartOf(title string, counts bool, series ...Series) Chart {
	return Chart{ID: "c1", Title: title, Unit: "per minute", Start: time.Date(2025, 3, 1, 14, 0, 0, 0, time.UTC),
		Step: time.Minute, Counts: counts, Series: series}
}

func TestChartHTML(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chart Chart
		want  []string // substrings of the HTML
		not   []string
		paths int // <path> elements
		dots  int // <circle> elements: points with no neighbour
	}{
		{
			name:  "no data",
			chart: chartOf("Joins", true, Series{Name: "joins"}),
			want:  []string{`role="img"`, `aria-labelledby="c1-title c1-desc"`, "Joins: no data.", "No data in this period"},
		},
		{
			name:  "only gaps",
			chart: chartOf("Joins", true, Series{Name: "joins", Values: []float64{nan, nan, nan}}),
			want:  []string{"from 14:00 to 14:03 UTC: no data in this period.", "No data in this period", "<td>–</td>"},
		},
		{
			name:  "a line",
			chart: chartOf("Joins", true, Series{Name: "joins", Values: []float64{1, 2, 3}}),
			want: []string{"from 14:00 to 14:03 UTC. joins: latest 3, highest 3, total 6.",
				`<tr><th scope="row">14:02</th><td>3</td></tr>`, ">14:00</text>", ">14:01</text>", ">14:02</text>"},
			not:   []string{"No data in this period", ": no data", "have no data"},
			paths: 1,
		},
		{
			name:  "gaps break the line",
			chart: chartOf("Joins", true, Series{Name: "joins", Values: []float64{1, 2, nan, 4, 5, nan, 7}}),
			want:  []string{"joins: latest 7, highest 7, total 19.", "2 of 7 periods have no data.", `<tr><th scope="row">14:02</th><td>–</td></tr>`},
			paths: 1, dots: 1,
		},
		{
			name:  "gauges have no total",
			chart: chartOf("Active", false, Series{Name: "active", Values: []float64{5, 3}}, Series{Name: "waiting", Values: []float64{nan, 9}}),
			want:  []string{"active: latest 3, highest 5.", "waiting: latest 9, highest 9.", `stroke-dasharray="7 4"`, `<td>5</td><td>–</td>`},
			not:   []string{"total", "periods have no data"},
			paths: 1, dots: 1,
		},
		{
			name:  "one slot",
			chart: chartOf("Joins", true, Series{Name: "joins", Values: []float64{4}}),
			want:  []string{`<circle cx="342" `, ">14:00</text>"},
			dots:  1,
		},
		{
			name:  "huge values",
			chart: chartOf("Joins", true, Series{Name: "joins", Values: []float64{9e18, 1}}),
			want:  []string{">10E</text>", ">5E</text>", "highest 9000000000000000000,"},
			not:   []string{"NaN", "Inf", "e+"},
			paths: 1,
		},
		{
			name: "hostile names are escaped",
			chart: Chart{ID: `x"><script>`, Title: `<script>alert(1)</script>`, Unit: `&<b>`, Start: time.Unix(0, 0), Step: time.Minute,
				Series: []Series{{Name: `"><img src=x onerror=alert(1)>`, Values: []float64{1, 2}}}},
			want:  []string{"&lt;script&gt;alert(1)&lt;/script&gt;", "&#34;&gt;&lt;img src=x onerror=alert(1)&gt;", "&amp;&lt;b&gt;", `id="x&#34;&gt;&lt;script&gt;-title"`},
			not:   []string{"<script>", "<img", "<b>"},
			paths: 1,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.chart.HTML()
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("no %q in\n%s", w, got)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(got, w) {
					t.Errorf("%q in\n%s", w, got)
				}
			}
			if n := strings.Count(got, "<path "); n != tc.paths {
				t.Errorf("%d paths, want %d:\n%s", n, tc.paths, got)
			}
			if n := strings.Count(got, "<circle "); n != tc.dots {
				t.Errorf("%d dots, want %d:\n%s", n, tc.dots, got)
			}
			wellFormed(t, got)
			checkPlotted(t, got)
		})
	}
}

// wellFormed fails the test unless s parses as XML: inline SVG that is
// not would be repaired differently by each browser.
func wellFormed(t *testing.T, s string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(s))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("not well-formed: %v\n%s", err, s)
		}
	}
}

var coordinate = regexp.MustCompile(`(?:[MLxy]|c[xy]|[xy][12])="?(-?[\d.]+)`)

// checkPlotted fails the test if any coordinate falls outside the SVG.
func checkPlotted(t *testing.T, s string) {
	t.Helper()
	for _, m := range coordinate.FindAllStringSubmatch(s, -1) {
		if v, err := strconv.ParseFloat(m[1], 64); err != nil || v < 0 || v > chartW {
			t.Fatalf("coordinate %q outside the chart", m[0])
		}
	}
}
