package activity

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
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
//
// The log keeps two tiers, each bounded on its own: info (DEBUG and INFO)
// and warnings (WARN, ERROR and any level it does not know). A flood of
// info events — a loop of connections, a chatty node — can only push out
// older info; the warnings stay until newer warnings replace them. Each
// tier has its own ring in memory and its own files on disk.
type Options struct {
	// Dir holds the log files; empty keeps the log in memory only.
	Dir string
	// RingSize is how many events each tier keeps in memory (default
	// 5000).
	RingSize int
	// RingBytes bounds each tier in memory by the size of its events as
	// JSON (default 4 MiB); the oldest go first when either bound is
	// reached.
	RingBytes int64
	// MaxEventBytes is the largest event kept as is (default 16 KiB); a
	// larger one keeps the start of its message and loses its
	// attributes, saying so in the attribute "truncated".
	MaxEventBytes int
	// MaxFileBytes rotates a file when it would grow past this size
	// (default 4 MiB).
	MaxFileBytes int64
	// Files is how many files each tier keeps, the current one included
	// (default 5): the log takes at most 2 × Files × MaxFileBytes on
	// disk.
	Files int
	// Now stamps events; nil means time.Now. The server passes its
	// executor's clock.
	Now func() time.Time
}

// FileName is the info tier's current file inside Options.Dir; rotated
// files are FileName.1 (newest) to FileName.N. WarnFileName is the
// warnings tier's, rotated the same way.
const (
	FileName     = "activity.log"
	WarnFileName = "activity-warnings.log"
)

// Tiers of the log: what is kept apart so one cannot flush the other.
const (
	tierInfo = iota
	tierWarn
	tiers
)

var fileNames = [tiers]string{FileName, WarnFileName}

// tierOf is the tier an event of level goes to: WARN and above, and
// levels the log does not know, are warnings.
func tierOf(level string) int {
	lv, err := ParseLevel(level)
	if err == nil && lv < slog.LevelWarn {
		return tierInfo
	}
	return tierWarn
}

// ring is one tier in memory: a queue of events bounded by count and by
// bytes.
type ring struct {
	evs   []sized
	head  int // index of the oldest event in evs
	bytes int64
}

type sized struct {
	e    Event
	size int
}

func (r *ring) len() int { return len(r.evs) - r.head }

// at returns the i-th newest event (0: the newest).
func (r *ring) at(i int) Event { return r.evs[len(r.evs)-1-i].e }

func (r *ring) push(e Event, size, maxEvents int, maxBytes int64) {
	r.evs = append(r.evs, sized{e, size})
	r.bytes += int64(size)
	for r.len() > 1 && (r.len() > maxEvents || r.bytes > maxBytes) {
		r.bytes -= int64(r.evs[r.head].size)
		r.evs[r.head] = sized{}
		r.head++
	}
	// Reclaim the dropped front once it is half the slice.
	if r.head > 64 && r.head*2 > len(r.evs) {
		r.evs = append(r.evs[:0:0], r.evs[r.head:]...)
		r.head = 0
	}
}

// Log is the activity log. It is safe for concurrent use.
type Log struct {
	o Options

	mu      sync.Mutex
	rings   [tiers]ring
	seq     uint64
	subs    map[int]func(Event)
	nextSub int
	closed  bool

	// The files are written by one goroutine so that logging never
	// blocks its caller on disk I/O.
	// Each tier has its own queue, so a flood of info that fills its
	// queue never makes a warning's line be dropped.
	lines       [tiers]chan []byte
	writerDone  chan struct{}
	fileDropped uint64
	fileErr     error
}

// Open starts a log, reading back the newest events of existing files so
// the log survives a restart.
func Open(o Options) (*Log, error) {
	if o.RingSize <= 0 {
		o.RingSize = 5000
	}
	if o.RingBytes <= 0 {
		o.RingBytes = 4 << 20
	}
	if o.MaxEventBytes <= 0 {
		o.MaxEventBytes = 16 << 10
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
	l := &Log{o: o, subs: map[int]func(Event){}}
	if o.Dir == "" {
		return l, nil
	}
	if err := os.MkdirAll(o.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("activity: %w", err)
	}
	l.load()
	var files [tiers]*os.File
	var sizes [tiers]int64
	for t := range tiers {
		f, size, err := l.openCurrent(t)
		if err != nil {
			for _, f := range files[:t] {
				_ = f.Close()
			}
			return nil, err
		}
		files[t], sizes[t] = f, size
	}
	l.lines = [tiers]chan []byte{make(chan []byte, 4096), make(chan []byte, 1024)}
	l.writerDone = make(chan struct{})
	go l.writeFiles(files, sizes)
	return l, nil
}

// Files lists the log files, each tier's oldest first, info before
// warnings. Export merges them in order.
func (l *Log) Files() []string {
	var out []string
	for t := range tiers {
		out = append(out, l.tierFiles(t)...)
	}
	return out
}

// tierFiles lists one tier's files, oldest first.
func (l *Log) tierFiles(t int) []string {
	if l.o.Dir == "" {
		return nil
	}
	var out []string
	for i := l.o.Files - 1; i >= 0; i-- {
		p := l.filePath(t, i)
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

func (l *Log) filePath(t, i int) string {
	p := filepath.Join(l.o.Dir, fileNames[t])
	if i > 0 {
		p += "." + strconv.Itoa(i)
	}
	return p
}

// load fills the rings from the files, read in sequence order as Export
// reads them; lines that do not parse (a torn last line after a power
// cut) are skipped. Each event goes to the tier of its level, whichever
// file held it (files from before the tiers hold both).
func (l *Log) load() {
	_ = l.mergeFiles(func(line []byte) error {
		var e Event
		if json.Unmarshal(line, &e) != nil || e.Seq == 0 {
			return nil
		}
		l.rings[tierOf(e.Level)].push(e, len(line)+1, l.o.RingSize, l.o.RingBytes)
		l.seq = max(l.seq, e.Seq)
		return nil
	})
}

func (l *Log) openCurrent(t int) (*os.File, int64, error) {
	f, err := os.OpenFile(l.filePath(t, 0), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
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

func (l *Log) writeFiles(files [tiers]*os.File, sizes [tiers]int64) {
	defer close(l.writerDone)
	lines := l.lines
	for lines[tierInfo] != nil || lines[tierWarn] != nil {
		var t int
		var line []byte
		var ok bool
		// Warnings first: they are few, and must not wait behind a flood.
		select {
		case line, ok = <-lines[tierWarn]:
			t = tierWarn
		default:
			select {
			case line, ok = <-lines[tierWarn]:
				t = tierWarn
			case line, ok = <-lines[tierInfo]:
				t = tierInfo
			}
		}
		if !ok {
			lines[t] = nil // closed: a nil channel is never ready
			continue
		}
		if files[t] == nil {
			continue // this tier's file could not be reopened
		}
		if sizes[t] > 0 && sizes[t]+int64(len(line)) > l.o.MaxFileBytes {
			_ = files[t].Close()
			l.rotate(t)
			var err error
			if files[t], sizes[t], err = l.openCurrent(t); err != nil {
				l.setFileErr(err)
				files[t] = nil
				continue
			}
		}
		n, err := files[t].Write(line)
		sizes[t] += int64(n)
		if err != nil {
			l.setFileErr(err)
		}
	}
	for _, f := range files {
		if f != nil {
			_ = f.Sync()
			_ = f.Close()
		}
	}
}

// rotate shifts tier t's FileName.i to FileName.i+1, dropping the oldest.
func (l *Log) rotate(t int) {
	_ = os.Remove(l.filePath(t, l.o.Files-1))
	for i := l.o.Files - 2; i >= 0; i-- {
		_ = os.Rename(l.filePath(t, i), l.filePath(t, i+1))
	}
}

func (l *Log) setFileErr(err error) {
	l.mu.Lock()
	l.fileErr = err
	l.mu.Unlock()
}

// Close flushes the files and stops the writer. Events appended after
// Close stay in memory only.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	err := l.fileErr
	l.mu.Unlock()
	if l.writerDone != nil {
		for _, ch := range l.lines {
			close(ch)
		}
		<-l.writerDone
	}
	return err
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
	t := tierOf(e.Level)
	l.mu.Lock()
	l.seq++
	e.Seq = l.seq
	line := l.encode(&e)
	l.rings[t].push(e, len(line), l.o.RingSize, l.o.RingBytes)
	if l.writerDone != nil && !l.closed {
		select {
		case l.lines[t] <- line:
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

// encode returns e as a JSON line, first cutting an event over
// MaxEventBytes down to the start of its message.
func (l *Log) encode(e *Event) []byte {
	line, _ := json.Marshal(e)
	if len(line) < l.o.MaxEventBytes {
		return append(line, '\n')
	}
	keep := l.o.MaxEventBytes / 2
	if len(e.Message) > keep {
		// Cut on a rune boundary so the message stays valid UTF-8.
		for keep > 0 && !utf8.RuneStart(e.Message[keep]) {
			keep--
		}
		e.Message = e.Message[:keep] + "…"
	}
	e.Attrs = map[string]string{"truncated": strconv.Itoa(len(line)) + " bytes"}
	line, _ = json.Marshal(e)
	return append(line, '\n')
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
// all (for paging). The tiers are merged by sequence number.
func (l *Log) Query(f Filter) (events []Event, total int) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	events = []Event{}
	var pos [tiers]int // next (newest first) index into each ring
	for {
		// Take the newer of the tiers' next events.
		best := -1
		for t := range tiers {
			if pos[t] < l.rings[t].len() && (best < 0 || l.rings[t].at(pos[t]).Seq > l.rings[best].at(pos[best]).Seq) {
				best = t
			}
		}
		if best < 0 {
			return events, total
		}
		e := l.rings[best].at(pos[best])
		pos[best]++
		if !f.Match(e) {
			continue
		}
		if total >= f.Offset && len(events) < f.Limit {
			events = append(events, e)
		}
		total++
	}
}

// Stats reports how many events the file writer had to drop because the
// disk was behind, and the last file error.
func (l *Log) Stats() (fileDropped uint64, fileErr error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fileDropped, l.fileErr
}

// Export writes every event the files hold, oldest first, as JSON lines:
// the tiers' files merged by sequence number, so a download reads as one
// log. Without files (no Dir) it writes what the rings hold.
func (l *Log) Export(w io.Writer) error {
	if l.o.Dir == "" {
		evs, _ := l.Query(Filter{Limit: math.MaxInt})
		for i := len(evs) - 1; i >= 0; i-- {
			b, _ := json.Marshal(evs[i])
			if _, err := w.Write(append(b, '\n')); err != nil {
				return err
			}
		}
		return nil
	}
	return l.mergeFiles(func(line []byte) error {
		_, err := w.Write(append(line, '\n'))
		return err
	})
}

// mergeFiles calls f with each line of the files, the tiers merged by
// sequence number, until f fails.
func (l *Log) mergeFiles(f func(line []byte) error) error {
	var srcs [tiers]*lineSource
	for t := range tiers {
		srcs[t] = &lineSource{paths: l.tierFiles(t)}
		defer srcs[t].close()
		srcs[t].next()
	}
	for {
		best := -1
		for t, s := range srcs {
			if s.line != nil && (best < 0 || s.seq < srcs[best].seq) {
				best = t
			}
		}
		if best < 0 {
			return nil
		}
		if err := f(srcs[best].line); err != nil {
			return err
		}
		srcs[best].next()
	}
}

// lineSource reads the events of a list of files in order, one line at a
// time; line is nil at the end.
type lineSource struct {
	paths []string
	f     *os.File
	sc    *bufio.Scanner
	line  []byte
	seq   uint64
}

func (s *lineSource) next() {
	s.line = nil
	for {
		for s.sc == nil {
			if len(s.paths) == 0 {
				return
			}
			f, err := os.Open(s.paths[0])
			s.paths = s.paths[1:]
			if err != nil {
				continue
			}
			s.f, s.sc = f, bufio.NewScanner(f)
			s.sc.Buffer(make([]byte, 64<<10), 1<<20)
		}
		if !s.sc.Scan() {
			s.close()
			continue
		}
		var head struct {
			Seq uint64 `json:"seq"`
		}
		// A torn line (power cut) is skipped, as load does.
		if json.Unmarshal(s.sc.Bytes(), &head) != nil || head.Seq == 0 {
			continue
		}
		s.line, s.seq = append([]byte(nil), s.sc.Bytes()...), head.Seq
		return
	}
}

func (s *lineSource) close() {
	if s.f != nil {
		_ = s.f.Close()
	}
	s.f, s.sc = nil, nil
}
