package modeltest

import (
	"flag"
	"os"
	"testing"
)

// TestMain makes TestModel's sequences 60 actions long on average, not
// rapid's 30: the defects worth finding need several phases in one
// sequence (a pre-queue, its draw and the calls after it; a full room and
// a lapse), and at 30 a run of 100 sequences missed a wrong draw order as
// often as not. -rapid.steps, or RAPID_STEPS, still decides.
func TestMain(m *testing.M) {
	flag.Parse()
	set := os.Getenv("RAPID_STEPS") != ""
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "rapid.steps" })
	if !set {
		if err := flag.Set("rapid.steps", "60"); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
