package record

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"time"

	"github.com/foxglove/mcap/go/mcap"
)

// Message is one recorded message as Read hands it over. Data is valid
// only during the callback (copy it to keep it).
type Message struct {
	Topic    string
	Channel  *mcap.Channel
	Schema   *mcap.Schema // nil when the channel has none
	LogTime  time.Time
	Sequence uint32
	Data     []byte
}

// TopicSummary is one channel of a recording.
type TopicSummary struct {
	Topic           string    `json:"topic"`
	MessageEncoding string    `json:"message_encoding"`
	SchemaName      string    `json:"schema_name,omitempty"`
	SchemaEncoding  string    `json:"schema_encoding,omitempty"`
	Messages        uint64    `json:"messages"`
	First           time.Time `json:"first"`
	Last            time.Time `json:"last"`
}

// Summary is what Read found in a file.
type Summary struct {
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	Profile  string `json:"profile"`
	Library  string `json:"library"`
	Messages uint64 `json:"messages"`
	// Start and End are the first and last log times.
	Start time.Time `json:"start"`
	End   time.Time `json:"end"`
	// Complete is true when the file ends with its footer, as a file the
	// writer closed does; a file whose writer was killed has none.
	Complete bool           `json:"complete"`
	Topics   []TopicSummary `json:"topics"`
	// Problems are the unreadable parts that were skipped (corrupt
	// chunks); the error Read returns is the one that ended the reading.
	Problems []string          `json:"problems,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

// Duration is End - Start.
func (s Summary) Duration() time.Duration { return s.End.Sub(s.Start) }

// FileError is a recording that could not be read to its end: what was
// wrong and at which byte offset of the file. Everything before Offset
// was read.
type FileError struct {
	Path   string
	Offset int64
	Err    error
}

func (e *FileError) Error() string {
	return fmt.Sprintf("record: %s: at byte offset %d: %v", e.Path, e.Offset, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

// ErrNoFooter is wrapped by the FileError of a file that ends without its
// footer: the recorder did not close it (it was killed, or is still
// writing).
var ErrNoFooter = errors.New("the file ends without its footer (the recorder did not close it: killed, or still writing); every complete chunk before this offset was read")

var errNotMCAP = errors.New("not an MCAP file")

// Summarize reads the whole file and summarises it; see Read for the
// errors.
func Summarize(path string) (Summary, error) {
	return Read(path, nil)
}

// Read reads a recording from start to end and calls fn (if not nil) for
// every message in file order, which is log-time order for files this
// package writes. It reads files that lack their summary and footer, and
// skips corrupt chunks (listed in Summary.Problems). The Summary describes
// everything readable; the error, a *FileError when the file itself is at
// fault, says where the reading stopped and why. An error from fn stops the
// reading and is returned as it is. A file that is not MCAP at all gives
// an empty Summary.
func Read(path string, fn func(Message) error) (Summary, error) {
	f, err := os.Open(path)
	if err != nil {
		return Summary{}, fmt.Errorf("record: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return Summary{}, fmt.Errorf("record: %w", err)
	}
	r := &reader{path: path, f: f, size: st.Size(), fn: fn,
		schemas: map[uint16]*mcap.Schema{}, channels: map[uint16]*mcap.Channel{}, topics: map[uint16]*TopicSummary{}}
	r.sum = Summary{Path: path, Size: st.Size()}
	err = r.run()
	var fe *FileError
	if errors.As(err, &fe) && errors.Is(fe.Err, errNotMCAP) {
		return Summary{}, err
	}
	r.finish()
	return r.sum, err
}

type reader struct {
	path     string
	f        *os.File
	size     int64
	fn       func(Message) error
	sum      Summary
	schemas  map[uint16]*mcap.Schema
	channels map[uint16]*mcap.Channel
	topics   map[uint16]*TopicSummary
	orphans  uint64
}

// countingReader counts the bytes the lexer consumed.
type countingReader struct {
	r *bufio.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

func (r *reader) fileErr(off int64, err error) error {
	return &FileError{Path: r.path, Offset: off, Err: err}
}

func (r *reader) run() error {
	start := int64(0)
	for {
		next, err := r.lex(start)
		if err == nil || next < 0 {
			return err
		}
		// The record at next could not be read; skip it when its length
		// header is intact and inside the file, else give up there.
		skip, ok := r.skippable(next)
		if !ok {
			return err
		}
		r.sum.Problems = append(r.sum.Problems, fmt.Sprintf("byte offset %d: skipped %d bytes: %v", next, skip-next, errors.Unwrap(err)))
		start = skip
	}
}

// skippable reads the record header at off and returns where the record
// ends, if that is inside the file.
func (r *reader) skippable(off int64) (int64, bool) {
	var hdr [9]byte
	if _, err := r.f.ReadAt(hdr[:], off); err != nil {
		return 0, false
	}
	op := mcap.OpCode(hdr[0])
	n := binary.LittleEndian.Uint64(hdr[1:])
	end := off + 9 + int64(n)
	if op == 0 || op > mcap.OpDataEnd || n > uint64(r.size) || end > r.size {
		return 0, false
	}
	return end, true
}

// lex reads records from off. It returns nil at the footer; otherwise a
// FileError and the offset of the record that failed (-1 when the failure
// is not one skipping could cure).
func (r *reader) lex(off int64) (int64, error) {
	if _, err := r.f.Seek(off, io.SeekStart); err != nil {
		return -1, fmt.Errorf("record: %w", err)
	}
	cr := &countingReader{r: bufio.NewReaderSize(r.f, 64<<10), n: off}
	lx, err := mcap.NewLexer(cr, &mcap.LexerOptions{SkipMagic: off != 0, ValidateChunkCRCs: true})
	if err != nil {
		return -1, r.fileErr(0, fmt.Errorf("%w (%v)", errNotMCAP, err))
	}
	defer lx.Close()
	var buf []byte
	for {
		pos := cr.n
		tok, rec, err := lx.Next(buf)
		if err != nil {
			if errors.Is(err, io.EOF) {
				if r.sum.Complete {
					return -1, nil
				}
				return -1, r.fileErr(cr.n, ErrNoFooter)
			}
			var trunc *mcap.ErrTruncatedRecord
			if errors.As(err, &trunc) || errors.Is(err, io.ErrUnexpectedEOF) {
				return -1, r.fileErr(pos, fmt.Errorf("truncated record (%v); every complete record before it was read", err))
			}
			return pos, r.fileErr(pos, err)
		}
		if cap(rec) > cap(buf) {
			buf = rec[:cap(rec)]
		}
		if err := r.record(tok, rec); err != nil {
			return -1, err
		}
	}
}

// record handles one record; the only error is the callback's.
func (r *reader) record(tok mcap.TokenType, rec []byte) error {
	switch tok {
	case mcap.TokenHeader:
		h, err := mcap.ParseHeader(rec)
		if err == nil {
			r.sum.Profile, r.sum.Library = h.Profile, h.Library
		}
	case mcap.TokenSchema:
		s, err := mcap.ParseSchema(rec)
		if err == nil {
			s.Data = append([]byte(nil), s.Data...)
			r.schemas[s.ID] = s
		}
	case mcap.TokenChannel:
		c, err := mcap.ParseChannel(rec)
		if err == nil {
			if _, known := r.channels[c.ID]; !known {
				r.channels[c.ID] = c
				t := &TopicSummary{Topic: c.Topic, MessageEncoding: c.MessageEncoding}
				if s := r.schemas[c.SchemaID]; s != nil {
					t.SchemaName, t.SchemaEncoding = s.Name, s.Encoding
				}
				r.topics[c.ID] = t
			}
		}
	case mcap.TokenMetadata:
		m, err := mcap.ParseMetadata(rec)
		if err == nil && m.Name == "saint" {
			r.sum.Metadata = m.Metadata
		}
	case mcap.TokenFooter:
		r.sum.Complete = true
	case mcap.TokenMessage:
		m, err := mcap.ParseMessage(rec)
		if err != nil {
			return nil
		}
		c := r.channels[m.ChannelID]
		if c == nil {
			r.orphans++
			return nil
		}
		t := time.Unix(0, int64(m.LogTime)).UTC()
		ts := r.topics[m.ChannelID]
		if ts.Messages == 0 {
			ts.First = t
		}
		ts.Messages++
		ts.Last = t
		if r.sum.Messages == 0 || t.Before(r.sum.Start) {
			r.sum.Start = t
		}
		if t.After(r.sum.End) {
			r.sum.End = t
		}
		r.sum.Messages++
		if r.fn != nil {
			return r.fn(Message{Topic: c.Topic, Channel: c, Schema: r.schemas[c.SchemaID], LogTime: t, Sequence: m.Sequence, Data: m.Data})
		}
	}
	return nil
}

func (r *reader) finish() {
	for _, t := range r.topics {
		r.sum.Topics = append(r.sum.Topics, *t)
	}
	sort.Slice(r.sum.Topics, func(i, j int) bool { return r.sum.Topics[i].Topic < r.sum.Topics[j].Topic })
	if r.orphans > 0 {
		r.sum.Problems = append(r.sum.Problems, fmt.Sprintf("%d messages on channels whose definition was in a skipped part", r.orphans))
	}
}
