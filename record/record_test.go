package record_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/foxglove/mcap/go/mcap"

	"github.com/saint-os/saint/bus/bustest"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/record"
)

type headState struct {
	Pan  float64 `json:"pan"`
	Tilt float64 `json:"tilt"`
	Seq  int     `json:"seq"`
}

// recordRun publishes n head states (every 10 ms) and n/2 odometry
// messages on a virtual clock with a recorder running, and returns the
// recorder's status after Stop.
func recordRun(t *testing.T, o record.Options, n int) record.Status {
	t.Helper()
	ex := executor.NewVirtual()
	br := mem.NewBroker()
	pub, sub := br.Connect(nil), br.Connect(nil)
	defer pub.Close()
	defer sub.Close()
	o.Bus, o.Exec = sub, ex
	if o.Writer.Encoding == nil {
		// headState is not the robot's HeadState (it counts messages in
		// seq), so store it as the JSON it is.
		o.Writer.Encoding = record.JSONEncoding
	}
	rec, err := record.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	i := 0
	ex.Every(10*time.Millisecond, func() {
		if i >= n {
			return
		}
		if err := pub.Publish("/saint/head/state", headState{Pan: float64(i), Tilt: -1, Seq: i}); err != nil {
			t.Error(err)
		}
		if i%2 == 0 {
			_ = pub.Publish("/saint/tracks/odom", map[string]any{"x": float64(i) / 10, "y": 0, "frame": "odom"})
		}
		i++
	})
	if err := ex.RunFor(context.Background(), time.Duration(n+5)*10*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	return rec.Status()
}

func TestRecordAndRead(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.mcap")
	st := recordRun(t, record.Options{File: file}, 200)
	if st.Messages != 300 || st.Dropped != 0 {
		t.Fatalf("status %+v: want 300 messages, none dropped", st)
	}

	// The MCAP library's own indexed reader accepts the file.
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mr, err := mcap.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	info, err := mr.Info()
	if err != nil {
		t.Fatal(err)
	}
	if info.Statistics.MessageCount != 300 || info.Statistics.ChannelCount != 2 {
		t.Errorf("statistics: %d messages on %d channels, want 300 on 2", info.Statistics.MessageCount, info.Statistics.ChannelCount)
	}
	if info.Statistics.ChunkCount < 2 {
		t.Errorf("%d chunks: want a chunk closed every second of log time", info.Statistics.ChunkCount)
	}
	for _, ci := range info.ChunkIndexes {
		if ci.Compression != mcap.CompressionZSTD {
			t.Errorf("chunk compression %q, want zstd", ci.Compression)
		}
	}

	var got []headState
	sum, err := record.Read(file, func(m record.Message) error {
		if m.Channel.MessageEncoding != "json" || m.Schema == nil || m.Schema.Encoding != "jsonschema" {
			return fmt.Errorf("%s: encoding %q schema %+v", m.Topic, m.Channel.MessageEncoding, m.Schema)
		}
		if m.Topic == "/saint/head/state" {
			var h headState
			if err := json.Unmarshal(m.Data, &h); err != nil {
				return err
			}
			got = append(got, h)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Complete || sum.Messages != 300 || len(sum.Topics) != 2 {
		t.Fatalf("summary %+v", sum)
	}
	if sum.Topics[0].Topic != "/saint/head/state" || sum.Topics[0].Messages != 200 || sum.Topics[1].Messages != 100 {
		t.Errorf("topics %+v", sum.Topics)
	}
	if d := sum.Duration(); d != 1990*time.Millisecond {
		t.Errorf("time range %v, want 1.99 s of virtual time", d)
	}
	for i, h := range got {
		if h.Seq != i || h.Pan != float64(i) {
			t.Fatalf("message %d is %+v", i, h)
		}
	}
	var schema map[string]any
	f.Seek(0, 0)
	for _, s := range info.Schemas {
		if s.Name == "saint.head.state" {
			if err := json.Unmarshal(s.Data, &schema); err != nil {
				t.Fatal(err)
			}
		}
	}
	props, _ := schema["properties"].(map[string]any)
	if pan, _ := props["pan"].(map[string]any); pan["type"] != "number" {
		t.Errorf("schema of /saint/head/state: %v", schema)
	}
}

func TestRollBySize(t *testing.T) {
	dir := t.TempDir()
	st := recordRun(t, record.Options{Dir: dir, MaxBytes: 2000, Writer: record.WriterOptions{ChunkBytes: 1000}}, 400)
	if len(st.Files) < 2 {
		t.Fatalf("files %v: want the recording to roll over", st.Files)
	}
	var total uint64
	for _, f := range st.Files {
		sum, err := record.Summarize(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !sum.Complete {
			t.Errorf("%s: not closed", f)
		}
		total += sum.Messages
	}
	t.Logf("status %+v", st)
	if total != 600 {
		t.Errorf("%d messages over %d files, want 600", total, len(st.Files))
	}
}

func TestRollByDuration(t *testing.T) {
	dir := t.TempDir()
	st := recordRun(t, record.Options{Dir: dir, MaxDuration: 500 * time.Millisecond}, 200)
	if len(st.Files) != 4 {
		t.Fatalf("files %v: want 2 s cut into 4 files of 0.5 s", st.Files)
	}
	for _, f := range st.Files {
		sum, err := record.Summarize(f)
		if err != nil {
			t.Fatal(err)
		}
		if d := sum.Duration(); d >= 500*time.Millisecond {
			t.Errorf("%s spans %v", f, d)
		}
	}
}

func TestTruncatedAndCorrupt(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.mcap")
	recordRun(t, record.Options{File: file, Writer: record.WriterOptions{ChunkBytes: 2000}}, 400)
	full, err := record.Summarize(file)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(file)

	// Cut in the middle: the complete chunks before the cut are read.
	cut := filepath.Join(t.TempDir(), "cut.mcap")
	os.WriteFile(cut, data[:len(data)/2], 0o644)
	sum, err := record.Summarize(cut)
	var fe *record.FileError
	if !errors.As(err, &fe) || fe.Offset <= 0 || fe.Offset > int64(len(data)/2) {
		t.Fatalf("truncated file: err %v, want a FileError with an offset inside the file", err)
	}
	if sum.Messages == 0 || sum.Messages >= full.Messages || sum.Complete {
		t.Errorf("truncated file: %d of %d messages, complete %v", sum.Messages, full.Messages, sum.Complete)
	}

	// A flipped byte in a chunk: that chunk is skipped, the rest read.
	f, _ := os.Open(file)
	mr, err := mcap.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	info, err := mr.Info()
	f.Close()
	if err != nil || len(info.ChunkIndexes) < 3 {
		t.Fatalf("chunks: %v %v", info, err)
	}
	ci := info.ChunkIndexes[1]
	bad := append([]byte(nil), data...)
	bad[ci.ChunkStartOffset+ci.ChunkLength-10] ^= 0xff
	corrupt := filepath.Join(t.TempDir(), "corrupt.mcap")
	os.WriteFile(corrupt, bad, 0o644)
	sum, err = record.Summarize(corrupt)
	if err != nil {
		t.Logf("corrupt file: %v", err)
	}
	if len(sum.Problems) == 0 || sum.Messages == 0 || sum.Messages >= full.Messages {
		t.Errorf("corrupt file: %d of %d messages, problems %v", sum.Messages, full.Messages, sum.Problems)
	}

	// Not an MCAP file at all.
	junk := filepath.Join(t.TempDir(), "junk.mcap")
	os.WriteFile(junk, []byte("hello, this is not a recording"), 0o644)
	if _, err := record.Summarize(junk); !errors.As(err, &fe) || fe.Offset != 0 {
		t.Errorf("junk: %v", err)
	}
}

// TestKilledRecorder kills a recording process with SIGKILL and reads its
// file back: no footer, but every complete chunk is there.
func TestKilledRecorder(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	file := filepath.Join(t.TempDir(), "killed.mcap")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRecorder$")
	cmd.Env = append(os.Environ(), "RECORD_HELPER_FILE="+file)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	bustest.WaitUntil(t, 20*time.Second, "the recorder to write chunks", func() bool {
		st, err := os.Stat(file)
		return err == nil && st.Size() > 20000
	})
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	var last = map[string]int{}
	sum, err := record.Read(file, func(m record.Message) error {
		var h headState
		if err := json.Unmarshal(m.Data, &h); err != nil {
			return fmt.Errorf("%s #%d: %w", m.Topic, m.Sequence, err)
		}
		if prev, ok := last[m.Topic]; ok && h.Seq != prev+1 {
			return fmt.Errorf("%s: seq %d after %d: a message is missing", m.Topic, h.Seq, prev)
		}
		last[m.Topic] = h.Seq
		return nil
	})
	var fe *record.FileError
	if !errors.As(err, &fe) {
		t.Fatalf("killed recording: err %v, want a FileError (no footer or a truncated chunk)", err)
	}
	t.Logf("killed recording: %d messages read; %v", sum.Messages, err)
	if sum.Complete || sum.Messages < 100 {
		t.Errorf("summary %+v", sum)
	}
}

// TestHelperRecorder is the process TestKilledRecorder kills: it records
// a fast publisher on the wall clock until it is killed.
func TestHelperRecorder(t *testing.T) {
	file := os.Getenv("RECORD_HELPER_FILE")
	if file == "" {
		t.Skip("started by TestKilledRecorder")
	}
	ex := executor.New(nil)
	b := mem.New()
	rec, err := record.Start(record.Options{Bus: b, Exec: ex, File: file,
		Writer: record.WriterOptions{FlushEvery: 20 * time.Millisecond, Encoding: record.JSONEncoding}})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Stop()
	i := 0
	ex.Every(time.Millisecond, func() {
		_ = b.Publish("/saint/head/state", headState{Pan: 1, Seq: i})
		i++
	})
	_ = ex.Run(context.Background())
}

func TestUnwritableFile(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full")
	}
	b := mem.New()
	defer b.Close()
	if _, err := record.Start(record.Options{Bus: b, Exec: executor.NewVirtual(), File: "/dev/full"}); err == nil {
		t.Fatal("recording to a full device started")
	}
	if rec, err := record.Start(record.Options{Bus: b, Exec: executor.NewVirtual(), File: filepath.Join(t.TempDir(), "no", "such", "dir", "x.mcap")}); err != nil {
		t.Errorf("recording into a directory that does not exist yet: %v (want it created)", err)
	} else if err := rec.Stop(); err != nil {
		t.Error(err)
	}
	if _, err := record.Start(record.Options{Bus: b, Exec: executor.NewVirtual()}); err == nil {
		t.Error("recording with neither File nor Dir started")
	}
}

// TestInferSchemaForFoxglove checks the inferred schema leaves out the
// fields Foxglove's JSON Schema reader refuses (and with them the whole
// channel): null, empty arrays, arrays of arrays, at any depth.
func TestInferSchemaForFoxglove(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"speed": 1.5, "name": "x", "ok": true, "none": null, "empty": [], "grid": [[1, 2]],
		"nums": [1], "joints": [{"pos": 0.5, "limits": null}], "pose": {"x": 1, "cov": []}}`), &v); err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(record.InferSchema(v))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"joints":{"items":{"properties":{"pos":{"type":"number"}},"type":"object"},"type":"array"},` +
		`"name":{"type":"string"},"nums":{"items":{"type":"number"},"type":"array"},"ok":{"type":"boolean"},` +
		`"pose":{"properties":{"x":{"type":"number"}},"type":"object"},"speed":{"type":"number"}},"type":"object"}`
	if string(got) != want {
		t.Errorf("schema\n%s\nwant\n%s", got, want)
	}
}
