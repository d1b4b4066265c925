package metrics

import (
	"math"
	"slices"
)

// Exact statistics over a stream that is read more than once.
//
// aiperf keeps every value of every metric in memory and calls numpy. Here
// memory must not grow with the number of requests, so the values are read
// in passes over the records (the caller's open func is called once per
// pass):
//
//	pass 1: count, min, max and a compensated sum (hence the mean) per
//	        metric, and a histogram of the values' order-preserving 64-bit
//	        keys by their top 20 bits (sign, exponent, 8 mantissa bits: 256
//	        buckets per binary octave), with each bucket's min and max;
//	pass 2: the sum of squared deviations from the mean (population std);
//	        for each rank numpy's percentiles need (at most 18), the bucket
//	        holding it: a bucket whose min equals its max answers at once,
//	        the others keep their values (within a fixed budget, smallest
//	        buckets first) or, past the budget, build a histogram of their
//	        next 8 key bits;
//	pass 3+: the same for the sub-buckets, only when the budget was short.
//
// Every rank ends up as an exact order statistic, so the percentiles equal
// numpy.percentile's (method "linear") bit for bit. Memory is the budget
// (8 MiB of values by default) plus the histograms: 6 KiB per binary octave
// the values of a metric span, whatever their number.

// acc is a Neumaier (improved Kahan) compensated sum.
type acc struct{ s, c float64 }

func (a *acc) add(x float64) {
	t := a.s + x
	if math.Abs(a.s) >= math.Abs(x) {
		a.c += (a.s - t) + x
	} else {
		a.c += (x - t) + a.s
	}
	a.s = t
}

func (a *acc) sum() float64 { return a.s + a.c }

// key maps a float64 to a uint64 with the same order (-0 is taken as 0).
func key(f float64) uint64 {
	if f == 0 {
		f = 0
	}
	b := math.Float64bits(f)
	if b>>63 != 0 {
		return ^b
	}
	return b | 1<<63
}

// Percentiles are the percentiles every summary reports.
var Percentiles = [9]float64{1, 5, 10, 25, 50, 75, 90, 95, 99}

// numpyRanks returns, for n sorted values and percentile p, the ranks numpy's
// linear method reads and the weight of the upper one: virtual index h =
// (n-1)*q with q = p/100; h >= n-1 reads the last value alone.
func numpyRanks(n int64, p float64) (lo, hi int64, gamma float64) {
	h := float64(n-1) * (p / 100)
	if h >= float64(n-1) {
		return n - 1, n - 1, 0
	}
	lo = int64(math.Floor(h))
	return lo, lo + 1, h - float64(lo)
}

// lerp is numpy's _lerp: a + (b-a)*t, computed from b's side when t >= 0.5.
// The conversions keep the compiler from fusing the multiply and add, which
// numpy does not do.
func lerp(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - float64(d*(1-t))
	}
	return a + float64(d*t)
}

// PercentileSorted returns numpy.percentile(sorted, p) (method "linear") of
// an ascending slice.
func PercentileSorted(sorted []float64, p float64) float64 {
	lo, hi, g := numpyRanks(int64(len(sorted)), p)
	return lerp(sorted[lo], sorted[hi], g)
}

// octave is one binary octave of a pass-1 histogram: 256 buckets.
type octave struct {
	n        [256]int64
	min, max [256]float64
}

// hist1 is the pass-1 histogram, indexed by the key's top 12 bits.
type hist1 [4096]*octave

func (h *hist1) add(v float64, k uint64) {
	o := h[k>>52]
	if o == nil {
		o = new(octave)
		h[k>>52] = o
	}
	b := (k >> 44) & 0xff
	if o.n[b] == 0 || v < o.min[b] {
		o.min[b] = v
	}
	if o.n[b] == 0 || v > o.max[b] {
		o.max[b] = v
	}
	o.n[b]++
}

// bucket is a set of values whose keys share a prefix.
type bucket struct {
	prefix   uint64 // key >> (64-bits)
	bits     uint
	n        int64
	min, max float64
	base     int64 // rank of its smallest value
}

// node is a bucket being resolved in the current pass: it either collects
// its values or refines them into sub-buckets by the next bits of the key.
type node struct {
	bucket
	ranks   []int64 // wanted ranks inside it
	collect []float64
	sub     *subhist
	step    uint // bits the sub-histogram splits by
}

type subhist struct {
	n        [256]int64
	min, max [256]float64
}

func (nd *node) match(k uint64) bool { return k>>(64-nd.bits) == nd.prefix }

func (nd *node) add(v float64, k uint64) {
	if nd.sub == nil {
		nd.collect = append(nd.collect, v)
		return
	}
	b := (k >> (64 - nd.bits - nd.step)) & (1<<nd.step - 1)
	s := nd.sub
	if s.n[b] == 0 || v < s.min[b] {
		s.min[b] = v
	}
	if s.n[b] == 0 || v > s.max[b] {
		s.max[b] = v
	}
	s.n[b]++
}

// dist accumulates one metric's values.
type dist struct {
	n        int64
	min, max float64
	sum      acc
	sq       acc // pass 2: sum of (x - mean)^2
	mean     float64
	h        *hist1
	// small holds the values of pass 1 while there are at most smallMax
	// of them (h is then nil): a metric with few values, as in a short time
	// slice, is sorted at the end of pass 1 instead of costing a histogram.
	small []float64

	ranks    []int64           // wanted ranks, sorted, unique
	resolved map[int64]float64 // rank -> value
	pend     []*node           // nodes of the current pass
	next     []bucket          // buckets to resolve in the next pass, with their ranks
	nextRank [][]int64
}

func (d *dist) add1(v float64) {
	if v == 0 {
		v = 0
	}
	if d.n == 0 || v < d.min {
		d.min = v
	}
	if d.n == 0 || v > d.max {
		d.max = v
	}
	d.n++
	d.sum.add(v)
	if d.h == nil {
		if len(d.small) < smallMax {
			d.small = append(d.small, v)
			return
		}
		d.h = new(hist1)
		for _, x := range d.small {
			d.h.add(x, key(x))
		}
		d.small = nil
	}
	d.h.add(v, key(v))
}

// smallMax is how many values a dist keeps before it builds a histogram
// (2 KiB, against 32 KiB for an empty histogram).
const smallMax = 256

// addN feeds a value in pass 2 and later.
func (d *dist) addN(v float64, pass int) {
	if v == 0 {
		v = 0
	}
	if pass == 2 {
		dev := v - d.mean
		d.sq.add(dev * dev)
	}
	if len(d.pend) == 0 {
		return
	}
	k := key(v)
	for _, nd := range d.pend {
		if nd.match(k) {
			nd.add(v, k)
			return
		}
	}
}

// afterPass1 computes the mean and finds the buckets holding the wanted
// ranks.
func (d *dist) afterPass1() {
	if d.n == 0 {
		return
	}
	d.mean = d.sum.sum() / float64(d.n)
	d.resolved = make(map[int64]float64, 18)
	for _, p := range Percentiles {
		lo, hi, _ := numpyRanks(d.n, p)
		d.ranks = append(d.ranks, lo, hi)
	}
	slices.Sort(d.ranks)
	d.ranks = slices.Compact(d.ranks)
	if d.h == nil { // few values, all kept
		slices.Sort(d.small)
		for _, r := range d.ranks {
			d.resolved[r] = d.small[r]
		}
		d.small = nil
		return
	}
	// Walk the octaves in key order.
	var cum int64
	ri := 0
	for top := 0; top < len(d.h) && ri < len(d.ranks); top++ {
		o := d.h[top]
		if o == nil {
			continue
		}
		for b := 0; b < 256 && ri < len(d.ranks); b++ {
			c := o.n[b]
			if c == 0 {
				continue
			}
			bk := bucket{prefix: uint64(top)<<8 | uint64(b), bits: 20, n: c, min: o.min[b], max: o.max[b], base: cum}
			d.place(bk, &ri)
			cum += c
		}
	}
	d.h = nil // pass 1's histogram is no longer needed
}

// place resolves or schedules the wanted ranks (from d.ranks[*ri]) that fall
// into bk.
func (d *dist) place(bk bucket, ri *int) {
	var in []int64
	for *ri < len(d.ranks) && d.ranks[*ri] < bk.base+bk.n {
		r := d.ranks[*ri]
		if bk.min == bk.max {
			d.resolved[r] = bk.min
		} else {
			in = append(in, r)
		}
		*ri++
	}
	if len(in) > 0 {
		d.next = append(d.next, bk)
		d.nextRank = append(d.nextRank, in)
	}
}

// afterPass resolves the nodes of the pass just done; it reports false when
// a node did not see the count pass 1 saw (the records changed).
func (d *dist) afterPass() bool {
	for _, nd := range d.pend {
		if nd.sub == nil {
			if int64(len(nd.collect)) != nd.n {
				return false
			}
			slices.Sort(nd.collect)
			for _, r := range nd.ranks {
				d.resolved[r] = nd.collect[r-nd.base]
			}
			continue
		}
		var cum int64
		ri := 0
		for b := 0; b < 1<<nd.step; b++ {
			cum += nd.sub.n[b]
		}
		if cum != nd.n {
			return false
		}
		cum = nd.base
		for b := 0; b < 1<<nd.step && ri < len(nd.ranks); b++ {
			c := nd.sub.n[b]
			if c == 0 {
				continue
			}
			bk := bucket{prefix: nd.prefix<<nd.step | uint64(b), bits: nd.bits + nd.step, n: c, min: nd.sub.min[b], max: nd.sub.max[b], base: cum}
			var in []int64
			for ri < len(nd.ranks) && nd.ranks[ri] < cum+c {
				r := nd.ranks[ri]
				if bk.min == bk.max {
					d.resolved[r] = bk.min
				} else {
					in = append(in, r)
				}
				ri++
			}
			if len(in) > 0 {
				d.next = append(d.next, bk)
				d.nextRank = append(d.nextRank, in)
			}
			cum += c
		}
	}
	d.pend = nil
	return true
}

// plan turns the pending buckets of all dists into nodes for the next pass:
// the smallest collect their values while the budget lasts, the others
// refine. It reports whether another pass is needed.
func plan(ds []*dist, budget int64) bool {
	type ref struct {
		d *dist
		i int
	}
	var all []ref
	for _, d := range ds {
		for i := range d.next {
			all = append(all, ref{d, i})
		}
	}
	if len(all) == 0 {
		return false
	}
	slices.SortFunc(all, func(a, b ref) int {
		x, y := a.d.next[a.i].n, b.d.next[b.i].n
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	for _, r := range all {
		bk := r.d.next[r.i]
		nd := &node{bucket: bk, ranks: r.d.nextRank[r.i]}
		if bk.n <= budget {
			budget -= bk.n
			nd.collect = make([]float64, 0, bk.n)
		} else {
			nd.step = min(8, 64-bk.bits)
			nd.sub = new(subhist)
		}
		r.d.pend = append(r.d.pend, nd)
	}
	for _, d := range ds {
		d.next, d.nextRank = nil, nil
	}
	return true
}

// stats are a finished metric's statistics in its base unit.
type stats struct {
	n                       int64
	avg, min, max, sum, std float64
	p                       [9]float64
}

func (d *dist) finish() stats {
	s := stats{n: d.n}
	if d.n == 0 {
		return s
	}
	s.avg, s.min, s.max, s.sum = d.mean, d.min, d.max, d.sum.sum()
	s.std = math.Sqrt(d.sq.sum() / float64(d.n))
	for i, p := range Percentiles {
		lo, hi, g := numpyRanks(d.n, p)
		s.p[i] = lerp(d.resolved[lo], d.resolved[hi], g)
	}
	return s
}
