package main

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the writer goroutine and the test to share.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Every line reaches the output once, each writer's lines in the order written, and
// Close writes what is still pending; lines written after Close go out at once.
func TestLogWriterKeepsEveryLineInOrder(t *testing.T) {
	var out syncBuffer
	w := newLogWriter(&out)
	const writers, lines = 8, 2000
	var wg sync.WaitGroup
	for g := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range lines {
				fmt.Fprintf(w, "%d %d %s\n", g, i, strings.Repeat("x", i%300))
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(w, "after close\n")

	next := make([]int, writers)
	got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
	if len(got) != writers*lines+1 {
		t.Fatalf("%d lines, want %d", len(got), writers*lines+1)
	}
	for _, line := range got[:len(got)-1] {
		var g, i int
		if _, err := fmt.Sscanf(line, "%d %d", &g, &i); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		if i != next[g] {
			t.Fatalf("writer %d: line %d where %d was due", g, i, next[g])
		}
		next[g]++
	}
	if last := got[len(got)-1]; last != "after close" {
		t.Errorf("last line %q, want the line written after Close", last)
	}
}

// A quiet server's line does not wait for Close: the writer goroutine writes it on its
// next turn.
func TestLogWriterWritesWithoutClose(t *testing.T) {
	var out syncBuffer
	w := newLogWriter(&out)
	defer w.Close()
	fmt.Fprintf(w, "one line\n")
	deadline := time.Now().Add(10 * time.Second)
	for out.String() != "one line\n" {
		if time.Now().After(deadline) {
			t.Fatalf("after 10s the output holds %q", out.String())
		}
		time.Sleep(time.Millisecond)
	}
}

// A writer that cannot keep up makes the loggers wait once a megabyte is pending; nothing
// is dropped.
func TestLogWriterWaitsWhenFull(t *testing.T) {
	release := make(chan struct{})
	var out syncBuffer
	w := newLogWriter(writerFunc(func(p []byte) (int, error) {
		<-release
		return out.Write(p)
	}))
	line := strings.Repeat("y", 1023) + "\n"
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 4 * maxPendingLog / len(line) { // four megabytes: past the limit
			w.Write([]byte(line))
		}
	}()
	select {
	case <-done:
		t.Fatal("4 MB of lines were taken while the output was blocked")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-done
	w.Close()
	if got, want := len(out.String()), 4*maxPendingLog/len(line)*len(line); got != want {
		t.Errorf("%d bytes written, want %d", got, want)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
