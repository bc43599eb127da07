package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"time"

	"github.com/saint-os/saint/server/inputs/livelink"
)

const livelinkUsage = "usage: livelink replay FILE --to HOST:PORT [--speed X] [--loop] [--subject NAME]"

// livelinkCmd runs the livelink subcommands.
func livelinkCmd(args []string, out io.Writer) error {
	if len(args) == 0 || args[0] != "replay" {
		return errors.New(livelinkUsage)
	}
	f := flag.NewFlagSet("livelink replay", flag.ContinueOnError)
	to := f.String("to", "", "where to send the packets, HOST:PORT (the server's Live Link Face port, 11111)")
	speed := f.Float64("speed", 1, "replay speed: 1 = as recorded, 2 = twice as fast, 0 = as fast as possible")
	loop := f.Bool("loop", false, "start again at the end, until interrupted")
	subject := f.String("subject", "", "send under this subject name instead of the recorded one (the facecap_head preset listens to FaceCapture)")
	pos, err := parseInterleaved(f, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 || *to == "" {
		return errors.New(livelinkUsage)
	}
	if *speed < 0 {
		return fmt.Errorf("--speed: want 0 or more, got %v", *speed)
	}
	data, err := os.ReadFile(pos[0])
	if err != nil {
		return err
	}
	c, err := net.Dial("udp", *to)
	if err != nil {
		return fmt.Errorf("--to: %w", err)
	}
	defer c.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	r, err := newReplay(data, *subject)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	fmt.Fprintf(out, "%s: %d packets, %s at %v fps (%d bytes rejected)\n", pos[0], len(r.packets), r.duration(), r.packets[0].Rate(), r.rejected)
	start := time.Now()
	n, err := r.run(ctx, c, *speed, *loop, sleepCtx)
	fmt.Fprintf(out, "sent %d packets in %s\n", n, time.Since(start).Round(time.Millisecond))
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// replay is a capture's good packets, ready to send.
type replay struct {
	packets  []livelink.FacePacket
	wire     [][]byte
	rejected int
}

func newReplay(data []byte, subject string) (*replay, error) {
	r := &replay{}
	for _, s := range livelink.SplitCapture(data) {
		if s.Err != nil {
			r.rejected += len(s.Bytes)
			continue
		}
		p := s.Packet
		b := s.Bytes
		if subject != "" {
			p.Subject = subject
			b = livelink.AppendFacePacket(nil, &p)
		}
		r.packets = append(r.packets, p)
		r.wire = append(r.wire, b)
	}
	if len(r.packets) == 0 {
		return nil, errors.New("no Live Link Face packet in the file")
	}
	return r, nil
}

// gap is how long after packet i-1 packet i was recorded, from their
// frame times. A capture keeps no arrival times, so the frame time is the
// clock; where it runs backwards or jumps by more than a second (the app
// restarted, the timecode wrapped) the gap is one frame.
func (r *replay) gap(i int) time.Duration {
	if i == 0 {
		return 0
	}
	d := r.packets[i].Seconds() - r.packets[i-1].Seconds()
	if d < 0 || d > 1 {
		return r.frame(i)
	}
	return time.Duration(d * float64(time.Second))
}

// frame is one frame period at packet i's rate.
func (r *replay) frame(i int) time.Duration {
	rate := r.packets[i].Rate()
	if rate <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / rate)
}

// duration is the capture's length as recorded.
func (r *replay) duration() time.Duration {
	var d time.Duration
	for i := range r.packets {
		d += r.gap(i)
	}
	return d
}

// run sends the packets at their recorded pace divided by speed (0: no
// pause), once or until ctx ends with loop; it returns how many it sent.
// sleep waits until a moment or ctx's end.
func (r *replay) run(ctx context.Context, w io.Writer, speed float64, loop bool, sleep func(context.Context, time.Time) error) (int, error) {
	sent := 0
	next := time.Now()
	for {
		for i, b := range r.wire {
			if speed > 0 {
				gap := r.gap(i)
				if i == 0 && sent > 0 {
					gap = r.frame(0) // loop back after one frame
				}
				next = next.Add(time.Duration(float64(gap) / speed))
				if err := sleep(ctx, next); err != nil {
					return sent, err
				}
			} else if err := ctx.Err(); err != nil {
				return sent, err
			}
			if _, err := w.Write(b); err != nil {
				return sent, err
			}
			sent++
		}
		if !loop {
			return sent, nil
		}
	}
}

// sleepCtx waits until t or ctx's end. Pacing against absolute moments
// keeps a long replay from drifting.
func sleepCtx(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}
