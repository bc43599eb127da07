package record_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/bus/mem"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/record"
)

type arrival struct {
	topic string
	at    time.Duration
	state headState
}

// replay plays file onto a fresh bus and returns what a subscriber to
// everything received, with virtual times since the replay began.
func replay(t *testing.T, o record.ReplayOptions) ([]arrival, record.Summary, error) {
	t.Helper()
	ex := executor.NewVirtual()
	b := mem.New()
	defer b.Close()
	start := ex.Now()
	var got []arrival
	if _, err := b.Subscribe("/saint/#", bus.QoS{Depth: 1000}, ex, func(m bus.Msg) {
		var h headState
		_ = m.Decode(&h)
		got = append(got, arrival{m.Topic, ex.Now().Sub(start), h})
	}); err != nil {
		t.Fatal(err)
	}
	var sum record.Summary
	var rerr error
	finished := false
	o.Bus, o.Exec = b, ex
	o.Done = func(s record.Summary, err error) { sum, rerr, finished = s, err, true }
	if _, err := record.Replay(o); err != nil {
		return nil, record.Summary{}, err
	}
	if err := ex.RunFor(context.Background(), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if !finished {
		t.Fatal("the replay did not finish")
	}
	return got, sum, rerr
}

func TestReplay(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.mcap")
	recordRun(t, record.Options{File: file}, 200)

	got, sum, err := replay(t, record.ReplayOptions{File: file, Speed: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 300 || sum.Messages != 300 {
		t.Fatalf("replayed %d of %d messages, want 300", len(got), sum.Messages)
	}
	// Recorded every 10 ms; at twice the speed they arrive every 5 ms.
	seq := 0
	for _, a := range got {
		if a.topic != "/saint/head/state" {
			continue
		}
		if a.state.Seq != seq || a.at != time.Duration(seq)*5*time.Millisecond {
			t.Fatalf("head state %d arrived at %v with seq %d", seq, a.at, a.state.Seq)
		}
		seq++
	}

	got, _, err = replay(t, record.ReplayOptions{File: file, Topics: []string{"/saint/tracks/+"}})
	if err != nil || len(got) != 100 {
		t.Fatalf("replaying /saint/tracks/+: %d messages, %v", len(got), err)
	}
	if got[99].at != 1980*time.Millisecond {
		t.Errorf("last odometry at %v, want 1.98 s", got[99].at)
	}
}

func TestReplayTruncated(t *testing.T) {
	file := filepath.Join(t.TempDir(), "run.mcap")
	recordRun(t, record.Options{File: file, Writer: record.WriterOptions{ChunkBytes: 2000}}, 200)
	data, _ := os.ReadFile(file)
	if err := os.WriteFile(file, data[:len(data)*2/3], 0o644); err != nil {
		t.Fatal(err)
	}
	got, sum, err := replay(t, record.ReplayOptions{File: file, Speed: 10})
	if err == nil || !strings.Contains(err.Error(), "byte offset") {
		t.Fatalf("a truncated file replayed with error %v, want one giving the byte offset", err)
	}
	if len(got) == 0 || uint64(len(got)) != sum.Messages || len(got) >= 300 {
		t.Errorf("replayed %d messages of a summary of %d", len(got), sum.Messages)
	}
	if _, err := record.Replay(record.ReplayOptions{Bus: mem.New(), Exec: executor.NewVirtual(), File: filepath.Join(t.TempDir(), "none.mcap")}); err == nil {
		t.Error("a missing file replayed")
	}
}

func TestMatch(t *testing.T) {
	for _, c := range []struct {
		filter, topic string
		want          bool
	}{
		{"/saint/#", "/saint/head/state", true},
		{"/saint/#", "/saint", false},
		{"/saint/arms/+/cmd", "/saint/arms/left/cmd", true},
		{"/saint/arms/+/cmd", "/saint/arms/left/gripper/cmd", false},
		{"/saint/head/cmd", "/saint/head/cmd", true},
		{"/saint/head/cmd", "/saint/head", false},
	} {
		if got := record.Match(c.filter, c.topic); got != c.want {
			t.Errorf("Match(%q, %q) = %v, want %v", c.filter, c.topic, got, c.want)
		}
	}
}
