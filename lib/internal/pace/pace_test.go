package pace

import (
	"slices"
	"sync"
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
		if med := late[len(late)/2]; med < 300*time.Microsecond {
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
		time.AfterFunc(d/4, func() { wake <- struct{}{}; w.Interrupt() })
		begin := time.Now()
		if w.Until(mono()+int64(d), wake, stop) {
			t.Fatalf("%v: not woken", d)
		}
		if el := time.Since(begin); el > d {
			t.Errorf("%v: woken after %v", d, el)
		}
	}
	close(stop)
	if w.Until(mono()+int64(time.Second), nil, stop) {
		t.Fatal("stop ignored")
	}
}

// Every sleeper wakes at its moment, not before, and the many share one
// precise wait.
func TestSleeper(t *testing.T) {
	s := NewSleeper(mono)
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
	if med := late[len(late)/2]; med > 2*time.Millisecond {
		t.Errorf("median lateness %v: %v", med, late)
	}
	stop := make(chan struct{})
	close(stop)
	if s.Until(mono()+int64(time.Second), stop) {
		t.Error("stop ignored")
	}
}
