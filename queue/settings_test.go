package queue

import (
	"reflect"
	"slices"
	"strings"
	"testing"

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
	// table through numbers.
	var r Room
	var bound []string
	for _, n := range r.numbers() {
		bound = append(bound, n.name)
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
