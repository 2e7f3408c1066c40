package locale

import (
	"strconv"
	"strings"
	"time"
)

// Fill replaces the placeholder {name} in text with value.
func Fill(text, name, value string) string {
	i := strings.Index(text, "{"+name+"}")
	if i < 0 {
		return text
	}
	return text[:i] + value + text[i+len(name)+2:]
}

// Number writes n with the language's digit grouping: 1,234 (en, ja),
// 1.234 (de, pt, and es from 10.000 up: Spanish leaves four digits
// ungrouped), and 1 234 with a narrow no-break space (fr).
func Number(lang string, n int64) string {
	sep, minDigits := ",", 4
	switch lang {
	case "de", "pt":
		sep = "."
	case "es":
		sep, minDigits = ".", 5
	case "fr":
		sep = "\u202f"
	}
	digits := strconv.FormatInt(n, 10)
	sign := ""
	if n < 0 {
		sign, digits = "-", digits[1:]
	}
	if len(digits) < minDigits {
		return sign + digits
	}
	var b strings.Builder
	b.Grow(len(sign) + len(digits) + (len(digits)-1)/3*len(sep))
	b.WriteString(sign)
	first := len(digits) % 3
	if first == 0 {
		first = 3
	}
	b.WriteString(digits[:first])
	for i := first; i < len(digits); i += 3 {
		b.WriteString(sep)
		b.WriteString(digits[i : i+3])
	}
	return b.String()
}

// Unit is a unit of time a text counts in.
type Unit int

// The units.
const (
	Seconds Unit = iota
	Minutes
	Hours
	Days
)

// unitWords are each language's unit names, singular and plural.
func unitWords(lang string, u Unit) (one, many string) {
	switch lang {
	case "de":
		return pick(u, "Sekunde", "Sekunden", "Minute", "Minuten", "Stunde", "Stunden", "Tag", "Tage")
	case "fr":
		return pick(u, "seconde", "secondes", "minute", "minutes", "heure", "heures", "jour", "jours")
	case "es":
		return pick(u, "segundo", "segundos", "minuto", "minutos", "hora", "horas", "día", "días")
	case "pt":
		return pick(u, "segundo", "segundos", "minuto", "minutos", "hora", "horas", "dia", "dias")
	case "ja":
		w, _ := pick(u, "秒", "", "分", "", "時間", "", "日", "")
		return w, w
	}
	return pick(u, "second", "seconds", "minute", "minutes", "hour", "hours", "day", "days")
}

// pick returns the pair of words for u among the four units' pairs.
func pick(u Unit, s1, s2, m1, m2, h1, h2, d1, d2 string) (string, string) {
	switch u {
	case Seconds:
		return s1, s2
	case Hours:
		return h1, h2
	case Days:
		return d1, d2
	}
	return m1, m2
}

// singular reports whether n takes the singular in lang (CLDR's plural
// rules for integers: French and Brazilian Portuguese count 0 as one).
func singular(lang string, n int64) bool {
	if lang == "fr" || lang == "pt" {
		return n == 0 || n == 1
	}
	return n == 1
}

// Count writes n units: "1 minute", "5 Minuten", "5分".
func Count(lang string, n int64, u Unit) string {
	return withUnit(lang, Number(lang, n), n, u)
}

// withUnit writes the number text num (the count n) before its unit.
func withUnit(lang, num string, n int64, u Unit) string {
	one, many := unitWords(lang, u)
	word := many
	if singular(lang, n) {
		word = one
	}
	switch lang {
	case "ja":
		return num + word
	case "fr":
		return num + "\u00a0" + word
	}
	return num + " " + word
}

// WaitRange words an estimated wait of least to most: "8–12 minutes",
// "about 5 minutes" when both round alike, "less than a minute", and in
// hours from two hours up. Minutes and hours are rounded to the nearest,
// and the low end is at least 1.
func WaitRange(lang string, least, most time.Duration) string {
	if most < least {
		least, most = most, least
	}
	if most < time.Minute {
		return Text(lang, LessThanMinute)
	}
	unit, size := Minutes, time.Minute
	if most >= 2*time.Hour {
		unit, size = Hours, time.Hour
	}
	lo, hi := int64((least+size/2)/size), int64((most+size/2)/size)
	lo = max(lo, 1)
	if lo >= hi {
		return Fill(Text(lang, About), "d", Count(lang, hi, unit))
	}
	span := Fill(Fill(Text(lang, Range), "a", Number(lang, lo)), "b", Number(lang, hi))
	return withUnit(lang, span, hi, unit)
}

// Countdown words the time until a start: to the second in the last
// minute, to the minute in the last hour, hours and minutes within two
// days, days beyond; "any moment now" once it is due.
func Countdown(lang string, d time.Duration) string {
	switch {
	case d <= 0:
		return Text(lang, AnyMoment)
	case d < time.Minute:
		return Count(lang, int64((d+time.Second-1)/time.Second), Seconds)
	case d < time.Hour:
		return Count(lang, int64((d+time.Minute-1)/time.Minute), Minutes)
	case d < 48*time.Hour:
		mins := int64(d % time.Hour / time.Minute)
		mm := strconv.FormatInt(mins, 10)
		if mins < 10 {
			mm = "0" + mm
		}
		return Fill(Fill(Text(lang, HoursMinutes), "h", strconv.FormatInt(int64(d/time.Hour), 10)), "mm", mm)
	}
	return Count(lang, int64(d/(24*time.Hour)), Days)
}

// Moment writes an instant the same way in every language: an ISO 8601
// date and a 24-hour time in UTC, which readers everywhere can parse
// (the page's script rewrites it in the reader's own time zone).
func Moment(t time.Time) string {
	return t.UTC().Format("2006-01-02 15:04 UTC")
}
