package admin

import (
	"net/url"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/control"
	"github.com/fastly/compute-sdk-go/fsthttp"
)

// TestEveryActionHasAForm: every operator action of control.Actions has
// its form in each room's section, with a labelled input for each of its
// fields, and the form, filled in, reaches the operator once.
func TestEveryActionHasAForm(t *testing.T) {
	for _, a := range control.Actions() {
		t.Run(a.Name, func(t *testing.T) {
			p := newPanel(&recordingOp{stats: liveStats()})
			body := serve(t, p, fsthttp.MethodGet, "/_wr/admin", "").Body.String()
			form := url.Values{"room": {"shop"}}
			for i := range p.Rooms {
				id := roomAnchor(i)
				section := body[strings.Index(body, `<section id="`+id+`"`):]
				section = section[:strings.Index(section, "</section>")]
				if !strings.Contains(section, `<form method="post" action="/_wr/admin/`+a.Name+`"`) {
					t.Fatalf("room %d has no form posting to %s", i, a.Name)
				}
				for _, f := range a.Fields {
					if !strings.Contains(section, `<label for="`+id+"-"+f.Name+`">`) || !strings.Contains(section, ` id="`+id+"-"+f.Name+`" name="`+f.Name+`"`) {
						t.Errorf("room %d: no labelled input for %s", i, f.Name)
					}
				}
			}
			for _, f := range a.Fields {
				form.Set(f.Name, map[control.Kind]string{control.Whole: "1", control.Number: "1.5", control.Text: "shop"}[f.Kind])
				if f.Kind == control.Choice {
					form.Set(f.Name, f.Choices[0])
				}
			}
			op := &recordingOp{}
			if w := post(t, newPanel(op), a.Name, form); w.Code != fsthttp.StatusSeeOther || len(op.did) != 1 {
				t.Fatalf("%d, the operator was asked %q:\n%s", w.Code, op.did, w.Body)
			}
		})
	}
}
