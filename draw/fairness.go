package draw

// ChiSquare draws n tickets with each of draws keys (key(i) names the i-th)
// and returns Pearson's chi-square statistic of the n×n table counting how
// often ticket t was called at place p, with its degrees of freedom. Under
// a fair draw every cell expects draws/n, and the statistic follows the
// chi-square distribution with (n-1)² degrees of freedom.
func ChiSquare(n int64, draws int, key func(i int) string) (stat float64, dof int) {
	counts := make([]int, n*n)
	for i := 0; i < draws; i++ {
		k := KeysOf(key(i))
		for p := int64(0); p < n; p++ {
			counts[k.Permute(p, n)*n+p]++
		}
	}
	want := float64(draws) / float64(n)
	for _, c := range counts {
		d := float64(c) - want
		stat += d * d / want
	}
	return stat, int((n - 1) * (n - 1))
}
