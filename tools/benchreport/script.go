package benchreport

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/edgequeue/waitingroom/tools/scriptbench"
)

// ScriptHeading opens the section on the Redis CPU of a call of the
// store's script.
const ScriptHeading = "## The store's script: Redis CPU per call, against a baseline"

// ScriptRun is the store's script of one tree, measured by scriptbench.
type ScriptRun struct {
	// Name says which tree ("this tree", "baseline"), Commit which commit,
	// and Script is the SHA-1 of its store/line.lua ("" if unknown).
	Name, Commit, Script string
	Result               scriptbench.Result
}

// opText says what each operation of scriptbench is.
var opText = map[string]string{
	scriptbench.OpStats: "stats",
	scriptbench.OpPoll:  "poll, far from the front",
	scriptbench.OpJoin:  "join",
	scriptbench.OpClaim: "poll of a called ticket (claim)",
	scriptbench.OpRenew: "renew",
	scriptbench.OpEnd:   "end",
}

// ScriptSection renders the script's section: today's run against the
// baseline's, line length by line length, each op as µs of Redis CPU per
// call and the ratio of the two; cpu is the CPU both redis-servers were
// pinned to ("" if they were not), commands the commands that ran.
func ScriptSection(res Results, today, baseline ScriptRun, cpu string, took time.Duration, commands []string) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	w("%s", sectionHead(ScriptHeading, res, took, "make bench-script"))
	cfg := today.Result.Config
	w("The store's script (`store/line.lua`) of %s (%s) against the baseline's, commit %s (`SCRIPT_BASELINE`), "+
		"both measured in this one run of `make bench-script` on this machine by the same harness (`tools/scriptbench`), built twice: against this tree, and against the baseline's root module (a go.mod replace). "+
		"The two builds run side by side, each with a redis-server of its own: for each line length both fill their lines at once, then they make %d passes each together, taking turns round by round (who goes first alternating), "+
		"so that the machine's other work weighs on both alike%s. Machine: %s; redis-server %s.\n\n",
		today.Name, today.Commit, baseline.Commit, cfg.Passes, pinned(cpu), res.Machine.text(), today.Result.Redis)
	if today.Script != "" && today.Script == baseline.Script {
		w("**This tree's `store/line.lua` is the baseline's, byte for byte** (SHA-1 %s): every difference below is the harness's own noise on this machine.\n\n", today.Script)
	}
	w("Each line length is a fresh line of one room on a fresh keyspace: its tickets join through `store.Upstash` (%d clients, in process, at one virtual instant, the room paused so nobody is called), "+
		"then the room is resumed. A pass calls each operation %s times by %d clients, in %d rounds of as many calls, time moving on %v a call, in the order of the tables: "+
		"the joins lengthen the line by as many tickets, and an admit of as many (not measured) calls the front in for the claims, which the renewals and ends then use. "+
		"Before each round `CONFIG RESETSTAT` and `INFO cpu`; after it `INFO cpu` and `INFO commandstats`. "+
		"Every call is checked to have done what its operation is for (a far poll kept its place, a join got a new ticket, a claim became a session, a renewal was granted, an ended session could no longer be renewed), "+
		"and Redis must have counted exactly one script run per call, or the run fails. Room policy: %s.\n\n",
		cfg.FillClients, thousands(float64(cfg.Calls)), cfg.Clients, cfg.Rounds, scriptbench.Step, scriptbench.PolicyText)
	lines := pairLines(today.Result, baseline.Result)
	w("**Redis CPU per call, µs**: the CPU time of redis-server's main thread over a round ÷ its calls (`INFO cpu`), the median round's; the whole call (reading it, the script, answering), and no wait for a CPU. " +
		"Ratio: this tree ÷ baseline, the median over the rounds of this tree's round ÷ the baseline's round run next to it; below 1 is cheaper, and the issue's goal is 0.33 or less.\n\n")
	opTable(w, lines, scriptbench.Op.CPUPerCall, func(o scriptbench.Op) []float64 { return o.CPURounds })
	w("\n**usec_per_call of EVALSHA, µs** (`INFO commandstats`), the median round's, and the ratio as above: the time Redis clocks around the script itself, by the wall clock, so on a machine whose cores are busy with other work it includes moments redis-server waited for a CPU.\n\n")
	opTable(w, lines, scriptbench.Op.UsecPerCall, func(o scriptbench.Op) []float64 { return o.Rounds })
	w("\n**One core's ceiling**: %d clients poll tickets far from the front (%s polls a pass, spread over the line's back half) as fast as the machine lets them. "+
		"*Calls per Redis CPU second* is the polls ÷ the CPU time of redis-server's main thread over the run (`INFO cpu`): what one core serves when Redis has it to itself. "+
		"*Wall calls/s* is what this machine served, its clients sharing its cores with redis-server, and *busy* the share of the wall time redis-server was on a CPU.\n\n",
		cfg.SaturationClients, thousands(float64(cfg.SaturationCalls)))
	w("| waiting | this tree: calls per Redis CPU second | wall calls/s | busy | baseline: calls per Redis CPU second | wall calls/s | busy | ratio of calls per CPU second |\n")
	w("|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, l := range lines {
		w("| %s | %s | %s | %s |\n", thousands(float64(l.waiting)), satCells(l.today), satCells(l.baseline), satRatio(l.today, l.baseline))
	}
	w("\n")
	var fills []string
	for _, l := range lines {
		fills = append(fills, fmt.Sprintf("%s waiting in %s (this tree) and %s (baseline)", thousands(float64(l.waiting)), fillText(l.today), fillText(l.baseline)))
	}
	w("- The lines filled: %s.\n", strings.Join(fills, "; "))
	w("- The cores this ran on were shared with other work, which slows every figure alike: the ratios, from one run, compare better than the figures do with another machine's.\n")
	w("- Commands (from the repository's root):\n\n```\n%s\n```\n", strings.Join(commands, "\n"))
	return b.String()
}

func pinned(cpu string) string {
	if cpu == "" {
		return " (the two redis-servers were not pinned to one CPU: taskset failed)"
	}
	return "; both redis-servers were pinned to CPU " + cpu + " (`taskset`), so that a core slower for a while (its sibling busy) slows both alike"
}

// opTable writes a table of each operation's µs per call, as per says,
// at each line length: this tree's, the baseline's and their ratio, by
// the rounds the two ran side by side (scriptbench.PairedRatio).
func opTable(w func(string, ...any), lines []scriptLines, per func(scriptbench.Op) float64, rounds func(scriptbench.Op) []float64) {
	w("| operation |")
	for _, l := range lines {
		w(" %s waiting: this tree | baseline | ratio |", thousands(float64(l.waiting)))
	}
	w("\n|---|%s\n", strings.Repeat("---:|---:|---:|", len(lines)))
	for _, op := range scriptbench.Ops {
		w("| %s |", opText[op])
		for _, l := range lines {
			t, tok := findOp(l.today, op)
			bl, bok := findOp(l.baseline, op)
			ratio := "–"
			if tok && bok {
				r, paired := scriptbench.PairedRatio(rounds(t), rounds(bl))
				if !paired {
					r = per(t) / per(bl)
				}
				ratio = strconv.FormatFloat(r, 'f', 2, 64)
			}
			w(" %s | %s | %s |", usText(per(t), tok), usText(per(bl), bok), ratio)
		}
		w("\n")
	}
}

// scriptLines is one line length's measurements in each run (nil where a
// run lacks it).
type scriptLines struct {
	waiting         int
	today, baseline *scriptbench.Line
}

// pairLines pairs the two runs' lines by length, in today's order, then
// any only the baseline measured.
func pairLines(today, baseline scriptbench.Result) []scriptLines {
	var out []scriptLines
	find := func(n int) int {
		for i := range out {
			if out[i].waiting == n {
				return i
			}
		}
		out = append(out, scriptLines{waiting: n})
		return len(out) - 1
	}
	for i := range today.Lines {
		out[find(today.Lines[i].Waiting)].today = &today.Lines[i]
	}
	for i := range baseline.Lines {
		out[find(baseline.Lines[i].Waiting)].baseline = &baseline.Lines[i]
	}
	return out
}

func findOp(l *scriptbench.Line, name string) (scriptbench.Op, bool) {
	if l == nil {
		return scriptbench.Op{}, false
	}
	for _, o := range l.Ops {
		if o.Name == name {
			return o, true
		}
	}
	return scriptbench.Op{}, false
}

func usText(us float64, ok bool) string {
	if !ok {
		return "not measured"
	}
	return strconv.FormatFloat(us, 'f', 1, 64)
}

func satCells(l *scriptbench.Line) string {
	if l == nil {
		return "not measured | – | –"
	}
	s := l.Saturation
	return fmt.Sprintf("%s | %s | %s", thousands(s.PerCoreSecond()), thousands(s.PerSecond()), percent(s.Busy()))
}

func satRatio(today, baseline *scriptbench.Line) string {
	if today == nil || baseline == nil {
		return "–"
	}
	return strconv.FormatFloat(today.Saturation.PerCoreSecond()/baseline.Saturation.PerCoreSecond(), 'f', 2, 64)
}

func fillText(l *scriptbench.Line) string {
	if l == nil {
		return "not measured"
	}
	if l.Fill < time.Minute {
		return l.Fill.Round(100 * time.Millisecond).String()
	}
	return l.Fill.Round(time.Second).String()
}

// text is the machine as the report names it, without its Redis.
func (m Machine) text() string {
	return fmt.Sprintf("%s, %d cores, %.0f GiB; %s; %s", m.CPU, m.Cores, m.MemoryGiB, m.OS, m.Go)
}
