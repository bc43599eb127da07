package activity

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 20, 14, 32, 0, 0, time.UTC)

// fakeClock advances one millisecond per reading.
func fakeClock() func() time.Time {
	n := 0
	return func() time.Time { n++; return t0.Add(time.Duration(n) * time.Millisecond) }
}

func TestQueryFiltersNewestFirst(t *testing.T) {
	l, err := Open(Options{Now: fakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	l.Add(Event{Level: "INFO", Source: "adoption", Node: "pi-1", Message: "Node pi-1 adopted as head"})
	l.Add(Event{Level: "DEBUG", Source: "livelink", Message: "Frame 12345 from FaceCapture"})
	l.Add(Event{Level: "WARN", Source: "tracks", Node: "pi-4", Message: "High motor temperature"})
	l.Add(Event{Level: "ERROR", Source: "adoption", Node: "pi-2", Message: "adoption refused"})

	check := func(f Filter, wantSeqs []uint64, wantTotal int) {
		t.Helper()
		evs, total := l.Query(f)
		var got []uint64
		for _, e := range evs {
			got = append(got, e.Seq)
		}
		if fmt.Sprint(got) != fmt.Sprint(wantSeqs) || total != wantTotal {
			t.Errorf("Query(%+v) = %v (total %d), want %v (total %d)", f, got, total, wantSeqs, wantTotal)
		}
	}
	check(Filter{}, []uint64{4, 3, 2, 1}, 4)
	check(Filter{Level: "INFO"}, []uint64{4, 3, 1}, 3)
	check(Filter{Level: "warning"}, []uint64{4, 3}, 2)
	check(Filter{Source: "ADOPTION"}, []uint64{4, 1}, 2)
	check(Filter{Node: "pi-4"}, []uint64{3}, 1)
	check(Filter{Search: "facecapture"}, []uint64{2}, 1)
	check(Filter{Limit: 2, Offset: 1}, []uint64{3, 2}, 4)
	check(Filter{AfterSeq: 2}, []uint64{4, 3}, 2)
	evs, _ := l.Query(Filter{Limit: 1})
	if !evs[0].Time.Equal(t0.Add(4 * time.Millisecond)) {
		t.Errorf("time %v: want the log's clock", evs[0].Time)
	}
}

func TestRingIsBounded(t *testing.T) {
	l, _ := Open(Options{RingSize: 3})
	for i := 0; i < 10; i++ {
		l.Add(Event{Message: fmt.Sprint(i)})
	}
	evs, total := l.Query(Filter{})
	if total != 3 || evs[0].Message != "9" || evs[2].Message != "7" {
		t.Errorf("ring holds %+v (total %d), want the newest 3", evs, total)
	}
}

func TestFileRotatesAndSurvivesRestart(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, MaxFileBytes: 600, Files: 3, Now: fakeClock()}
	l, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 40; i++ {
		l.Add(Event{Source: "test", Message: fmt.Sprintf("event %02d", i)})
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	files := l.tierFiles(tierInfo)
	if len(files) != 3 {
		t.Fatalf("files %v: want 3 kept", files)
	}
	var seqs []uint64
	for _, p := range files {
		fi, _ := os.Stat(p)
		if fi.Size() > o.MaxFileBytes {
			t.Errorf("%s is %d bytes, over the %d limit", p, fi.Size(), o.MaxFileBytes)
		}
		f, _ := os.Open(p)
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var e Event
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("%s: %q: %v", p, sc.Text(), err)
			}
			seqs = append(seqs, e.Seq)
		}
		f.Close()
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			t.Fatalf("sequence across files %v: want consecutive, oldest file first", seqs)
		}
	}
	if seqs[len(seqs)-1] != 40 || seqs[0] == 1 {
		t.Errorf("files hold events %d..%d: want the oldest rotated away and 40 last", seqs[0], seqs[len(seqs)-1])
	}
	if _, err := os.Stat(filepath.Join(dir, FileName+".3")); err == nil {
		t.Error("a fourth file was kept")
	}

	// A torn last line (power cut) is skipped on reload.
	f, _ := os.OpenFile(filepath.Join(dir, FileName), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"seq":41,"mess`)
	f.Close()
	l2, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	evs, _ := l2.Query(Filter{Limit: 1})
	if len(evs) != 1 || evs[0].Message != "event 40" {
		t.Fatalf("after restart newest is %+v, want event 40", evs)
	}
	if e := l2.Add(Event{Message: "after restart"}); e.Seq != 41 {
		t.Errorf("seq after restart %d, want 41", e.Seq)
	}
}

func TestSubscribe(t *testing.T) {
	l, _ := Open(Options{})
	var got []string
	cancel := l.Subscribe(func(e Event) { got = append(got, e.Message) })
	l.Add(Event{Message: "a"})
	cancel()
	l.Add(Event{Message: "b"})
	if fmt.Sprint(got) != "[a]" {
		t.Errorf("subscriber saw %v, want [a]", got)
	}
}

func TestSlogHandler(t *testing.T) {
	l, _ := Open(Options{Now: fakeClock()})
	var console bytes.Buffer
	log := slog.New(Tee(slog.NewTextHandler(&console, nil), l.Handler(slog.LevelInfo)))
	log.Debug("not recorded")
	log.With("source", "adoption").Info("Node adopted", "node", "pi-a1", "role", "head")
	log.With("component", "nats").WithGroup("conn").Warn("slow consumer", "sid", 7)
	evs, total := l.Query(Filter{})
	if total != 2 {
		t.Fatalf("%d events, want 2: %+v", total, evs)
	}
	a := evs[1]
	if a.Source != "adoption" || a.Node != "pi-a1" || a.Message != "Node adopted" || a.Level != "INFO" || a.Attrs["role"] != "head" {
		t.Errorf("event %+v", a)
	}
	b := evs[0]
	if b.Source != "nats" || b.Level != "WARN" || b.Attrs["conn.sid"] != "7" {
		t.Errorf("event %+v", b)
	}
	if !bytes.Contains(console.Bytes(), []byte("Node adopted")) {
		t.Error("the console handler did not get the record")
	}
}

// A flood of info events (a loop of connections) pushes out older info
// only: the last warning is still queried after it, in memory, on disk
// and after a restart, while both tiers stay within their bounds.
func TestInfoFloodNeverPushesOutAWarning(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, RingSize: 100, RingBytes: 8 << 10, MaxFileBytes: 4 << 10, Files: 3, Now: fakeClock()}
	l, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	l.Add(Event{Level: "ERROR", Source: "tracks", Message: "motor driver fault"})
	warn := l.Add(Event{Level: "WARN", Source: "websocket", Message: "failed login from 10.0.0.9: wrong API token"})
	for i := range 20000 {
		l.Add(Event{Source: "websocket", Message: fmt.Sprintf("WebSocket client %d connected", i)})
	}
	check := func(l *Log, when string) {
		t.Helper()
		evs, _ := l.Query(Filter{Level: "WARN", Limit: 1})
		if len(evs) != 1 || evs[0].Seq != warn.Seq {
			t.Fatalf("%s: newest warning %+v, want seq %d", when, evs, warn.Seq)
		}
		all, total := l.Query(Filter{Limit: MaxLogLimit})
		if total > 2*o.RingSize {
			t.Errorf("%s: %d events in memory, want at most %d a tier", when, total, o.RingSize)
		}
		var infoBytes int
		for _, e := range all {
			if e.Level == "INFO" {
				b, _ := json.Marshal(e)
				infoBytes += len(b) + 1
			}
		}
		if int64(infoBytes) > o.RingBytes {
			t.Errorf("%s: %d bytes of info in memory, over the %d bound", when, infoBytes, o.RingBytes)
		}
		// The unfiltered view still shows the warnings, after the info.
		var levels []string
		for _, e := range all {
			if e.Level != "INFO" {
				levels = append(levels, e.Level)
			}
		}
		if fmt.Sprint(levels) != "[WARN ERROR]" {
			t.Errorf("%s: warnings in the unfiltered view %v, want [WARN ERROR]", when, levels)
		}
	}
	check(l, "after the flood")
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(l.tierFiles(tierInfo)); got != o.Files {
		t.Errorf("%d info files, want %d (the flood rotates them)", got, o.Files)
	}
	for _, p := range l.Files() {
		if fi, _ := os.Stat(p); fi.Size() > o.MaxFileBytes {
			t.Errorf("%s is %d bytes, over %d", p, fi.Size(), o.MaxFileBytes)
		}
	}
	l2, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	check(l2, "after a restart")
}

// Warnings rotate among themselves only, and never before info: an info
// flood of any length leaves the warning files as they were.
func TestRotationNeverDropsAWarningBeforeInfo(t *testing.T) {
	dir := t.TempDir()
	o := Options{Dir: dir, MaxFileBytes: 1 << 10, Files: 2, Now: fakeClock()}
	l, err := Open(o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		l.Add(Event{Level: "WARN", Message: fmt.Sprintf("warning %d", i)})
	}
	for i := range 5000 {
		l.Add(Event{Message: fmt.Sprintf("info %d", i)})
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := l.Export(&buf); err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	var warnings []string
	sc := bufio.NewScanner(&buf)
	for sc.Scan() {
		var e Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("export line %q: %v", sc.Text(), err)
		}
		seqs = append(seqs, e.Seq)
		if e.Level == "WARN" {
			warnings = append(warnings, e.Message)
		}
	}
	if fmt.Sprint(warnings) != "[warning 0 warning 1 warning 2]" {
		t.Errorf("exported warnings %q, want all three", warnings)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] <= seqs[i-1] {
			t.Fatalf("export out of order at %d: %d after %d", i, seqs[i], seqs[i-1])
		}
	}
	// The flood may outrun the disk (info lines are then dropped from
	// the files, not from memory), but it rotates the first info away.
	if seqs[0] != 1 || seqs[3] <= 4 {
		t.Errorf("export starts %v: want the warnings 1-3, then info after the first rotated away", seqs[:4])
	}
}

// Files from before the tiers hold warnings and info together: a warning
// read back from one lands among the warnings.
func TestOldMixedFileLoadsIntoTiers(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	lines = append(lines, `{"seq":1,"time":"2026-01-20T14:32:00Z","level":"WARN","source":"x","message":"old warning"}`)
	for i := 2; i <= 50; i++ {
		lines = append(lines, fmt.Sprintf(`{"seq":%d,"time":"2026-01-20T14:32:00Z","level":"INFO","source":"x","message":"old info"}`, i))
	}
	if err := os.WriteFile(filepath.Join(dir, FileName), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(Options{Dir: dir, RingSize: 10, Now: fakeClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if evs, _ := l.Query(Filter{Level: "WARN"}); len(evs) != 1 || evs[0].Message != "old warning" {
		t.Errorf("warnings after load %+v, want the old warning", evs)
	}
	if e := l.Add(Event{}); e.Seq != 51 {
		t.Errorf("seq after load %d, want 51", e.Seq)
	}
}

// An event larger than MaxEventBytes keeps the start of its message and
// says how large it was; what is stored stays within the bound.
func TestOversizedEventIsCut(t *testing.T) {
	l, _ := Open(Options{MaxEventBytes: 1024})
	big := strings.Repeat("é", 4000)
	e := l.Add(Event{Level: "WARN", Message: big, Attrs: map[string]string{"blob": big}})
	b, _ := json.Marshal(e)
	if len(b) > 1024 {
		t.Errorf("stored event is %d bytes, want at most 1024", len(b))
	}
	if !strings.HasPrefix(big, strings.TrimSuffix(e.Message, "…")) || e.Attrs["truncated"] == "" || e.Attrs["blob"] != "" {
		t.Errorf("cut event: message %d bytes, attrs %v", len(e.Message), e.Attrs)
	}
	if evs, _ := l.Query(Filter{}); len(evs) != 1 || evs[0].Message != e.Message {
		t.Error("the ring does not hold the cut event")
	}
}
