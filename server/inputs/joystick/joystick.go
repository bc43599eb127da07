package joystick

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/saint-os/saint/bus/msg"
	"github.com/saint-os/saint/hal/executor"
	"github.com/saint-os/saint/server/router"
)

// Sink takes the joystick's inputs: the server's *router.Router.
type Sink = router.Sink

// DefaultDevice is the first joystick the Linux joydev driver creates:
// saint-server's --joystick default.
const DefaultDevice = "/dev/input/js0"

// Options configures a Joystick.
type Options struct {
	// Exec is the executor the joystick's state lives on (required).
	Exec *executor.Executor
	// Device is the joystick device, DefaultDevice on a robot (required).
	Device string
	// Router takes the inputs (required). Submit runs on Exec.
	Router Sink
	// Subject names the joystick in its inputs (a route's input subject);
	// default the device's base name, "js0".
	Subject string
	// Open opens the device for reading; nil opens it read-only and
	// non-blocking, so that Stop's Close ends a pending read.
	Open func(path string) (io.ReadCloser, error)
	// Repeat is how often the state is submitted again while nothing
	// changes (default 100 ms, well inside the router's source timeout).
	Repeat time.Duration
	// MinBackoff and MaxBackoff bound the wait before reopening a device
	// that went away or could not be opened (default 250 ms and 5 s); it
	// doubles at each failure.
	MinBackoff, MaxBackoff time.Duration
	Log                    *slog.Logger
}

// Status is what the joystick knows.
type Status struct {
	Device    string             `json:"device"`
	Subject   string             `json:"subject"`
	Connected bool               `json:"connected"`
	Error     string             `json:"error,omitempty"` // why it is not connected
	Events    uint64             `json:"events"`
	Opens     int                `json:"opens"` // successful opens, so reconnections are visible
	Values    map[string]float64 `json:"values"`
}

// Joystick reads one joystick device. Start, Stop and Status run on the
// executor.
type Joystick struct {
	o  Options
	ex *executor.Executor

	running   bool
	gen       uint64 // bumped at each open and at Stop; stale posts are ignored
	file      io.ReadCloser
	connected bool
	lastErr   string
	backoff   time.Duration
	reopen    *executor.Timer
	repeat    *executor.Timer
	axes      map[uint8]float64
	buttons   map[uint8]float64
	events    uint64
	opens     int
}

// New checks o and returns a joystick that is not yet reading.
func New(o Options) (*Joystick, error) {
	if o.Exec == nil || o.Router == nil || o.Device == "" {
		return nil, errors.New("joystick: Options.Exec, Options.Router and Options.Device are required")
	}
	if o.Subject == "" {
		o.Subject = filepath.Base(o.Device)
	}
	if o.Open == nil {
		o.Open = openDevice
	}
	if o.Repeat <= 0 {
		o.Repeat = 100 * time.Millisecond
	}
	if o.MinBackoff <= 0 {
		o.MinBackoff = 250 * time.Millisecond
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(5*time.Second, o.MinBackoff)
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &Joystick{o: o, ex: o.Exec, axes: map[uint8]float64{}, buttons: map[uint8]float64{}, backoff: o.MinBackoff}, nil
}

func openDevice(path string) (io.ReadCloser, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// Start begins reading the device; one that is absent is retried.
func (j *Joystick) Start() error {
	if j.running {
		return errors.New("joystick: already started")
	}
	j.running = true
	j.open()
	return nil
}

// Stop closes the device and stops submitting.
func (j *Joystick) Stop() {
	j.running = false
	j.gen++
	j.lost(nil)
	if j.reopen != nil {
		j.reopen.Stop()
		j.reopen = nil
	}
}

// open opens the device off the executor (opening may block on some
// devices) and starts its reader.
func (j *Joystick) open() {
	j.gen++
	gen := j.gen
	go func() {
		f, err := j.o.Open(j.o.Device)
		j.ex.Post(func() {
			if gen != j.gen || !j.running {
				if f != nil {
					go func() { _ = f.Close() }()
				}
				return
			}
			if err != nil {
				j.failed(err)
				return
			}
			j.file, j.connected, j.lastErr = f, true, ""
			j.opens++
			j.o.Log.Info("joystick connected", "source", "joystick", "device", j.o.Device)
			j.repeat = j.ex.Every(j.o.Repeat, j.submit)
			go j.read(f, gen)
		})
	}()
}

// read reads events until the device fails, posting them to the executor.
func (j *Joystick) read(f io.Reader, gen uint64) {
	var dec Decoder
	buf := make([]byte, 64*EventSize)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			evs := dec.Feed(nil, buf[:n])
			j.ex.Post(func() {
				if gen == j.gen {
					j.apply(evs)
				}
			})
		}
		if err == nil && n == 0 {
			err = io.EOF
		}
		if err != nil {
			j.ex.Post(func() {
				if gen == j.gen && j.running {
					j.failed(err)
				}
			})
			return
		}
	}
}

// apply takes events into the state and submits it.
func (j *Joystick) apply(evs []Event) {
	for _, e := range evs {
		j.events++
		switch e.Kind() {
		case TypeAxis:
			j.axes[e.Number] = Normalize(e.Value)
		case TypeButton:
			v := 0.0
			if e.Value != 0 {
				v = 1
			}
			j.buttons[e.Number] = v
		}
	}
	j.submit()
}

// values is the state as router properties.
func (j *Joystick) values() map[string]float64 {
	v := make(map[string]float64, len(j.axes)+len(j.buttons))
	for n, x := range j.axes {
		v[fmt.Sprintf("axis_%d", n)] = x
	}
	for n, x := range j.buttons {
		v[fmt.Sprintf("button_%d", n)] = x
	}
	return v
}

func (j *Joystick) submit() {
	if !j.connected || j.events == 0 {
		return
	}
	_ = j.o.Router.Submit(router.Input{Source: msg.SourceJoystick, Subject: j.o.Subject, Values: j.values()})
}

// failed handles a device that could not be opened or stopped reading:
// forget its state (its routes time out) and reopen it after the backoff.
func (j *Joystick) failed(err error) {
	was := j.connected
	j.lost(err)
	switch {
	case was && errors.Is(err, syscall.ENODEV):
		j.o.Log.Warn("joystick unplugged", "source", "joystick", "device", j.o.Device)
	case was:
		j.o.Log.Warn("joystick lost", "source", "joystick", "device", j.o.Device, "err", err)
	default:
		j.o.Log.Debug("joystick not available", "source", "joystick", "device", j.o.Device, "err", err)
	}
	if !was {
		j.backoff = min(2*j.backoff, j.o.MaxBackoff)
	} else {
		j.backoff = j.o.MinBackoff
	}
	j.reopen = j.ex.After(j.backoff, func() {
		j.reopen = nil
		if j.running {
			j.open()
		}
	})
}

// lost closes the device and forgets the state.
func (j *Joystick) lost(err error) {
	if j.file != nil {
		f := j.file
		j.file = nil
		go func() { _ = f.Close() }() // ends the reader's pending Read
	}
	if j.repeat != nil {
		j.repeat.Stop()
		j.repeat = nil
	}
	j.connected = false
	if err != nil {
		j.lastErr = err.Error()
	}
	j.events = 0
	clear(j.axes)
	clear(j.buttons)
}

// Status returns the joystick's state.
func (j *Joystick) Status() Status {
	return Status{Device: j.o.Device, Subject: j.o.Subject, Connected: j.connected, Error: j.lastErr,
		Events: j.events, Opens: j.opens, Values: j.values()}
}
