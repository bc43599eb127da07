package livelink

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/saint-os/saint/persist"
)

func TestSendersLoopbackOnlyWhenAsked(t *testing.T) {
	now := time.Unix(1000, 0)
	closed := NewSenders("", false)
	open := NewSenders("", true)
	for _, ip := range []string{"127.0.0.1", "::1"} {
		if closed.Admit(ip, "s", now) {
			t.Errorf("%s admitted without AllowLoopback", ip)
		}
		if !open.Admit(ip, "s", now) {
			t.Errorf("%s refused with AllowLoopback", ip)
		}
	}
	if open.Admit("192.168.4.20", "s", now) {
		t.Error("a network sender admitted because loopback is")
	}
}

func TestSendersRemembersBoundedUnknown(t *testing.T) {
	s := NewSenders("", false)
	t0 := time.Unix(1000, 0)
	for i := 0; i < MaxUnknownSenders+10; i++ {
		ip := fmt.Sprintf("10.0.%d.%d", i/256, i%256)
		for j := 0; j < maxSenderSubjects+5; j++ {
			s.Admit(ip, fmt.Sprintf("subject%d", j), t0.Add(time.Duration(i)*time.Second))
		}
	}
	l := s.List()
	if len(l.Unknown) != MaxUnknownSenders {
		t.Fatalf("%d unknown senders kept, want %d", len(l.Unknown), MaxUnknownSenders)
	}
	if l.Dropped != uint64((MaxUnknownSenders+10)*(maxSenderSubjects+5)) {
		t.Errorf("dropped %d", l.Dropped)
	}
	// The oldest were forgotten: the first kept is the eleventh.
	if l.Unknown[0].Address != "10.0.0.10" || len(l.Unknown[0].Subjects) != maxSenderSubjects ||
		l.Unknown[0].Packets != maxSenderSubjects+5 {
		t.Errorf("first kept %+v", l.Unknown[0])
	}
}

func TestSendersPersist(t *testing.T) {
	path := filepath.Join(t.TempDir(), "data", SendersFile)
	s := NewSenders(path, false)
	s.Admit("192.168.4.20", "FaceCapture", time.Unix(1000, 0))
	if _, err := s.Allow("::ffff:192.168.4.20"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Allow("10.0.0.5"); err != nil {
		t.Fatal(err)
	}
	if err := s.Revoke("10.0.0.5"); err != nil {
		t.Fatal(err)
	}
	if err := s.Revoke("10.0.0.5"); err == nil {
		t.Error("revoking an address not on the list succeeded")
	}
	if _, err := s.Allow("robot.local"); err == nil {
		t.Error("a host name was allowed")
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("allow-list file: %v %v", fi, err)
	}
	again := NewSenders(path, false)
	if err := again.Load(); err != nil {
		t.Fatal(err)
	}
	l := again.List()
	if len(l.Allowed) != 1 || l.Allowed[0].Address != "192.168.4.20" || fmt.Sprint(l.Allowed[0].Subjects) != "[FaceCapture]" {
		t.Fatalf("loaded %+v", l.Allowed)
	}
	if !again.Admit("192.168.4.20", "FaceCapture", time.Unix(2000, 0)) || again.Admit("10.0.0.5", "x", time.Unix(2000, 0)) {
		t.Error("the loaded list admits the wrong senders")
	}

	for _, bad := range []string{`{"allowed":[{"address":"nope"}]}`, `{"allowed":`} {
		if err := os.WriteFile(path, []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		s := NewSenders(path, false)
		if err := s.Load(); err == nil {
			t.Errorf("%s loaded without error", bad)
		}
		if len(s.List().Allowed) != 0 {
			t.Errorf("%s: a damaged file admits %+v", bad, s.List().Allowed)
		}
	}
}

// FuzzSendersFile: whatever livelink_senders.json holds, loading it never
// panics; a list it takes holds only canonical addresses, and reads back
// the same after it is written.
func FuzzSendersFile(f *testing.F) {
	for _, seed := range []string{
		`{"allowed":[{"address":"192.168.4.20","subjects":["iPhone"]}]}`, `{"allowed":[{"address":"::ffff:10.0.0.1"}]}`,
		`{"allowed":[{"address":"not an address"}]}`, `{"allowed":null}`, `[]`, `{`,
		`null`, ``, "\n", `{"allowed":[{"address":"192.168.4.20"`, `{"allowed":[{"addr`, `{"allowed":[]}x`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(t.TempDir(), SendersFile)
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		s := NewSenders(path, false)
		var whole map[string]json.RawMessage
		damaged := persist.DecodeJSON(data, &whole) != nil
		err := s.Load()
		if damaged && err == nil {
			t.Fatalf("allow-list %q (null, empty, truncated or garbled) loaded as if it were whole", data)
		}
		if err != nil {
			if l := s.List(); len(l.Allowed) != 0 {
				t.Fatalf("a file that does not load admits %+v", l.Allowed)
			}
			return
		}
		list := s.List().Allowed
		for _, a := range list {
			if canon, err := ParseSenderAddress(a.Address); err != nil || canon != a.Address || !s.Allowed(a.Address) {
				t.Fatalf("allowed address %q (canonical %q, %v)", a.Address, canon, err)
			}
		}
		if len(list) > 0 {
			if err := s.Revoke(list[0].Address); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Allow(list[0].Address); err != nil {
				t.Fatal(err)
			}
			again := NewSenders(path, false)
			if err := again.Load(); err != nil || len(again.List().Allowed) != len(list) {
				t.Fatalf("written list of %d read back as %+v (%v)", len(list), again.List().Allowed, err)
			}
		}
	})
}
