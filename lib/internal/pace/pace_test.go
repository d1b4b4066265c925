package pace

import (
	"slices"
	"sync"
	"testing"
	"time"
)

var epoch = time.Now()

func mono() int64 { return int64(time.Since(epoch)) }

// The waiter never wakes before the moment (the one thing no load can
// break: load only delays), on every path: spin, fine timer, Go timer. How
// soon after it wakes is BenchmarkWaiterLateness's to measure.
func TestWaiterNeverEarly(t *testing.T) {
	w := NewWaiter(mono)
	defer w.Close()
	for _, d := range []time.Duration{0, 10 * time.Microsecond, 50 * time.Microsecond, 300 * time.Microsecond, 2 * time.Millisecond, 7 * time.Millisecond} {
		for range 10 {
			target := mono() + int64(d)
			if !w.Until(target, nil, nil) {
				t.Fatal("Until returned false without wake or stop")
			}
			if now := mono(); now < target {
				t.Fatalf("%v: woke %v early", d, time.Duration(target-now))
			}
		}
	}
}

// BenchmarkWaiterLateness reports how late the waiter wakes (p50 and p99
// over waits of 50 µs to 7 ms), the precision TestWaiterNeverEarly does
// not assert; Go's own timers are about 1 ms late here.
func BenchmarkWaiterLateness(b *testing.B) {
	w := NewWaiter(mono)
	defer w.Close()
	var late []time.Duration
	for b.Loop() {
		for _, d := range []time.Duration{50 * time.Microsecond, 300 * time.Microsecond, 2 * time.Millisecond, 7 * time.Millisecond} {
			target := mono() + int64(d)
			w.Until(target, nil, nil)
			late = append(late, time.Duration(mono()-target))
		}
	}
	slices.Sort(late)
	b.ReportMetric(float64(late[len(late)/2])/1e3, "p50-late-µs")
	b.ReportMetric(float64(late[len(late)*99/100])/1e3, "p99-late-µs")
}

// A wake or a stop ends a wait early, with false, on the fine timer's path
// and on the Go timer's. The clock stands still, so the moment never comes:
// only the wake can end the wait, however late the goroutine that sends it
// runs.
func TestWaiterWakeAndStop(t *testing.T) {
	var frozen int64 = 1e12
	w := NewWaiter(func() int64 { return frozen })
	defer w.Close()
	wake := make(chan struct{}, 1)
	for _, d := range []time.Duration{3 * time.Millisecond, 50 * time.Millisecond} { // fine timer, then Go timer
		go func() {
			time.Sleep(d / 4)
			wake <- struct{}{}
			w.Interrupt()
		}()
		if w.Until(frozen+int64(d), wake, nil) {
			t.Fatalf("%v: the wait ended at a moment that never came", d)
		}
	}
	// A wake already delivered ends the wait at once.
	wake <- struct{}{}
	if w.Until(frozen+int64(time.Hour), wake, nil) {
		t.Fatal("a pending wake ignored")
	}
	stop := make(chan struct{})
	go func() {
		time.Sleep(time.Millisecond)
		close(stop)
	}()
	if w.Until(frozen+int64(3*time.Millisecond), nil, stop) {
		t.Fatal("stop ignored on the fine timer's path")
	}
	if w.Until(frozen+int64(time.Second), nil, stop) {
		t.Fatal("stop ignored")
	}
}

// Every sleeper wakes at its moment, not before, and the many share one
// waiter; stop ends a wait. (How late they wake is
// BenchmarkSleeperLateness's.)
func TestSleeper(t *testing.T) {
	s := NewSleeper(mono)
	sleepers(t, s) // each sleeper checks it did not wake early
	stop := make(chan struct{})
	close(stop)
	if s.Until(mono()+int64(time.Second), stop) {
		t.Error("stop ignored")
	}
}

// BenchmarkSleeperLateness reports the median lateness of eight sleepers
// due within 10 ms of each other.
func BenchmarkSleeperLateness(b *testing.B) {
	s := NewSleeper(mono)
	var meds []time.Duration
	for b.Loop() {
		meds = append(meds, sleepers(b, s))
	}
	slices.Sort(meds)
	b.ReportMetric(float64(meds[len(meds)/2])/1e3, "p50-late-µs")
}

func sleepers(t testing.TB, s *Sleeper) time.Duration {
	var mu sync.Mutex
	var late []time.Duration
	var wg sync.WaitGroup
	base := mono() + int64(5*time.Millisecond)
	for _, off := range []int{7, 2, 5, 0, 9, 3, 3, 1} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			target := base + int64(off)*int64(time.Millisecond)
			if !s.Until(target, nil) {
				t.Error("Until returned false without stop")
			}
			now := mono()
			if now < target {
				t.Errorf("woke %v early", time.Duration(target-now))
			}
			mu.Lock()
			late = append(late, time.Duration(now-target))
			mu.Unlock()
		}()
	}
	wg.Wait()
	slices.Sort(late)
	return late[len(late)/2]
}
