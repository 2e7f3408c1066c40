package sim

import "math"

// ChiSquareCritical is the chi-square distribution's upper p point with
// dof degrees of freedom: a fair draw's statistic exceeds it with
// probability p. It is found by bisection on the distribution's upper
// tail, the regularised incomplete gamma function Q(dof/2, x/2), to a
// relative precision of 1e-9; it is NaN for a dof below 1 or a p outside
// (0, 1).
func ChiSquareCritical(dof int, p float64) float64 {
	if dof < 1 || !(p > 0 && p < 1) {
		return math.NaN()
	}
	a := float64(dof) / 2
	lo, hi := 0.0, float64(dof)
	for upperGamma(a, hi/2) > p {
		hi *= 2
	}
	for hi-lo > 1e-9*hi {
		mid := (lo + hi) / 2
		if upperGamma(a, mid/2) > p {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// upperGamma is the regularised upper incomplete gamma function Q(a, x)
// for a > 0 and x >= 0: by its series below a+1, by its continued
// fraction (modified Lentz) above, as in Numerical Recipes.
func upperGamma(a, x float64) float64 {
	if x <= 0 {
		return 1
	}
	lg, _ := math.Lgamma(a)
	front := math.Exp(-x + a*math.Log(x) - lg)
	const eps, tiny = 1e-15, 1e-300
	if x < a+1 {
		sum, term := 1/a, 1/a
		for n := 1.0; n < 10000; n++ {
			term *= x / (a + n)
			sum += term
			if math.Abs(term) < math.Abs(sum)*eps {
				break
			}
		}
		return 1 - front*sum
	}
	b := x + 1 - a
	c, d := 1/tiny, 1/b
	h := d
	for i := 1.0; i < 10000; i++ {
		an := -i * (i - a)
		b += 2
		d = an*d + b
		if math.Abs(d) < tiny {
			d = tiny
		}
		c = b + an/c
		if math.Abs(c) < tiny {
			c = tiny
		}
		d = 1 / d
		delta := d * c
		h *= delta
		if math.Abs(delta-1) < eps {
			break
		}
	}
	return front * h
}

// pearson is Pearson's chi-square statistic of counts against a uniform
// expectation of want in every cell.
func pearson(counts []int, want float64) float64 {
	var stat float64
	for _, c := range counts {
		d := float64(c) - want
		stat += d * d / want
	}
	return stat
}
