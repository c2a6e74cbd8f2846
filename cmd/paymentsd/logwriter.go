package main

import (
	"io"
	"sync"
	"time"
)

// maxPendingLog is how many bytes of log lines may wait for the writer goroutine; a
// request that would go past it waits for its turn (nothing is dropped).
const maxPendingLog = 1 << 20

// The writer goroutine writes the pending lines logFlushEvery after the first of them
// came, or as soon as flushLogAt bytes are pending.
const (
	logFlushEvery = 5 * time.Millisecond
	flushLogAt    = 64 << 10
)

// logWriter hands the serve log's lines to one goroutine, which writes the lines of the
// same few milliseconds together: one system call for many lines under load, and none
// while the server is quiet. A request then spends a copy on its access-log line instead
// of a write to stderr. Lines keep their order, and Close writes everything still
// waiting; a kill -9 loses at most the lines of the last few milliseconds.
type logWriter struct {
	out     io.Writer
	mu      sync.Mutex
	pending []byte     // lines not yet taken by the writer goroutine
	taken   *sync.Cond // the writer goroutine took pending: room again
	closed  bool
	arrived chan struct{} // a token: the first line since the last write has come
	full    chan struct{} // a token: flushLogAt bytes are pending
	quit    chan struct{} // closed by Close
	stopped chan struct{} // closed once the writer goroutine has written everything
}

func newLogWriter(out io.Writer) *logWriter {
	w := &logWriter{out: out, arrived: make(chan struct{}, 1), full: make(chan struct{}, 1),
		quit: make(chan struct{}), stopped: make(chan struct{})}
	w.taken = sync.NewCond(&w.mu)
	go w.run()
	return w
}

// Write queues p, which is one log line (slog writes each record in one call). After
// Close it writes p at once.
func (w *logWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	for !w.closed && len(w.pending) > 0 && len(w.pending)+len(p) > maxPendingLog {
		w.taken.Wait()
	}
	if w.closed {
		w.mu.Unlock()
		<-w.stopped // what was queued first is written first
		return w.out.Write(p)
	}
	first := len(w.pending) == 0
	w.pending = append(w.pending, p...)
	n := len(w.pending)
	w.mu.Unlock()
	switch {
	case first:
		notify(w.arrived)
	case n >= flushLogAt:
		notify(w.full)
	}
	return len(p), nil
}

// notify leaves a token in c unless one is there already.
func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// run writes the pending lines logFlushEvery after the first of them came (sooner when
// they fill flushLogAt), until Close.
func (w *logWriter) run() {
	defer close(w.stopped)
	var spare []byte
	gather := time.NewTimer(logFlushEvery)
	gather.Stop()
	for {
		select {
		case <-w.arrived:
		case <-w.quit:
			w.flush(spare)
			return
		}
		gather.Reset(logFlushEvery) // the lines of the next few milliseconds join this one
		select {
		case <-gather.C:
		case <-w.full:
			gather.Stop()
		case <-w.quit:
			w.flush(spare)
			return
		}
		spare = w.flush(spare)
	}
}

// flush writes the pending lines, handing spare (emptied) to the writers in their place,
// and returns the buffer it wrote for the next turn.
func (w *logWriter) flush(spare []byte) []byte {
	w.mu.Lock()
	lines := w.pending
	w.pending = spare[:0]
	w.taken.Broadcast()
	w.mu.Unlock()
	if len(lines) > 0 {
		// A failed write of the log has nowhere to be reported: stderr is the report.
		w.out.Write(lines) // #nosec G104 -- see above
	}
	if cap(lines) > maxPendingLog { // a burst's buffer is not kept
		return nil
	}
	return lines
}

// Close writes the lines still pending and stops the writer goroutine; later lines are
// written at once.
func (w *logWriter) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.taken.Broadcast()
	w.mu.Unlock()
	close(w.quit)
	<-w.stopped
	return nil
}
