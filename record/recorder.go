package record

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
)

// AllTopics is the filter a Recorder subscribes to by default: every topic
// of the robot.
const AllTopics = "/saint/#"

// Options configures a Recorder.
type Options struct {
	// Bus and Exec are where the recorder subscribes; messages are stamped
	// with Exec's clock when they are handled (required).
	Bus  bus.Bus
	Exec *executor.Executor
	// File is the file to write. With Dir set instead, files are named
	// saint-YYYYMMDD-HHMMSS.mcap (the first message's time, with a
	// suffix -1, -2 ... if that file exists) inside it,
	// and a new one begins when MaxBytes or MaxDuration is reached.
	File string
	Dir  string
	// MaxBytes and MaxDuration roll over to a new file (Dir only); zero
	// means no limit. MaxBytes counts compressed bytes on disk, so a
	// file may exceed it by up to one chunk.
	MaxBytes    int64
	MaxDuration time.Duration
	// Topics are the filters to record (default AllTopics).
	Topics []string
	// Writer configures each file (encodings, chunk size, flush period).
	Writer WriterOptions
	// Queue is how many messages may wait for the writer (default
	// 65536); beyond that, messages are dropped and counted, so a slow
	// disk never stalls the executor.
	Queue int
	// QueueBytes bounds the memory the waiting messages hold (default
	// 256 MiB): 65536 queued camera frames would be 60 GB. A message
	// that would take the queue past it is dropped and counted like one
	// past Queue; one message is always let in, however large.
	QueueBytes int64
	// Lossless makes a full queue wait for the writer instead of
	// dropping: for virtual-clock runs (the simulator, scenarios), where
	// waiting only slows the simulation down against the wall clock,
	// never the robot against its own time.
	Lossless bool
	Log      *slog.Logger
}

// Recorder writes bus topics to MCAP files until Stop. The subscription
// handlers only stamp and queue a message; a goroutine of the recorder
// encodes and writes.
type Recorder struct {
	o    Options
	subs []bus.Subscription
	done chan struct{}

	// inMu guards sending on in against its closing, apart from mu,
	// which the writer holds during disk writes.
	inMu    sync.Mutex
	in      chan entry
	closed  bool
	dropped atomic.Uint64
	// queued is the size of the messages in in; room is signalled each
	// time the writer takes one out, for a Lossless handler waiting on
	// QueueBytes.
	queued atomic.Int64
	room   chan struct{}

	mu      sync.Mutex
	cur     *Writer
	files   []string
	total   uint64
	err     error
	stopped bool
	// broken is set when a file could not be written: the recording has
	// failed and takes nothing more.
	broken bool
}

// entry is a message to write: its JSON (data) or, for the types taken
// as values in process (valueTypes), a copy of its value (val).
type entry struct {
	topic string
	data  []byte
	val   any
	t     time.Time
}

// entryOverhead is what a queued message costs beyond its bytes: the
// entry, its topic and, for a value, the value's other fields.
const entryOverhead = 128

// size is what e holds in memory while it waits for the writer.
func (e entry) size() int64 {
	n := int64(len(e.data)) + entryOverhead
	if img, ok := e.val.(*msg.Image); ok {
		n += int64(len(img.Data))
	}
	return n
}

// valueTypes are the message types a Recorder takes as values in process
// (bus.SubscribeValuesOf): camera frames, whose JSON (base64 pixels) the
// publisher would otherwise make on its executor for the recording alone,
// and the writer read back, to store CDR that is a header and the pixels.
func valueTypes() []reflect.Type { return []reflect.Type{reflect.TypeFor[msg.Image]()} }

// Status describes a running or stopped recording.
type Status struct {
	Recording bool     `json:"recording"`
	File      string   `json:"file,omitempty"`
	Files     []string `json:"files"`
	Messages  uint64   `json:"messages"`
	Dropped   uint64   `json:"dropped"`
	// Queued is the memory (bytes) the messages waiting for the writer
	// hold: at most Options.QueueBytes, or one message's if that alone
	// is larger.
	Queued int64  `json:"queued_bytes"`
	Bytes  int64  `json:"bytes"`
	Error  string `json:"error,omitempty"`
}

// Start opens the first file and subscribes. Call it on Exec's goroutine
// or before Exec runs.
func Start(o Options) (*Recorder, error) {
	if o.Bus == nil || o.Exec == nil {
		return nil, errors.New("record: Options.Bus and Options.Exec are required")
	}
	if (o.File == "") == (o.Dir == "") {
		return nil, errors.New("record: give exactly one of Options.File and Options.Dir")
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if len(o.Topics) == 0 {
		o.Topics = []string{AllTopics}
	}
	if o.Queue <= 0 {
		o.Queue = 1 << 16
	}
	if o.QueueBytes <= 0 {
		o.QueueBytes = 256 << 20
	}
	if o.Dir != "" {
		if err := os.MkdirAll(o.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("record: %w", err)
		}
	} else if err := os.MkdirAll(filepath.Dir(o.File), 0o755); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	r := &Recorder{o: o, in: make(chan entry, o.Queue), done: make(chan struct{}), room: make(chan struct{}, 1)}
	if o.File != "" {
		// Fail now, not at the first message, when the file cannot be made.
		w, err := Create(o.File, &o.Writer)
		if err != nil {
			return nil, err
		}
		r.cur = w
		r.files = append(r.files, w.Path())
	}
	for _, t := range o.Topics {
		sub, err := bus.SubscribeValuesOf(o.Bus, t, bus.QoS{Depth: o.Queue}, o.Exec, r.handle, valueTypes()...)
		if err != nil {
			r.unsubscribe()
			if r.cur != nil {
				_ = r.cur.Close()
			}
			return nil, fmt.Errorf("record: %w", err)
		}
		r.subs = append(r.subs, sub)
	}
	go r.loop()
	o.Log.Info("recording", "source", "record", "file", o.File, "dir", o.Dir, "topics", o.Topics)
	return r, nil
}

func (r *Recorder) handle(m bus.Msg) {
	r.inMu.Lock()
	defer r.inMu.Unlock()
	if r.closed {
		return
	}
	e := entry{m.Topic, m.Data, m.Value(), r.o.Exec.Now()}
	size := e.size()
	if r.o.Lossless {
		// Wait for the writer to make room; a signal on room follows
		// every decrement of queued, so none is missed between the
		// check and the wait.
		for q := r.queued.Load(); q > 0 && q+size > r.o.QueueBytes; q = r.queued.Load() {
			<-r.room
		}
		r.queued.Add(size)
		r.in <- e
		return
	}
	if q := r.queued.Load(); q > 0 && q+size > r.o.QueueBytes {
		r.dropped.Add(1)
		return
	}
	r.queued.Add(size)
	select {
	case r.in <- e:
	default:
		r.queued.Add(-size)
		r.dropped.Add(1)
	}
}

func (r *Recorder) unsubscribe() {
	for _, s := range r.subs {
		_ = s.Unsubscribe()
	}
	r.subs = nil
}

func (r *Recorder) loop() {
	defer close(r.done)
	for e := range r.in {
		r.write(e)
		r.queued.Add(-e.size())
		select {
		case r.room <- struct{}{}:
		default:
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cur != nil {
		if err := r.cur.Close(); err != nil && r.err == nil {
			r.err = err
		}
		r.cur = nil
	}
}

func (r *Recorder) write(e entry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.broken {
		r.dropped.Add(1)
		return
	}
	if r.cur != nil && r.o.Dir != "" && r.full(e.t) {
		if err := r.cur.Close(); err != nil {
			r.fail(err)
		}
		r.cur = nil
	}
	if r.cur == nil {
		if r.o.File != "" {
			return // the single file failed; fail logged it
		}
		// Never overwrite: a file of a past run, or of this one rolled
		// within the same second, gets a suffix.
		base := filepath.Join(r.o.Dir, "saint-"+e.t.UTC().Format("20060102-150405"))
		name := base + ".mcap"
		for n := 1; fileExists(name); n++ {
			name = fmt.Sprintf("%s-%d.mcap", base, n)
		}
		w, err := Create(name, &r.o.Writer)
		if err != nil {
			r.fail(err)
			return
		}
		r.cur = w
		r.files = append(r.files, name)
		r.o.Log.Info("recording to a new file", "source", "record", "file", name)
	}
	var err error
	if e.val != nil {
		err = r.cur.WriteValue(e.topic, e.val, e.t)
	} else {
		err = r.cur.Write(e.topic, e.data, e.t)
	}
	if err != nil {
		if r.cur.Err() != nil {
			// The file cannot be written: stop here, keeping what is
			// on disk (readable up to its last complete chunk).
			r.fail(err)
			_ = r.cur.Close()
			r.cur = nil
			r.broken = true
			return
		}
		r.o.Log.Warn("recording: topic skipped", "source", "record", "topic", e.topic, "err", err)
		return
	}
	r.total++
}

// full reports whether the current file has reached a limit.
func (r *Recorder) full(t time.Time) bool {
	if r.o.MaxBytes > 0 && r.cur.Size() >= r.o.MaxBytes {
		return true
	}
	st := r.cur.Stats()
	return r.o.MaxDuration > 0 && st.Messages > 0 && t.Sub(st.Start) >= r.o.MaxDuration
}

func (r *Recorder) fail(err error) {
	if r.err == nil {
		r.err = err
	}
	r.o.Log.Error("recording failed", "source", "record", "err", err)
}

// Stop unsubscribes, writes what is queued, and closes the file; it waits
// for the writer. It may be called from any goroutine, more than once.
func (r *Recorder) Stop() error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		<-r.done
		return r.err
	}
	r.stopped = true
	r.mu.Unlock()
	r.unsubscribe()
	r.inMu.Lock()
	r.closed = true
	close(r.in)
	r.inMu.Unlock()
	<-r.done
	st := r.Status()
	r.o.Log.Info("recording stopped", "source", "record", "files", st.Files, "messages", st.Messages, "dropped", st.Dropped)
	return r.err
}

// Status reports the recording's files and counts; safe from any
// goroutine.
func (r *Recorder) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := Status{Recording: !r.stopped, Files: append([]string{}, r.files...), Messages: r.total, Dropped: r.dropped.Load(), Queued: r.queued.Load()}
	if r.cur != nil {
		s.File = r.cur.Path()
		s.Bytes = r.cur.Size()
	}
	if r.err != nil {
		s.Error = r.err.Error()
	}
	return s
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}
