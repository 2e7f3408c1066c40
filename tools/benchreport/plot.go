package benchreport

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/tools/sim"
)

// Series is one line of a chart.
type Series struct {
	Name   string
	Color  string
	Dashed bool
	Points []Point
}

// Point is one value at one time.
type Point struct {
	At    time.Duration
	Value float64
}

// Panel is one chart: a title, its lines, and their shared axes.
type Panel struct {
	Title  string
	YLabel string
	Series []Series
}

// The panel geometry, in SVG user units.
const (
	plotWidth   = 960
	panelHeight = 300
	marginLeft  = 70
	marginRight = 20
	marginTop   = 48
	marginBot   = 45
)

// SVG draws the panels one above the other, with time in minutes across.
func SVG(panels []Panel) string {
	var b strings.Builder
	height := panelHeight * len(panels)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n",
		plotWidth, height, plotWidth, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", plotWidth, height)
	for i, p := range panels {
		panel(&b, p, float64(i*panelHeight))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func panel(b *strings.Builder, p Panel, top float64) {
	var tMax time.Duration
	yMax := 0.0
	for _, s := range p.Series {
		for _, pt := range s.Points {
			tMax = max(tMax, pt.At)
			yMax = max(yMax, pt.Value)
		}
	}
	if tMax == 0 {
		tMax = time.Minute
	}
	yStep := niceStep(yMax / 5)
	yMax = math.Max(yStep, math.Ceil(yMax/yStep)*yStep)
	w := float64(plotWidth - marginLeft - marginRight)
	h := float64(panelHeight - marginTop - marginBot)
	x := func(t time.Duration) float64 { return marginLeft + w*float64(t)/float64(tMax) }
	y := func(v float64) float64 { return top + marginTop + h*(1-v/yMax) }

	fmt.Fprintf(b, `<text x="%d" y="%.0f" font-size="14" font-weight="bold">%s</text>`+"\n", marginLeft, top+16, escape(p.Title))
	for v := 0.0; v <= yMax+yStep/2; v += yStep {
		fmt.Fprintf(b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", marginLeft, plotWidth-marginRight, y(v), y(v))
		fmt.Fprintf(b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", marginLeft-6, y(v)+4, thousands(v))
	}
	xStep := time.Duration(niceStep(tMax.Minutes()/10) * float64(time.Minute))
	for t := time.Duration(0); t <= tMax; t += xStep {
		fmt.Fprintf(b, `<text x="%.1f" y="%.0f" text-anchor="middle">%g</text>`+"\n", x(t), top+panelHeight-marginBot+16, t.Minutes())
	}
	fmt.Fprintf(b, `<text x="%.0f" y="%.0f" text-anchor="middle">minutes since the doors opened</text>`+"\n",
		marginLeft+w/2, top+panelHeight-10)
	fmt.Fprintf(b, `<text transform="translate(16 %.0f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", top+marginTop+h/2, escape(p.YLabel))
	fmt.Fprintf(b, `<rect x="%d" y="%.0f" width="%.0f" height="%.0f" fill="none" stroke="#999"/>`+"\n", marginLeft, top+marginTop, w, h)
	legendX := float64(marginLeft)
	for _, s := range p.Series {
		var pts []string
		for _, pt := range s.Points {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(pt.At), y(pt.Value)))
		}
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.8"%s points="%s"/>`+"\n", s.Color, dash, strings.Join(pts, " "))
		// The legend runs along the top margin, clear of the lines.
		lx, ly := legendX, top+marginTop-8
		legendX += 40 + 7*float64(len(s.Name))
		fmt.Fprintf(b, `<line x1="%.0f" x2="%.0f" y1="%.0f" y2="%.0f" stroke="%s" stroke-width="2"%s/>`+"\n", lx, lx+24, ly-4, ly-4, s.Color, dash)
		fmt.Fprintf(b, `<text x="%.0f" y="%.0f">%s</text>`+"\n", lx+30, ly, escape(s.Name))
	}
}

// niceStep rounds a raw step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}

// FlashCrowdPlot is the benchmark's picture: the waiting room's queue,
// live visitors and admissions per minute, then the live visitors under
// each design against the capacity.
func FlashCrowdPlot(cfg sim.Config, reports []sim.Report) string {
	ours := reports[0]
	capacity := func(tl []sim.Sample) Series {
		end := tl[len(tl)-1].At
		return Series{Name: "capacity", Color: "#888", Dashed: true,
			Points: []Point{{0, float64(ours.Capacity)}, {end, float64(ours.Capacity)}}}
	}
	var waiting, live, perMinute []Point
	for i, s := range ours.Timeline {
		waiting = append(waiting, Point{s.At, float64(s.Waiting)})
		live = append(live, Point{s.At, float64(s.Live)})
		// Admissions in the minute up to this sample.
		j := i
		for j > 0 && s.At-ours.Timeline[j-1].At <= time.Minute {
			j--
		}
		perMinute = append(perMinute, Point{s.At, float64(s.Admitted - ours.Timeline[j].Admitted)})
	}
	first := Panel{Title: fmt.Sprintf("%s: %s visitors, %s in the first minute, capacity %s",
		ours.Policy, thousands(float64(ours.Visitors)), thousands(float64(cfg.FlashCrowd)), thousands(float64(ours.Capacity))),
		YLabel: "visitors",
		Series: []Series{
			{Name: "waiting in line", Color: "#d62728", Points: waiting},
			{Name: "live on the origin", Color: "#1f77b4", Points: live},
			{Name: "admissions per minute", Color: "#2ca02c", Points: perMinute},
			capacity(ours.Timeline),
		}}
	second := Panel{Title: "Live visitors on the origin under each design", YLabel: "visitors"}
	for i, r := range reports {
		var pts []Point
		for _, s := range r.Timeline {
			pts = append(pts, Point{s.At, float64(s.Live)})
		}
		second.Series = append(second.Series, Series{Name: r.Policy, Color: []string{"#1f77b4", "#ff7f0e", "#9467bd"}[i%3], Points: pts})
	}
	second.Series = append(second.Series, capacity(ours.Timeline))
	return SVG([]Panel{first, second})
}
