package pace

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var epoch = time.Now()

func mono() int64 { return int64(time.Since(epoch)) }

// The waiter wakes within a few hundred microseconds of the moment at the
// median, where a Go timer is a millisecond late (retried: load only
// delays).
func TestWaiterPrecision(t *testing.T) {
	w := NewWaiter(mono)
	defer w.Close()
	for attempt := 0; ; attempt++ {
		var late []time.Duration
		for _, d := range []time.Duration{50 * time.Microsecond, 300 * time.Microsecond, 2 * time.Millisecond, 7 * time.Millisecond} {
			for range 10 {
				target := mono() + int64(d)
				if !w.Until(target, nil, nil) {
					t.Fatal("Until returned false without wake or stop")
				}
				late = append(late, time.Duration(mono()-target))
			}
		}
		slices.Sort(late)
		if late[0] < 0 {
			t.Fatalf("woke %v early", -late[0])
		}
		limit := 300 * time.Microsecond
		if raceEnabled {
			limit *= 10
		}
		if med := late[len(late)/2]; med < limit {
			return
		} else if attempt == 2 {
			t.Fatalf("median lateness %v (all: %v)", med, late)
		}
	}
}

func TestWaiterWakeAndStop(t *testing.T) {
	w := NewWaiter(mono)
	defer w.Close()
	wake := make(chan struct{}, 1)
	stop := make(chan struct{})
	for _, d := range []time.Duration{3 * time.Millisecond, 50 * time.Millisecond} { // fine timer, then Go timer
		target := mono() + int64(d)
		var sent atomic.Int64
		go func() {
			time.Sleep(d / 4)
			sent.Store(mono())
			wake <- struct{}{}
			w.Interrupt()
		}()
		if w.Until(target, wake, stop) {
			// Only a wake that came too late (a loaded machine) may let
			// the wait run to its end.
			for sent.Load() == 0 {
				time.Sleep(time.Millisecond)
			}
			if sent.Load() < target {
				t.Fatalf("%v: not woken", d)
			}
			<-wake
		} else if now := mono(); now > target+int64(time.Millisecond) && sent.Load() < target {
			t.Errorf("%v: woken %v after the moment", d, time.Duration(now-target))
		}
	}
	close(stop)
	if w.Until(mono()+int64(time.Second), nil, stop) {
		t.Fatal("stop ignored")
	}
}

// Every sleeper wakes at its moment, not before, and the many share one
// precise wait (retried: a loaded machine only delays).
func TestSleeper(t *testing.T) {
	s := NewSleeper(mono)
	for attempt := 0; attempt < 3; attempt++ {
		limit := 2 * time.Millisecond
		if raceEnabled {
			limit *= 10
		}
		if med := sleepers(t, s); med <= limit {
			break
		} else if attempt == 2 {
			t.Errorf("median lateness %v", med)
		}
	}
	stop := make(chan struct{})
	close(stop)
	if s.Until(mono()+int64(time.Second), stop) {
		t.Error("stop ignored")
	}
}

func sleepers(t *testing.T, s *Sleeper) time.Duration {
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
