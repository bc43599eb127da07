package msg

// PowerState is a motor role's supply as its INA219 measures it (the
// pi-plus power node: battery information and low-voltage warning),
// published on PowerTopic(prefix): "/saint/tracks/power",
// "/saint/arms/left/power". The measured fields follow
// sensor_msgs/BatteryState (voltage, current, present), and the levels
// and flags say where the supply stands against the role configuration's
// warning and cutoff voltages.
type PowerState struct {
	Header  Header  `json:"header"`
	Voltage float32 `json:"voltage"` // V, bus voltage at the monitor
	Current float32 `json:"current"` // A drawn; negative while charging or regenerating
	Power   float32 `json:"power"`   // W, as the monitor computes it
	// Present is false while the monitor does not answer; the readings
	// are then the last good ones.
	Present bool `json:"present"`
	// Overflow says the current was beyond the monitor's range: Current
	// and Power are then at least what they say, not what they are.
	Overflow bool `json:"overflow,omitempty"`
	// Warning is set while the voltage is low (below WarningVoltage, until
	// it has recovered above it by the hysteresis).
	Warning bool `json:"warning"`
	// Cutoff is set while the voltage is too low to run (below
	// CutoffVoltage, until it has recovered above it by the hysteresis):
	// the role holds its actuators in their safe state.
	Cutoff         bool    `json:"cutoff"`
	WarningVoltage float32 `json:"warning_voltage"` // V
	CutoffVoltage  float32 `json:"cutoff_voltage"`  // V
}

// PowerTopic is "{prefix}/power", where the role instance at prefix
// ("/saint/tracks") publishes PowerState.
func PowerTopic(prefix string) string { return prefix + "/power" }

// TopicTracksPower carries the tracks' PowerState.
const TopicTracksPower = "/saint/tracks/power"
