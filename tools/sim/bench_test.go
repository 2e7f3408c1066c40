package sim

import (
	"flag"
	"fmt"
	"testing"
)

var visitors = flag.Int("visitors", 100000, "visitors in BenchmarkFlashCrowd")

// BenchmarkFlashCrowd runs a large event: a capacity room sized at 5% of the
// crowd, half of which arrives in the first minute. It reports the figures
// the admission issue asks for.
func BenchmarkFlashCrowd(b *testing.B) {
	for i := 0; i < b.N; i++ {
		capacity := *visitors / 20
		rep := runSim(b, flashCrowd(*visitors, fmt.Sprintf(`{"max_active_users":%d,%s}`, capacity, windows)))
		b.ReportMetric(float64(rep.Overshoot), "overshoot")
		b.ReportMetric(float64(rep.Inversions), "inversions")
		b.ReportMetric(float64(rep.LostPlaces), "lost-places")
		b.ReportMetric(rep.Utilisation*100, "utilisation-%")
		b.ReportMetric(rep.CallsPerRequest(), "calls/request")
		b.ReportMetric(float64(rep.RedisGrowth)/float64(*visitors), "redis-bytes/visitor")
		b.ReportMetric(rep.WaitP50.Minutes(), "wait-p50-min")
		b.ReportMetric(rep.WaitP99.Minutes(), "wait-p99-min")
		b.Logf("%+v", summary(rep))
	}
}
