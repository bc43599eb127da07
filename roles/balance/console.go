package balance

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// balanceHelp is the reference's USB debug command list.
const balanceHelp = `help                   list commands
status                 print pitch, PID state, CAN stats, UART stats
pid <Kp> <Ki> <Kd>     set PID gains
arm                    arm (if upright and safe)
disarm                 disarm immediately
estop                  emergency stop (requires re-arm)
tilt_limit <deg>       set tilt cutoff angle (default 25)
speed_limit <pct>      set speed cap percentage (default 10)
can_stats              CAN bus counters (tx/rx/errors/busoff)
uart_stats             inter-board UART frame counters
calibrate              take the present pitch as level (disarmed, still, on level ground) and store it
reboot                 soft reboot`

// Console runs one line of the balance board's debug console (the
// reference's USB serial commands), served on /saint/balance/console. It
// returns the output and whether the command succeeded. Run it on the
// executor.
func (b *Balance) Console(line string) (string, bool) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return "empty command; try help", false
	}
	now := b.ex.Now()
	args := f[1:]
	nums := func(n int) ([]float64, error) {
		if len(args) != n {
			return nil, fmt.Errorf("%s: want %d argument(s), got %d", f[0], n, len(args))
		}
		v := make([]float64, n)
		for i, a := range args {
			x, err := strconv.ParseFloat(a, 64)
			if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%s: argument %d %q is not a number", f[0], i+1, a)
			}
			v[i] = x
		}
		return v, nil
	}
	switch f[0] {
	case "help":
		return balanceHelp, true
	case "status":
		return b.consoleStatus(), true
	case "pid":
		v, err := nums(3)
		if err == nil {
			err = b.setGains(v[0], v[1], v[2])
		}
		if err != nil {
			return "pid: " + err.Error(), false
		}
		return fmt.Sprintf("pid: Kp=%g Ki=%g Kd=%g", v[0], v[1], v[2]), true
	case "arm":
		if b.state == StateArmed {
			return "arm: already armed", true
		}
		if err := b.arm(now); err != nil {
			return "arm: refused: " + err.Error(), false
		}
		return "arm: armed", true
	case "disarm":
		b.disarm()
		return "disarm: motors off", true
	case "estop":
		b.faults |= FaultEStop
		b.state = StateEStop
		b.motorsOff()
		return "estop: motors off; re-arm to continue", true
	case "tilt_limit":
		v, err := nums(1)
		if err == nil {
			err = b.setTiltLimit(v[0])
		}
		if err != nil {
			return "tilt_limit: " + err.Error(), false
		}
		return fmt.Sprintf("tilt_limit: %g°", v[0]), true
	case "speed_limit":
		v, err := nums(1)
		if err == nil && v[0] != math.Trunc(v[0]) {
			err = fmt.Errorf("%g is not a whole percentage", v[0])
		}
		if err == nil {
			err = b.setSpeedLimit(int(v[0]))
		}
		if err != nil {
			return "speed_limit: " + err.Error(), false
		}
		return fmt.Sprintf("speed_limit: %d %%", b.speedLimit), true
	case "can_stats":
		return b.canStats(), true
	case "uart_stats":
		return b.uartStats(), true
	case "calibrate":
		return b.calibrateLevel()
	case "reboot":
		b.reboot()
		return "reboot: disarmed, limits and gains from the configuration", true
	}
	return fmt.Sprintf("unknown command %q; try help", f[0]), false
}

func (b *Balance) consoleStatus() string {
	s := b.State()
	faults := strings.Join(s.Faults, ",")
	if faults == "" {
		faults = "none"
	}
	return fmt.Sprintf("state %s mode %s source %s\npitch %.2f° rate %.1f°/s speed %.3f m/s target %.3f m/s\n"+
		"pid Kp=%g Ki=%g Kd=%g out %.2f A (L %.2f A, R %.2f A)\ntilt_limit %g° speed_limit %d %% faults %s\n%s\n%s",
		s.State, s.Mode, s.Source, s.Pitch, s.PitchRate, s.Speed, s.TargetSpeed,
		s.Kp, s.Ki, s.Kd, s.PIDOut, s.CurrentLeft, s.CurrentRight, s.TiltLimit, s.SpeedLimit, faults,
		b.canStats(), b.uartStats()) + "\n" + b.levelStatus()
}

func (b *Balance) canStats() string {
	// A SocketCAN-style bus-off is not visible through hal/can; send
	// errors are what the interface reports.
	return fmt.Sprintf("can: tx %d rx %d errors %d bad %d busoff 0", b.canTx, b.canRx, b.canErr, b.canBad)
}

func (b *Balance) uartStats() string {
	st := b.dec.Stats()
	return fmt.Sprintf("uart: rx frames %d crc_errors %d bad_length %d unknown %d discarded %d bytes %d; tx frames %d errors %d",
		st.Frames, st.CRCErrors, st.BadLength, st.Unknown, st.Discarded, st.BytesTotal, b.linkTx, b.linkTxE)
}
