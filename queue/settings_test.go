package queue

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/edgequeue/waitingroom/locale"
	"github.com/edgequeue/waitingroom/settings"
)

// jsonFields are the JSON names of t's fields, its embedded structs'
// included.
func jsonFields(t reflect.Type) []string {
	var names []string
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case f.Anonymous && tag == "":
			names = append(names, jsonFields(f.Type)...)
		case tag != "" && tag != "-":
			names = append(names, tag)
		}
	}
	return names
}

func names(table []settings.Setting, only func(settings.Setting) bool) []string {
	var out []string
	for _, s := range table {
		if only == nil || only(s) {
			out = append(out, s.Name)
		}
	}
	return out
}

// TestSettingsTable: package settings' table names every field a room,
// an event and its overrides read, and nothing else, so the reference and
// wrconfig's help cover every setting.
func TestSettingsTable(t *testing.T) {
	for _, tc := range []struct {
		what        string
		fields, row []string
	}{
		{"room", jsonFields(reflect.TypeOf(Room{})), names(settings.Room[:], nil)},
		{"event", jsonFields(reflect.TypeOf(eventJSON{})), names(settings.Event[:], nil)},
		{"overrides", jsonFields(reflect.TypeOf(Overrides{})), names(settings.Room[:], func(s settings.Setting) bool { return s.Override })},
	} {
		slices.Sort(tc.fields)
		slices.Sort(tc.row)
		if !slices.Equal(tc.fields, tc.row) {
			t.Errorf("%s: the JSON fields %q, the table %q", tc.what, tc.fields, tc.row)
		}
	}
	// Every numeric room setting gets its default and range from the
	// table through numberFields, which finds it by its JSON name: a numeric
	// row needs an int or float64 field of Room (not of a struct Room
	// embeds) with that name.
	var bound []string
	for _, f := range numberFields() {
		bound = append(bound, f.name)
	}
	numeric := names(settings.Room[:], func(s settings.Setting) bool { return s.Kind.Numeric() })
	slices.Sort(bound)
	slices.Sort(numeric)
	if !slices.Equal(bound, numeric) {
		t.Errorf("numbers %q, the table's numeric settings %q", bound, numeric)
	}
}

// The table's documented defaults and choices are what the code does.
func TestSettingsTableDefaults(t *testing.T) {
	r := mustRoom(t, "shop", `{"paths":["/"],"max_active_users":1}`)
	for name, got := range map[string]string{
		"mode": string(r.Mode), "on_store_error": string(r.OnStoreError), "template": r.Template,
		"bind_session": string(DefaultBindMode), "cookie_name": strings.Replace(r.CookieName, "shop", "<room>", 1),
		"language": locale.Default, "brand_color": DefaultBrand, "background_color": DefaultBackground,
	} {
		if want := settings.Get(settings.Room[:], name).DefaultText; got != want {
			t.Errorf("%s: the code's default %q, the table's %q", name, got, want)
		}
	}
	if got, want := strings.Join(locale.Languages(), "|"), settings.Get(settings.Room[:], "language").Choices; got != want {
		t.Errorf("languages %q, the table's %q", got, want)
	}
	for _, name := range []string{"mode", "on_store_error", "bind_session", "queue_status_code"} {
		for _, v := range strings.Split(settings.Get(settings.Room[:], name).Choices, "|") {
			value := `"` + v + `"`
			if name == "queue_status_code" {
				value = v
			}
			if _, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":1,"`+name+`":`+value+`}`)); err != nil {
				t.Errorf("%s %s, one of the table's choices: %v", name, v, err)
			}
		}
		value := `"other"`
		if name == "queue_status_code" {
			value = "201"
		}
		if _, err := ParseRoom("shop", []byte(`{"paths":["/"],"max_active_users":1,"`+name+`":`+value+`}`)); err == nil {
			t.Errorf("%s %s, not one of the table's choices, accepted", name, value)
		}
	}
}

// TestSettingsReachTheStore: each numeric room setting either reaches the
// store through Room.Policy or is the edge's alone, as listed here, and
// the test changes each one to see which. A new row fails until it is
// listed; a setting the store needs goes into store.Policy (Room.Policy),
// the script's protocol (store/genline/protocol.go, then go generate
// ./store) and the script's parts that read it.
func TestSettingsReachTheStore(t *testing.T) {
	reaches := map[string]bool{"random_window": true, "new_users_per_minute": true, "burst": true,
		"max_active_users": true, "refresh": true, "queue_timeout": true, "claim_window": true,
		"inactivity_timeout": true, "priority_share": true, "shards": true}
	now := time.Unix(1_700_000_000, 0)
	const def = `{"paths":["/"],"max_active_users":5,"new_users_per_minute":5,"shards":2}`
	for _, f := range numberFields() {
		base, changed := mustRoom(t, "shop", def), mustRoom(t, "shop", def)
		n := changed.number(f)
		v := n.get() + 1
		if s := settings.Get(settings.Room[:], n.name); s.Ranged && v > s.Max {
			v = n.get() - 1
		}
		n.set(v)
		if got := !reflect.DeepEqual(base.Policy(now), changed.Policy(now)); got != reaches[n.name] {
			t.Errorf("%s reaches the store: %v, listed %v: list it as it is (and see this test's comment for what a setting the store needs takes)", n.name, got, reaches[n.name])
		}
	}
}
