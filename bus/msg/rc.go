package msg

import "strconv"

// RC receiver protocols.
const (
	RCProtocolPWM  = "pwm"
	RCProtocolPPM  = "ppm"
	RCProtocolSBUS = "sbus"
	RCProtocolIBUS = "ibus"
	RCProtocolCRSF = "crsf"
)

// RC failsafe actions: what happens when the transmitter's signal is lost.
const (
	FailsafeHold        = "hold"        // keep the last values (default)
	FailsafeNeutral     = "neutral"     // return every channel to centre
	FailsafeEStop       = "estop"       // stop all motion
	FailsafePassthrough = "passthrough" // let other input sources take over
)

// RCChannelState is RCChannelState.msg: one channel of the RC receiver.
type RCChannelState struct {
	ChannelNumber uint8  `json:"channel_number"` // 1–16
	RawValue      uint16 `json:"raw_value"`      // µs for PWM/PPM/IBUS, 172–1811 for SBUS/CRSF
	// Normalized is -1.0 to 1.0 for centred channels (sticks), 0.0 to 1.0
	// for the others (switches, throttle without centre).
	Normalized float32 `json:"normalized"`
	Failsafe   bool    `json:"failsafe"`
	// LastUpdateNs is when the channel last had a valid signal, in
	// nanoseconds since the Unix epoch.
	LastUpdateNs uint64 `json:"last_update_ns"`
}

// RCChannelProperty names RC channel n (1-based) as the router's inputs
// and routes know it: "channel_2". It is the one place that name is made.
func RCChannelProperty(n int) string { return "channel_" + strconv.Itoa(n) }

// RCReceiverState is RCReceiverState.msg: the receiver and all its
// channels, published by the server on TopicRCState at the frame rate.
type RCReceiverState struct {
	Protocol     string           `json:"protocol"`  // RCProtocolSBUS ...
	Connected    bool             `json:"connected"` // the receiver is talking to us
	Failsafe     bool             `json:"failsafe"`  // the transmitter's signal is lost
	ChannelCount uint8            `json:"channel_count"`
	Channels     []RCChannelState `json:"channels"`
	RSSI         float32          `json:"rssi"` // dBm, when the protocol reports it (CRSF)
	FrameRateHz  uint32           `json:"frame_rate_hz"`
}
