package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// statusLine shows the progress of long CLI work on the last line of a
// terminal, redrawn in place every half second: a label, the time since
// the work started and the latest status. Lines written through it (the
// work's log) scroll above the status line. It is only used when stderr is
// a terminal (newStatusLine returns nil otherwise; every method of a nil
// *statusLine is a no-op and Writer returns stderr itself), so output that
// goes to a file or a pipe has no control characters in it.
type statusLine struct {
	mu     sync.Mutex
	w      io.Writer
	label  string
	status string
	start  time.Time
	shown  bool
	stop   chan struct{}
	done   chan struct{}
	closed sync.Once
}

func newStatusLine(label string) *statusLine {
	if !isTerminal(os.Stderr) {
		return nil
	}
	s := &statusLine{w: os.Stderr, label: label, start: time.Now(), stop: make(chan struct{}), done: make(chan struct{})}
	safego.Go(func() {
		defer close(s.done)
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-s.stop:
				return
			case <-t.C:
				s.mu.Lock()
				s.draw()
				s.mu.Unlock()
			}
		}
	})
	return s
}

// set replaces the status text.
func (s *statusLine) set(format string, args ...any) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.status = fmt.Sprintf(format, args...)
	s.draw()
	s.mu.Unlock()
}

// draw rewrites the status line; s.mu is held.
func (s *statusLine) draw() {
	line := fmt.Sprintf("%s  %s  %s", s.label, time.Since(s.start).Round(time.Second), s.status)
	fmt.Fprintf(s.w, "\r\x1b[K%s", strings.ReplaceAll(line, "\n", " "))
	s.shown = true
}

// clear erases the status line; s.mu is held.
func (s *statusLine) clear() {
	if s.shown {
		fmt.Fprint(s.w, "\r\x1b[K")
		s.shown = false
	}
}

// Writer is where the work's log lines go: above the status line.
func (s *statusLine) Writer() io.Writer { return s.wrap(os.Stderr) }

// wrap returns a writer to f whose lines scroll above the status line when
// f is a terminal too (stdout on the same terminal), else f itself.
func (s *statusLine) wrap(f *os.File) io.Writer {
	if s == nil || !isTerminal(f) {
		return f
	}
	return statusWriter{s: s, dst: f}
}

type statusWriter struct {
	s   *statusLine
	dst io.Writer
}

func (w statusWriter) Write(p []byte) (int, error) {
	w.s.mu.Lock()
	defer w.s.mu.Unlock()
	w.s.clear()
	n, err := w.dst.Write(p)
	w.s.draw()
	return n, err
}

// close stops redrawing and erases the status line; calls after the first
// do nothing.
func (s *statusLine) close() {
	if s == nil {
		return
	}
	s.closed.Do(func() {
		close(s.stop)
		<-s.done
		s.mu.Lock()
		s.clear()
		s.mu.Unlock()
	})
}
