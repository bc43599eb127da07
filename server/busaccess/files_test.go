package busaccess_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/saint-os/saint/persist"
	"github.com/saint-os/saint/server/busaccess"
)

// seedKey is a fixed valid public user key for the seeds.
func seedKey(tb testing.TB) string {
	kp, err := nkeys.FromSeed([]byte("SUAIBDPBAUTWCWBKIO6XHQNINK5FWJW4OHLXC3HQ2KFE4PEJUA44CNHTC4"))
	if err != nil {
		tb.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	return pub
}

// damagedSeeds are what a bug, an editor or a torn write leaves of a
// good file: null, nothing, truncations, garbage.
func damagedSeeds(good string) []string {
	out := []string{"null", " null\n", "", "\n", "\x00\x00\x00\x00", good + "x", good + good}
	for _, n := range []int{1, 2, len(good) / 3, len(good) / 2, len(good) - 1} {
		out = append(out, good[:n])
	}
	return out
}

// Whatever the grants file (bus/nodes.json) holds, the Authority opens:
// a file that is not a whole JSON list of grants (null and empty
// included) is moved aside, grants nothing and is reported (GrantsLost,
// an error event); a whole file grants only well-formed entries.
func FuzzGrantsFile(f *testing.F) {
	good := `[{"node_id":"head-1","key":"` + seedKey(f) + `","role":"head","granted_at":"2026-01-01T00:00:00Z"}]`
	f.Add([]byte(good))
	f.Add([]byte(`[]`))
	f.Add([]byte(`[null]`))
	f.Add([]byte(`[{"node_id":"../x","key":"U","role":"head"}]`))
	for _, d := range damagedSeeds(good) {
		f.Add([]byte(d))
	}
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "nodes.json"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		a, err := busaccess.New(busaccess.Options{Dir: dir, Now: func() time.Time { return at },
			Log: slog.New(slog.NewTextHandler(&log, nil))})
		if err != nil {
			t.Fatalf("grants file %q stopped the Authority: %v", data, err)
		}
		var list []*busaccess.Grant
		if persist.DecodeJSON(data, &list) != nil {
			if _, err := os.Stat(filepath.Join(dir, "nodes.json")); !os.IsNotExist(err) {
				t.Fatalf("damaged grants file %q left in place", data)
			}
			if _, err := os.Stat(filepath.Join(dir, "nodes.json.corrupt-20260304T050607.000Z")); err != nil {
				t.Fatalf("damaged grants file %q not kept: %v", data, err)
			}
			if a.GrantsLost() == "" {
				t.Fatalf("damaged grants file %q: GrantsLost is empty", data)
			}
			if g, ok := a.Granted("head-1"); ok {
				t.Fatalf("damaged grants file %q granted %+v", data, g)
			}
			var events bytes.Buffer
			a.LogEventsTo(slog.New(slog.NewTextHandler(&events, nil)))
			if !strings.Contains(events.String(), "level=ERROR") {
				t.Fatalf("damaged grants file %q: no error event in the activity log (%q)", data, events.String())
			}
			return
		}
		if a.GrantsLost() != "" {
			t.Fatalf("whole grants file %q reported lost: %s", data, a.GrantsLost())
		}
		if g, ok := a.Granted("head-1"); ok && (g.NodeID != "head-1" || !nkeys.IsValidPublicUserKey(g.Key)) {
			t.Fatalf("grant %+v from %q", g, data)
		}
	})
}

// Whatever the rejected keys file (bus/rejected.json) holds, the
// Authority either opens with every key it lists refused, or refuses to
// open and leaves the file where it is: a file that is not a whole JSON
// list of rejections (null and empty included) never starts a server
// that would let those keys in again.
func FuzzRejectedFile(f *testing.F) {
	key := seedKey(f)
	good := `[{"key":"` + key + `","node_id":"arm-9","rejected_at":"2026-01-01T00:00:00Z"}]`
	f.Add([]byte(good))
	f.Add([]byte(`[]`))
	f.Add([]byte(`[null]`))
	f.Add([]byte(`[{"key":"not a key"}]`))
	for _, d := range damagedSeeds(good) {
		f.Add([]byte(d))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "rejected.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		a, err := busaccess.New(busaccess.Options{Dir: dir, Log: slog.New(slog.DiscardHandler)})
		var list []*busaccess.Rejection
		damaged := persist.DecodeJSON(data, &list) != nil
		if err != nil {
			if b, rerr := os.ReadFile(path); rerr != nil || !bytes.Equal(b, data) {
				t.Fatalf("refused on %q, but the file was not left as it was (%v)", data, rerr)
			}
			return
		}
		if damaged {
			t.Fatalf("rejected keys file %q (null, empty, truncated or garbled) opened", data)
		}
		for _, r := range a.Rejected() {
			if !nkeys.IsValidPublicUserKey(r.Key) {
				t.Fatalf("rejection %+v from %q", r, data)
			}
		}
		if bytes.Contains(data, []byte(key)) && len(a.Rejected()) == 0 && len(list) > 0 {
			t.Fatalf("%q lists %s but nothing is rejected", data, key)
		}
	})
}
