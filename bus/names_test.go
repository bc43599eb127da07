package bus

import (
	"errors"
	"strings"
	"testing"
)

func TestTopicSubject(t *testing.T) {
	for _, tc := range []struct {
		name   string
		filter bool
		want   string
	}{
		{"/saint/nodes/unadopted", false, "saint.nodes.unadopted"},
		{"/saint/nodes/+/status", true, "saint.nodes.*.status"},
		{"/saint/#", true, "saint.>"},
		{"/robot_1/saint/+/state", true, "robot_1.saint.*.state"},
		{"/saint/node/pi-a1b2c3d4/adopt", false, "saint.node.pi-a1b2c3d4.adopt"},
		{"/x", false, "x"},
	} {
		got, err := TopicSubject(tc.name, tc.filter)
		if err != nil || got != tc.want {
			t.Errorf("TopicSubject(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
		}
		if back := SubjectTopic(got); back != tc.name {
			t.Errorf("SubjectTopic(%q) = %q, want %q", got, back, tc.name)
		}
	}
}

func TestServiceSubject(t *testing.T) {
	got, err := ServiceSubject("/saint/nodes/adopt")
	if err != nil || got != "_srv.saint.nodes.adopt" {
		t.Fatalf("ServiceSubject = %q, %v", got, err)
	}
	if back := SubjectTopic(got); back != "/saint/nodes/adopt" {
		t.Errorf("SubjectTopic(%q) = %q", got, back)
	}
	if _, err := ServiceSubject("/saint/+/adopt"); !errors.Is(err, ErrInvalidName) {
		t.Errorf("wildcard service name: %v", err)
	}
}

func TestInvalidNames(t *testing.T) {
	for _, tc := range []struct {
		name   string
		filter bool
		reason string
	}{
		{"", false, "must start with '/'"},
		{"saint/x", false, "must start with '/'"},
		{"/", false, "no segments"},
		{"/saint//x", false, "empty segment"},
		{"/saint/x/", false, "empty segment"},
		{"/saint/a.b", false, `segment "a.b" contains '.'`},
		{"/saint/a b", false, `segment "a b" contains a space`},
		{"/saint/a\tb", false, "a tab"},
		{"/saint/é", false, "non-ASCII"},
		{"/saint/*", true, `contains '*'`},
		{"/saint/>", true, `contains '>'`},
		{"/saint/+", false, "only allowed in subscriptions and served services"},
		{"/saint/#/x", true, "'#' must be the last segment"},
		{"/+/x", true, "first segment cannot be a wildcard"},
		{"/#", true, "first segment cannot be a wildcard"},
		{"/_INBOX/x", false, "cannot start with '_'"},
		{"/saint/a+", true, `contains '+'`},
	} {
		_, err := TopicSubject(tc.name, tc.filter)
		var ne *NameError
		if !errors.As(err, &ne) || !errors.Is(err, ErrInvalidName) {
			t.Errorf("TopicSubject(%q) error = %v, want a *NameError", tc.name, err)
			continue
		}
		if ne.Name != tc.name || ne.Kind != "topic" || !strings.Contains(err.Error(), tc.reason) {
			t.Errorf("TopicSubject(%q) error = %q, want it to name the topic and say %q", tc.name, err, tc.reason)
		}
	}
}

func TestEnvelope(t *testing.T) {
	data, err := encodeReply(map[string]int{"a": 1}, nil)
	if err != nil || string(data) != `{"result":{"a":1}}` {
		t.Fatalf("encodeReply = %s, %v", data, err)
	}
	m, err := decodeReply("/s", data)
	if err != nil || string(m.Data) != `{"a":1}` || m.Topic != "/s" {
		t.Errorf("decodeReply = %+v, %v", m, err)
	}

	data, _ = encodeReply(nil, nil)
	if m, err := decodeReply("/s", data); err != nil || string(m.Data) != "null" {
		t.Errorf("nil response: %s → %s, %v", data, m.Data, err)
	}

	data, _ = encodeReply("ignored", errors.New(`bad "thing"`))
	_, err = decodeReply("/s", data)
	var re *RemoteError
	if !errors.As(err, &re) || re.Message != `bad "thing"` || re.Service != "/s" {
		t.Errorf("error reply: %s → %v", data, err)
	}
	// An empty error message is still an error.
	data, _ = encodeReply(nil, errors.New(""))
	if _, err := decodeReply("/s", data); !errors.As(err, &re) {
		t.Errorf("empty error reply: %s → %v", data, err)
	}

	if _, err := encodeReply(make(chan int), nil); err == nil {
		t.Error("encoding a channel succeeded")
	}
	if _, err := decodeReply("/s", []byte("nonsense")); err == nil || errors.As(err, &re) {
		t.Errorf("malformed reply: %v", err)
	}
}

func TestRing(t *testing.T) {
	r := ring{buf: make([]item, 3)}
	for i := 0; i < 10; i++ {
		if r.n == len(r.buf) {
			r.pop()
		}
		r.push(item{reply: string(rune('a' + i))})
	}
	var got string
	for r.n > 0 {
		got += r.pop().reply
	}
	if got != "hij" {
		t.Errorf("ring kept %q, want hij", got)
	}
}

func BenchmarkTopicSubject(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		TopicSubject("/saint/arms/left/gripper/cmd", false)
	}
}
