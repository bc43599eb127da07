package activity

import (
	"bufio"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Event is one activity log entry. JSON names are the API's.
type Event struct {
	// Seq increases by one per event, across restarts; clients resume a
	// stream with it.
	Seq     uint64            `json:"seq"`
	Time    time.Time         `json:"time"`
	Level   string            `json:"level"`  // DEBUG, INFO, WARN, ERROR
	Source  string            `json:"source"` // adoption, router, rc, system ...
	Node    string            `json:"node,omitempty"`
	Message string            `json:"message"`
	Attrs   map[string]string `json:"attrs,omitempty"`
}

// Options configures a Log. Zero values pick the defaults.
type Options struct {
	// Dir holds the log files; empty keeps the log in memory only.
	Dir string
	// RingSize is how many events the log keeps in memory (default 5000).
	RingSize int
	// MaxFileBytes rotates the file when it would grow past this size
	// (default 4 MiB).
	MaxFileBytes int64
	// Files is how many files are kept, the current one included
	// (default 5).
	Files int
	// Now stamps events; nil means time.Now. The server passes its
	// executor's clock.
	Now func() time.Time
}

// FileName is the current log file inside Options.Dir; rotated files are
// FileName.1 (newest) to FileName.N.
const FileName = "activity.log"

// Log is the activity log. It is safe for concurrent use.
type Log struct {
	o Options

	mu      sync.Mutex
	ring    []Event // ring buffer of the newest events
	next    int     // ring index of the next write
	full    bool
	seq     uint64
	subs    map[int]func(Event)
	nextSub int
	closed  bool

	// The file is written by one goroutine so that logging never blocks
	// its caller on disk I/O.
	lines       chan []byte
	writerDone  chan struct{}
	fileDropped uint64
	fileErr     error
}

// Open starts a log, reading back the newest events of an existing file so
// the log survives a restart.
func Open(o Options) (*Log, error) {
	if o.RingSize <= 0 {
		o.RingSize = 5000
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = 4 << 20
	}
	if o.Files <= 0 {
		o.Files = 5
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	l := &Log{o: o, ring: make([]Event, o.RingSize), subs: map[int]func(Event){}}
	if o.Dir == "" {
		return l, nil
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("activity: %w", err)
	}
	l.load()
	f, size, err := l.openCurrent()
	if err != nil {
		return nil, err
	}
	l.lines = make(chan []byte, 4096)
	l.writerDone = make(chan struct{})
	go l.writeFile(f, size)
	return l, nil
}

// Files lists the log files, oldest first.
func (l *Log) Files() []string {
	if l.o.Dir == "" {
		return nil
	}
	var out []string
	for i := l.o.Files - 1; i >= 0; i-- {
		p := l.filePath(i)
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func (l *Log) filePath(i int) string {
	p := filepath.Join(l.o.Dir, FileName)
	if i > 0 {
		p += "." + strconv.Itoa(i)
	}
	return p
}

// load fills the ring from the files, oldest first; lines that do not
// parse (a torn last line after a power cut) are skipped.
func (l *Log) load() {
	for _, p := range l.Files() {
		f, err := os.Open(p)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var e Event
			if json.Unmarshal(sc.Bytes(), &e) != nil || e.Seq == 0 {
				continue
			}
			l.put(e)
			if e.Seq > l.seq {
				l.seq = e.Seq
			}
		}
		_ = f.Close()
	}
}

func (l *Log) openCurrent() (*os.File, int64, error) {
	f, err := os.OpenFile(l.filePath(0), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, 0, fmt.Errorf("activity: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, fmt.Errorf("activity: %w", err)
	}
	return f, fi.Size(), nil
}

func (l *Log) writeFile(f *os.File, size int64) {
	defer close(l.writerDone)
	for line := range l.lines {
		if size > 0 && size+int64(len(line)) > l.o.MaxFileBytes {
			_ = f.Close()
			l.rotate()
			var err error
			if f, size, err = l.openCurrent(); err != nil {
				l.setFileErr(err)
				for range l.lines { // keep draining so Append never blocks
				}
				return
			}
		}
		n, err := f.Write(line)
		size += int64(n)
		if err != nil {
			l.setFileErr(err)
		}
	}
	_ = f.Sync()
	_ = f.Close()
}

// rotate shifts FileName.i to FileName.i+1, dropping the oldest.
func (l *Log) rotate() {
	_ = os.Remove(l.filePath(l.o.Files - 1))
	for i := l.o.Files - 2; i >= 0; i-- {
		_ = os.Rename(l.filePath(i), l.filePath(i+1))
	}
}

func (l *Log) setFileErr(err error) {
	l.mu.Lock()
	l.fileErr = err
	l.mu.Unlock()
}

// Close flushes the file and stops the writer. Events appended after Close
// stay in memory only.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	err := l.fileErr
	l.mu.Unlock()
	if l.lines != nil {
		close(l.lines)
		<-l.writerDone
	}
	return err
}

func (l *Log) put(e Event) {
	l.ring[l.next] = e
	l.next++
	if l.next == len(l.ring) {
		l.next, l.full = 0, true
	}
}

// Add records an event. Seq is assigned; a zero Time is stamped with the
// log's clock; an empty Level is INFO and an empty Source "server".
func (l *Log) Add(e Event) Event {
	if e.Time.IsZero() {
		e.Time = l.o.Now()
	}
	if e.Level == "" {
		e.Level = slog.LevelInfo.String()
	}
	if e.Source == "" {
		e.Source = "server"
	}
	l.mu.Lock()
	l.seq++
	e.Seq = l.seq
	l.put(e)
	if l.lines != nil && !l.closed {
		line, _ := json.Marshal(e)
		select {
		case l.lines <- append(line, '\n'):
		default:
			l.fileDropped++ // the disk is behind; the ring still has it
		}
	}
	subs := make([]func(Event), 0, len(l.subs))
	for _, f := range l.subs {
		subs = append(subs, f)
	}
	l.mu.Unlock()
	for _, f := range subs {
		f(e)
	}
	return e
}

// Subscribe calls f with every new event, on the adding goroutine; f must
// not block. The returned function ends the subscription.
func (l *Log) Subscribe(f func(Event)) (cancel func()) {
	l.mu.Lock()
	id := l.nextSub
	l.nextSub++
	l.subs[id] = f
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.subs, id)
		l.mu.Unlock()
	}
}

// Filter selects events for Query. Zero fields match everything.
type Filter struct {
	Limit  int    // at most this many (0: 100)
	Offset int    // skip this many of the newest matches first
	Level  string // minimum level: DEBUG, INFO, WARN, ERROR
	Source string // exact, case-insensitive
	Node   string // exact
	Search string // substring of the message, case-insensitive
	// AfterSeq keeps only events newer than this sequence number.
	AfterSeq uint64
}

// ParseLevel reads a level name (DEBUG, INFO, WARN/WARNING, ERROR, any
// case).
func ParseLevel(s string) (slog.Level, error) {
	var lv slog.Level
	if strings.EqualFold(s, "warning") {
		s = "WARN"
	}
	if err := lv.UnmarshalText([]byte(s)); err != nil {
		return 0, fmt.Errorf("want DEBUG, INFO, WARN or ERROR, got %q", s)
	}
	return lv, nil
}

// Match reports whether e passes f (Limit and Offset aside). A filter
// with a level that does not parse matches nothing; check it with
// ParseLevel first.
func (f Filter) Match(e Event) bool {
	if f.Level != "" {
		min, err := ParseLevel(f.Level)
		lv, err2 := ParseLevel(e.Level)
		if err != nil || err2 != nil || lv < min {
			return false
		}
	}
	if f.Source != "" && !strings.EqualFold(f.Source, e.Source) {
		return false
	}
	if f.Node != "" && f.Node != e.Node {
		return false
	}
	if f.Search != "" && !strings.Contains(strings.ToLower(e.Message), strings.ToLower(f.Search)) {
		return false
	}
	return e.Seq > f.AfterSeq
}

// Query returns the matching events, newest first, and how many match in
// all (for paging).
func (l *Log) Query(f Filter) (events []Event, total int) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.next
	if l.full {
		n = len(l.ring)
	}
	events = []Event{}
	for i := 0; i < n; i++ {
		idx := (l.next - 1 - i + len(l.ring)) % len(l.ring)
		e := l.ring[idx]
		if !f.Match(e) {
			continue
		}
		if total >= f.Offset && len(events) < f.Limit {
			events = append(events, e)
		}
		total++
	}
	return events, total
}

// Stats reports how many events the file writer had to drop because the
// disk was behind, and the last file error.
func (l *Log) Stats() (fileDropped uint64, fileErr error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fileDropped, l.fileErr
}
