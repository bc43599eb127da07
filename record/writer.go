package record

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/foxglove/mcap/go/mcap"
)

// Defaults of the writer's options.
const (
	DefaultChunkBytes = 512 << 10
	DefaultFlushEvery = time.Second
)

// WriterOptions configures a Writer. The zero value is usable.
type WriterOptions struct {
	// Encoding chooses each topic's encoding; nil means DefaultEncoding.
	Encoding func(topic string) Encoding
	// ChunkBytes closes a chunk once it holds this many uncompressed
	// bytes (default DefaultChunkBytes).
	ChunkBytes int64
	// FlushEvery closes a chunk once it spans this much log time (default
	// DefaultFlushEvery): at most this much is lost when the process is
	// killed. A negative value closes chunks by size only.
	FlushEvery time.Duration
	// Profile is the MCAP header's profile ("" as no ROS 2 profile applies
	// to JSON channels).
	Profile string
	// Metadata is written as a "saint" metadata record at the start.
	Metadata map[string]string
}

func (o *WriterOptions) defaults() {
	if o.Encoding == nil {
		o.Encoding = DefaultEncoding
	}
	if o.ChunkBytes <= 0 {
		o.ChunkBytes = DefaultChunkBytes
	}
	if o.FlushEvery == 0 {
		o.FlushEvery = DefaultFlushEvery
	}
}

// Writer writes bus messages to one MCAP file. It is not safe for
// concurrent use: one goroutine writes.
type Writer struct {
	o     WriterOptions
	f     *os.File
	mw    *mcap.Writer
	mopts *mcap.WriterOptions
	path  string

	channels   map[string]*channel
	nextID     uint16
	chunkStart uint64 // log time of the open chunk's first message, 0 when none
	first      uint64
	last       uint64
	messages   uint64
	chunks     uint32
	// failed is the file's first write error; after it the file is left
	// as it is and every Write returns it.
	failed  error
	skipped uint64
}

type channel struct {
	id     uint16
	seq    uint32
	encode func([]byte) ([]byte, error)
	// encodeValue is ChannelSpec.EncodeValue, for WriteValue.
	encodeValue func(any) ([]byte, error)
	err         error // the topic could not be described; its messages are skipped
}

// Create creates (or truncates) path and writes the MCAP header.
func Create(path string, o *WriterOptions) (*Writer, error) {
	var opts WriterOptions
	if o != nil {
		opts = *o
	}
	opts.defaults()
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	// No buffering between the MCAP writer and the file: a chunk, once
	// closed, is in the kernel and survives the process being killed.
	mopts := &mcap.WriterOptions{
		Chunked: true, ChunkSize: opts.ChunkBytes, Compression: mcap.CompressionZSTD, IncludeCRC: true,
	}
	mw, err := mcap.NewWriter(f, mopts)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("record: %s: %w", path, err)
	}
	w := &Writer{o: opts, f: f, mw: mw, mopts: mopts, path: path, channels: map[string]*channel{}, nextID: 1}
	if err := mw.WriteHeader(&mcap.Header{Profile: opts.Profile, Library: "saint-os record"}); err != nil {
		f.Close()
		return nil, fmt.Errorf("record: %s: %w", path, err)
	}
	if len(opts.Metadata) > 0 {
		if err := mw.WriteMetadata(&mcap.Metadata{Name: "saint", Metadata: opts.Metadata}); err != nil {
			f.Close()
			return nil, fmt.Errorf("record: %s: %w", path, err)
		}
	}
	return w, nil
}

// Path is the file being written.
func (w *Writer) Path() string { return w.path }

// Write appends one message of topic, logged at t. A topic whose first
// message its Encoding cannot describe is skipped (counted in Skipped) and
// the error returned once.
func (w *Writer) Write(topic string, payload []byte, t time.Time) error {
	return w.write(topic, payload, nil, t)
}

// WriteValue is Write for a message that arrived as a value rather than
// JSON (bus.Msg.Value: a camera frame published in process): a channel
// whose ChannelSpec has EncodeValue stores it without making its JSON;
// any other takes the value's JSON.
func (w *Writer) WriteValue(topic string, v any, t time.Time) error {
	return w.write(topic, nil, v, t)
}

// write appends a message given as its JSON (payload) or as a value (v).
func (w *Writer) write(topic string, payload []byte, v any, t time.Time) error {
	if w.failed != nil {
		return w.failed
	}
	ch := w.channels[topic]
	toJSON := func() error {
		if v == nil || payload != nil {
			return nil
		}
		var err error
		if payload, err = json.Marshal(v); err != nil {
			w.skipped++
			return fmt.Errorf("record: %s: %w", topic, err)
		}
		return nil
	}
	if ch == nil {
		// A new topic is described from its first message's JSON.
		if err := toJSON(); err != nil {
			return err
		}
		var err error
		if ch, err = w.channel(topic, payload); err != nil {
			return err
		}
	}
	if ch.err != nil {
		w.skipped++
		return nil
	}
	var data []byte
	var err error
	switch {
	case v != nil && ch.encodeValue != nil:
		data, err = ch.encodeValue(v)
	default:
		if err = toJSON(); err != nil {
			return err
		}
		data = payload
		if ch.encode != nil {
			data, err = ch.encode(payload)
		}
	}
	if err != nil {
		w.skipped++
		return fmt.Errorf("record: %s: %w", topic, err)
	}
	ns := uint64(t.UnixNano())
	// A chunk that has spanned FlushEvery is closed after this message:
	// v1.7.2 of the MCAP writer has no chunk flush of its own but checks
	// the options it was given, which it keeps, after every message.
	flush := w.o.FlushEvery > 0 && w.chunkStart != 0 && ns-w.chunkStart >= uint64(w.o.FlushEvery)
	if flush {
		w.mopts.ChunkSize = 0
	}
	ch.seq++
	err = w.mw.WriteMessage(&mcap.Message{ChannelID: ch.id, Sequence: ch.seq, LogTime: ns, PublishTime: ns, Data: data})
	if flush {
		w.mopts.ChunkSize = w.o.ChunkBytes
	}
	if err != nil {
		return w.fail(err)
	}
	if w.messages == 0 {
		w.first = ns
	}
	w.messages++
	w.last = ns
	if n := w.mw.Statistics.ChunkCount; n != w.chunks {
		// This message closed the chunk; the next one opens a new one.
		w.chunks = n
		w.chunkStart = 0
	} else if w.chunkStart == 0 {
		w.chunkStart = ns
	}
	return nil
}

// Stats is what a Writer has written so far.
type Stats struct {
	Path     string
	Messages uint64
	Channels int
	// Chunks is the number of closed chunks, the part of the file that
	// survives a crash.
	Chunks uint32
	// Skipped counts messages of topics that could not be encoded.
	Skipped    uint64
	Start, End time.Time
}

// Stats reports what was written.
func (w *Writer) Stats() Stats {
	s := Stats{Path: w.path, Messages: w.messages, Channels: len(w.channels), Chunks: w.mw.Statistics.ChunkCount, Skipped: w.skipped}
	if w.messages > 0 {
		s.Start, s.End = time.Unix(0, int64(w.first)).UTC(), time.Unix(0, int64(w.last)).UTC()
	}
	return s
}

// Size is the number of bytes written to the file so far (closed chunks;
// the open chunk is in memory).
func (w *Writer) Size() int64 { return int64(w.mw.Offset()) }

// Close writes the open chunk, the summary and the footer, syncs and
// closes the file.
func (w *Writer) Close() error {
	err := w.mw.Close()
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("record: closing %s: %w", w.path, err)
	}
	return nil
}

func (w *Writer) channel(topic string, first []byte) (*channel, error) {
	if ch := w.channels[topic]; ch != nil {
		return ch, nil
	}
	ch := &channel{id: w.nextID}
	w.channels[topic] = ch
	spec, err := w.o.Encoding(topic).Channel(topic, first)
	if err != nil {
		ch.err = err
		w.skipped++
		return ch, err
	}
	if w.nextID == 0xffff {
		ch.err = fmt.Errorf("record: %s: more than 65534 topics", topic)
		return ch, ch.err
	}
	w.nextID++
	ch.encode, ch.encodeValue = spec.Encode, spec.EncodeValue
	var schemaID uint16
	if spec.SchemaEncoding != "" || len(spec.Schema) > 0 {
		schemaID = ch.id
		if err := w.mw.WriteSchema(&mcap.Schema{ID: schemaID, Name: spec.SchemaName, Encoding: spec.SchemaEncoding, Data: spec.Schema}); err != nil {
			return nil, w.fail(err)
		}
	}
	if err := w.mw.WriteChannel(&mcap.Channel{ID: ch.id, SchemaID: schemaID, Topic: topic, MessageEncoding: spec.MessageEncoding}); err != nil {
		return nil, w.fail(err)
	}
	return ch, nil
}

// fail records the file's write error.
func (w *Writer) fail(err error) error {
	if w.failed == nil {
		w.failed = fmt.Errorf("record: writing %s: %w", w.path, err)
	}
	return w.failed
}

// Err is the file's write error (a full disk, a removed device), after
// which nothing more is written; nil while writing works.
func (w *Writer) Err() error { return w.failed }
