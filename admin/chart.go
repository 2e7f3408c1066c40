package admin

import (
	"html"
	"math"
	"strconv"
	"strings"
	"time"
)

// Chart is a line chart over time slots of equal length, drawn as inline
// SVG with a data table beside it: the panel shows history without
// scripts or third-party assets, and a screen reader gets the same
// numbers as the eye.
type Chart struct {
	// ID is unique on the page; the SVG's title and description are
	// named after it for aria-labelledby.
	ID    string
	Title string
	// Unit says what a value is, e.g. "per minute" or "seconds".
	Unit string
	// Start is the first slot's start, Step the length of every slot.
	Start time.Time
	Step  time.Duration
	// Counts says the values are counts per slot, so their total means
	// something and the description gives it.
	Counts bool
	Series []Series
}

// Series is one line of a chart: its name, and a value per slot, NaN
// where there is no data (the line breaks there: a minute nobody asked
// the store about is not a minute of zeros).
type Series struct {
	Name   string
	Values []float64
}

// The chart's geometry in SVG user units; the SVG scales to its box.
const (
	chartW, chartH = 640, 200
	plotL, plotR   = 60, 16 // room for the y axis' labels, and a margin
	plotT, plotB   = 32, 28 // room for the legend, and the x axis' labels
	yTicks         = 4      // gridlines above zero, at most
)

// seriesStyles tell the lines apart by dash as well as colour, so the
// chart reads without colour vision; each colour has at least 4.5:1
// contrast on white.
var seriesStyles = []struct{ colour, dash string }{
	{"#1f5fbf", ""},
	{"#a63d00", "7 4"},
	{"#2b6e2f", "2 3"},
	{"#6b3fa0", "10 3 2 3"},
}

// HTML renders the chart as a figure: the SVG (role img, with a title
// and a description summarising it) and a data table in a details
// element.
func (c Chart) HTML() string {
	var b strings.Builder
	id := html.EscapeString(c.ID)
	b.WriteString(`<figure class="chart"><figcaption>` + html.EscapeString(c.Title) + ` <span class="hint">(` + html.EscapeString(c.Unit) + `)</span></figcaption>`)
	c.svg(&b, id)
	c.table(&b)
	b.WriteString("</figure>")
	return b.String()
}

// slots is how many time slots the chart spans: its longest series.
func (c Chart) slots() int {
	n := 0
	for _, s := range c.Series {
		n = max(n, len(s.Values))
	}
	return n
}

// at is slot i's start.
func (c Chart) at(i int) time.Time { return c.Start.Add(time.Duration(i) * c.Step).UTC() }

// top is the y axis' upper end and its tick step: a round number at or
// above the highest value, so the gridlines fall on round numbers.
func (c Chart) top() (top, step float64) {
	highest := 0.0
	for _, s := range c.Series {
		for _, v := range s.Values {
			if present(v) && v > highest {
				highest = v
			}
		}
	}
	if highest <= 0 {
		return 1, 0.25
	}
	step = niceStep(highest / yTicks)
	top = math.Ceil(highest/step) * step
	if math.IsInf(top, 0) {
		// Only near the largest float64: the axis ends at the value.
		return highest, highest / yTicks
	}
	return top, step
}

// niceStep is the smallest of 1, 2, 2.5 or 5 times a power of ten at or
// above x (> 0).
func niceStep(x float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

func present(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func (c Chart) svg(b *strings.Builder, id string) {
	n := c.slots()
	top, step := c.top()
	w, h := float64(chartW-plotL-plotR), float64(chartH-plotT-plotB)
	x := func(i int) float64 {
		if n <= 1 {
			return plotL + w/2
		}
		return plotL + w*float64(i)/float64(n-1)
	}
	y := func(v float64) float64 { return plotT + h - h*math.Max(0, math.Min(v/top, 1)) }

	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ` + itoa(chartW) + " " + itoa(chartH) +
		`" width="100%" role="img" aria-labelledby="` + id + `-title ` + id + `-desc" font-family="system-ui,sans-serif" font-size="13">`)
	b.WriteString(`<title id="` + id + `-title">` + html.EscapeString(c.Title) + `</title>`)
	b.WriteString(`<desc id="` + id + `-desc">` + html.EscapeString(c.Summary()) + `</desc>`)
	// Gridlines and the y axis' labels.
	for v := 0.0; v <= top*(1+1e-9) && step > 0; v += step {
		yy := tenth(y(v))
		b.WriteString(`<line x1="` + itoa(plotL) + `" x2="` + itoa(chartW-plotR) + `" y1="` + yy + `" y2="` + yy + `" stroke="#c9cfd8"/>`)
		b.WriteString(`<text x="` + itoa(plotL-6) + `" y="` + yy + `" dy="4" text-anchor="end" fill="#333b48">` + compact(v) + `</text>`)
	}
	// The x axis' labels: the first slot, the middle and the last.
	if n > 0 {
		for _, i := range uniqueSlots(0, (n-1)/2, n-1) {
			anchor := "middle"
			switch {
			case n > 1 && i == 0:
				anchor = "start"
			case n > 1 && i == n-1:
				anchor = "end"
			}
			b.WriteString(`<text x="` + tenth(x(i)) + `" y="` + itoa(chartH-8) + `" text-anchor="` + anchor + `" fill="#333b48">` + c.at(i).Format("15:04") + `</text>`)
		}
	}
	// The legend.
	lx := plotL
	for k, s := range c.Series {
		st := seriesStyles[k%len(seriesStyles)]
		b.WriteString(`<line x1="` + itoa(lx) + `" x2="` + itoa(lx+24) + `" y1="12" y2="12" stroke="` + st.colour + `" stroke-width="3"` + dash(st.dash) + `/>`)
		b.WriteString(`<text x="` + itoa(lx+30) + `" y="16" fill="#1d2330">` + html.EscapeString(s.Name) + `</text>`)
		lx += 30 + 8*len([]rune(s.Name)) + 24
	}
	if !c.hasData() {
		b.WriteString(`<text x="` + tenth(plotL+w/2) + `" y="` + tenth(plotT+h/2) + `" text-anchor="middle" fill="#333b48">No data in this period</text>`)
	}
	// The lines, broken where a slot has no data; a point with no
	// neighbour is a dot, or it would not show.
	for k, s := range c.Series {
		st := seriesStyles[k%len(seriesStyles)]
		var d strings.Builder
		for i, v := range s.Values {
			if !present(v) {
				continue
			}
			before := i > 0 && present(s.Values[i-1])
			after := i+1 < len(s.Values) && present(s.Values[i+1])
			switch {
			case before:
				d.WriteString("L" + tenth(x(i)) + " " + tenth(y(v)))
			case after:
				d.WriteString("M" + tenth(x(i)) + " " + tenth(y(v)))
			default:
				b.WriteString(`<circle cx="` + tenth(x(i)) + `" cy="` + tenth(y(v)) + `" r="2.5" fill="` + st.colour + `"/>`)
			}
		}
		if d.Len() > 0 {
			b.WriteString(`<path d="` + d.String() + `" fill="none" stroke="` + st.colour + `" stroke-width="2"` + dash(st.dash) + `/>`)
		}
	}
	b.WriteString("</svg>")
}

// uniqueSlots drops repeats from slot indexes in order (a chart of one
// or two slots has fewer than three labels).
func uniqueSlots(slots ...int) []int {
	out := slots[:0]
	for _, i := range slots {
		if len(out) == 0 || out[len(out)-1] != i {
			out = append(out, i)
		}
	}
	return out
}

func dash(d string) string {
	if d == "" {
		return ""
	}
	return ` stroke-dasharray="` + d + `"`
}

func (c Chart) hasData() bool {
	for _, s := range c.Series {
		for _, v := range s.Values {
			if present(v) {
				return true
			}
		}
	}
	return false
}

// Summary says in a sentence what the chart shows: its span, and each
// series' latest and highest value (and total, for counts).
func (c Chart) Summary() string {
	n := c.slots()
	if n == 0 {
		return c.Title + ": no data."
	}
	var b strings.Builder
	layout := "15:04"
	if time.Duration(n)*c.Step >= 12*time.Hour {
		layout = "15:04 on 2 Jan"
	}
	b.WriteString(c.Title + ", " + c.Unit + ", from " + c.at(0).Format(layout) + " to " + c.at(n).Format(layout) + " UTC")
	if !c.hasData() {
		b.WriteString(": no data in this period.")
		return b.String()
	}
	b.WriteString(".")
	missing := 0
	for i := 0; i < n; i++ {
		gap := true
		for _, s := range c.Series {
			if i < len(s.Values) && present(s.Values[i]) {
				gap = false
			}
		}
		if gap {
			missing++
		}
	}
	for _, s := range c.Series {
		latest, highest, total, seen := math.NaN(), math.NaN(), 0.0, false
		for _, v := range s.Values {
			if !present(v) {
				continue
			}
			latest, total = v, total+v
			if !seen || v > highest {
				highest = v
			}
			seen = true
		}
		if !seen {
			b.WriteString(" " + s.Name + ": no data.")
			continue
		}
		b.WriteString(" " + s.Name + ": latest " + tenth(latest) + ", highest " + tenth(highest))
		if c.Counts {
			b.WriteString(", total " + tenth(total))
		}
		b.WriteString(".")
	}
	if missing > 0 {
		b.WriteString(" " + itoa(missing) + " of " + itoa(n) + " periods have no data.")
	}
	return b.String()
}

// table is the chart's data, a row per slot, in a details element so it
// costs the eye nothing and the keyboard one stop.
func (c Chart) table(b *strings.Builder) {
	title := html.EscapeString(c.Title)
	b.WriteString(`<details><summary>Data table: ` + title + `</summary><table><caption>` + title + ", " + html.EscapeString(c.Unit) +
		` (a dash where there is no data)</caption><thead><tr><th scope="col">Time (UTC)</th>`)
	for _, s := range c.Series {
		b.WriteString(`<th scope="col">` + html.EscapeString(s.Name) + `</th>`)
	}
	b.WriteString("</tr></thead><tbody>")
	for i := 0; i < c.slots(); i++ {
		b.WriteString(`<tr><th scope="row">` + c.at(i).Format("15:04") + "</th>")
		for _, s := range c.Series {
			v := math.NaN()
			if i < len(s.Values) {
				v = s.Values[i]
			}
			if present(v) {
				b.WriteString("<td>" + tenth(v) + "</td>")
			} else {
				b.WriteString("<td>–</td>")
			}
		}
		b.WriteString("</tr>")
	}
	b.WriteString("</tbody></table></details>")
}

func itoa(i int) string { return strconv.Itoa(i) }

// tenth is v to a tenth: an SVG coordinate (finer than a pixel), or a
// value in the table and the description. Values too large to have a
// tenth are written whole.
func tenth(v float64) string {
	if math.Abs(v) < 1e15 {
		v = math.Round(v*10) / 10
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// compact is an axis label: at most four characters before the unit
// prefix (k, M, G, T, P, E), so huge values fit beside the axis.
func compact(v float64) string {
	const prefixes = "kMGTPE"
	if math.Abs(v) < 1000 {
		return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
	}
	i := -1
	for math.Abs(v) >= 1000 && i+1 < len(prefixes) {
		v /= 1000
		i++
	}
	return strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64) + prefixes[i:i+1]
}
