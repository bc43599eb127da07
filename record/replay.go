package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/saint-os/saint/bus"
	"github.com/saint-os/saint/hal/executor"
)

// InputTopics are the topics that carry what drives the robot from
// outside: RC, LiveLink and the router's other inputs, and the commands
// the router sent. Replaying only these into a live simulation reproduces
// what an operator did, while the simulation produces the states.
var InputTopics = []string{
	"/saint/rc/state",
	"/saint/livelink/frames",
	"/saint/router/input",
	"/saint/head/cmd",
	"/saint/head/camera/cmd",
	"/saint/arms/+/cmd",
	"/saint/arms/+/gripper/cmd",
	"/saint/tracks/cmd_vel",
	"/saint/tracks/estop",
	"/saint/balance/estop",
}

// ReplayOptions configures Replay.
type ReplayOptions struct {
	// Bus and Exec are where messages are published, on Exec's timers
	// (required).
	Bus  bus.Bus
	Exec *executor.Executor
	File string
	// Speed scales the recorded pace: 1 (or 0) as recorded, 2 twice as
	// fast. On a virtual executor the executor's own speed scales it too.
	Speed float64
	// Topics are filters ("+" and "#" as on the bus) of the topics to
	// replay; nil replays every topic.
	Topics []string
	// Done, if not nil, is called on Exec when the last message has been
	// published or the player stopped, with the file's summary and the
	// error that ended reading it (see Read), if any.
	Done func(Summary, error)
	Log  *slog.Logger
}

// Player publishes a recording onto a bus.
type Player struct {
	o     ReplayOptions
	msgs  []replayed
	sum   Summary
	err   error
	next  int
	start time.Time
	timer *executor.Timer
	done  bool
}

type replayed struct {
	topic string
	at    time.Duration // since the recording's first message, already scaled
	data  json.RawMessage
}

// Replay keeps the recording's timeline: a message logged 5 s into the
// recording is published 5 s (at Speed 1) after Replay, whichever topics
// are replayed, so inputs replayed into a live simulation arrive when
// they did in the recorded run, after the nodes' start.
//
// Replay reads the file (a truncated or partly corrupt file plays what is
// readable; the error is logged and given to Done) and starts publishing
// its JSON messages on Exec. Only messages with JSON encoding are
// published, as bus payloads are JSON. Call it on Exec's goroutine or
// before Exec runs.
func Replay(o ReplayOptions) (*Player, error) {
	if o.Bus == nil || o.Exec == nil {
		return nil, errors.New("record: ReplayOptions.Bus and Exec are required")
	}
	if o.Speed < 0 {
		return nil, fmt.Errorf("record: replay speed %g: want > 0", o.Speed)
	}
	if o.Speed == 0 {
		o.Speed = 1
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	for _, f := range o.Topics {
		if _, err := bus.TopicSubject(f, true); err != nil {
			return nil, fmt.Errorf("record: replay topics: %w", err)
		}
	}
	p := &Player{o: o}
	var first time.Time
	skipped := map[string]string{}
	dec := NewDecoder()
	sum, err := Read(o.File, func(m Message) error {
		if first.IsZero() {
			first = m.LogTime
		}
		if !matchesAny(o.Topics, m.Topic) {
			return nil
		}
		data, err := dec.JSON(m)
		if err != nil {
			if _, seen := skipped[m.Topic]; !seen {
				skipped[m.Topic] = err.Error()
			}
			return nil
		}
		at := time.Duration(float64(m.LogTime.Sub(first)) / o.Speed)
		p.msgs = append(p.msgs, replayed{m.Topic, at, append(json.RawMessage(nil), data...)})
		return nil
	})
	var fe *FileError
	if err != nil && !errors.As(err, &fe) {
		return nil, err
	}
	if err != nil && sum.Messages == 0 {
		return nil, err
	}
	if err != nil {
		o.Log.Warn("replaying the readable part of a damaged recording", "source", "record", "err", err)
	}
	for topic, why := range skipped {
		o.Log.Warn("not replaying messages that do not decode", "source", "record", "topic", topic, "err", why)
	}
	p.sum, p.err = sum, err
	p.start = o.Exec.Now()
	p.schedule()
	return p, nil
}

// Messages is the number of messages the player will publish in all.
func (p *Player) Messages() int { return len(p.msgs) }

// Published is the number published so far (executor).
func (p *Player) Published() int { return p.next }

// Summary is the file's summary.
func (p *Player) Summary() Summary { return p.sum }

// schedule arms the timer for the next message, or finishes.
func (p *Player) schedule() {
	if p.done {
		return
	}
	if p.next >= len(p.msgs) {
		p.finish()
		return
	}
	wait := p.start.Add(p.msgs[p.next].at).Sub(p.o.Exec.Now())
	p.timer = p.o.Exec.After(max(wait, 0), p.publishDue)
}

// publishDue publishes every message whose time has come; at most a
// batch at a time, so a full-speed replay leaves the executor room for
// everything else.
func (p *Player) publishDue() {
	now := p.o.Exec.Now()
	for n := 0; p.next < len(p.msgs) && n < 256; n++ {
		m := p.msgs[p.next]
		if p.start.Add(m.at).After(now) {
			break
		}
		if err := p.o.Bus.Publish(m.topic, m.data); err != nil {
			p.o.Log.Warn("replay", "source", "record", "topic", m.topic, "err", err)
		}
		p.next++
	}
	p.schedule()
}

// Stop stops publishing (executor).
func (p *Player) Stop() {
	if p.timer != nil {
		p.timer.Stop()
	}
	p.finish()
}

func (p *Player) finish() {
	if p.done {
		return
	}
	p.done = true
	p.o.Log.Info("replay finished", "source", "record", "file", p.o.File, "published", p.next, "of", len(p.msgs))
	if p.o.Done != nil {
		p.o.Done(p.sum, p.err)
	}
}

// matchesAny reports whether topic matches one of the filters (nil
// matches everything).
func matchesAny(filters []string, topic string) bool {
	if filters == nil {
		return true
	}
	for _, f := range filters {
		if Match(f, topic) {
			return true
		}
	}
	return false
}

// Match reports whether topic matches filter, where "+" is one segment
// and a final "#" one or more, as in bus subscriptions.
func Match(filter, topic string) bool {
	fs := strings.Split(strings.Trim(filter, "/"), "/")
	ts := strings.Split(strings.Trim(topic, "/"), "/")
	for i, f := range fs {
		if f == "#" {
			return i == len(fs)-1 && len(ts) > i
		}
		if i >= len(ts) || (f != "+" && f != ts[i]) {
			return false
		}
	}
	return len(fs) == len(ts)
}
