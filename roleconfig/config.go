package roleconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/saint-os/saint/internal/fielderr"
	"github.com/saint-os/saint/roles/rolespec"
)

// GPIOFunction is one entry of a role's gpio_mapping: a named function
// (pan_servo, left_rpwm, reset_button ...) on a BCM pin.
type GPIOFunction struct {
	Pin  int    `yaml:"pin"`
	Type string `yaml:"type"` // pwm, output, enable, input, encoder
	// Frequency is the PWM frequency in Hz (50 for hobby servos).
	Frequency float64 `yaml:"frequency,omitempty"`
	Pull      string  `yaml:"pull,omitempty"` // up, down, none
	// Active is an enable's active level: high (the default) or low (a
	// PCA9685's OE). An enable is driven active for as long as the role
	// runs and inactive when it stops; wire a resistor that pulls it
	// inactive, so a Pi that is not running the role disables what it
	// enables (docs/hardware.md).
	Active string `yaml:"active,omitempty"`
}

// ActiveLow reports whether f is an enable that is active low.
func (f GPIOFunction) ActiveLow() bool { return f.Active == "low" }

// PWMOutput is one entry of a role's pwm_outputs: a named PWM function
// (roll_servo, left_rpwm ...) on a channel of a PCA9685, for the outputs
// beyond the Pi's two hardware PWM channels. Every channel of one chip runs
// at the chip's one frequency.
type PWMOutput struct {
	// Bus is the I²C bus; nil means 1, the header's.
	Bus *int `yaml:"bus,omitempty"`
	// PCA9685 is the chip's I²C address (0x40–0x77); the chip must be
	// listed in i2c_devices with driver pca9685.
	PCA9685 int `yaml:"pca9685"`
	// Channel is the output, 0–15.
	Channel int `yaml:"channel"`
	// Frequency is the PWM frequency in Hz: 24–1526, what the chip's
	// prescaler reaches (50 for hobby servos).
	Frequency float64 `yaml:"frequency"`
}

// I2CBus returns the output's I²C bus, 1 unless the configuration says
// otherwise.
func (o PWMOutput) I2CBus() int {
	if o.Bus == nil {
		return 1
	}
	return *o.Bus
}

// PCA9685 frequency range: the prescaler's 3–255 from the 25 MHz oscillator.
const (
	PCA9685MinHz = 24
	PCA9685MaxHz = 1526
)

// I2CDevice is a required device on an I²C bus.
type I2CDevice struct {
	Bus     int    `yaml:"bus"`
	Address int    `yaml:"address"`
	Driver  string `yaml:"driver"`
	Purpose string `yaml:"purpose"`
}

// SPIDevice is a required device on an SPI bus.
type SPIDevice struct {
	Bus     int    `yaml:"bus"`
	CS      int    `yaml:"cs"`
	Driver  string `yaml:"driver"`
	Purpose string `yaml:"purpose"`
}

// Port is a required CAN interface or UART.
type Port struct {
	Name    string `yaml:"name"`
	Driver  string `yaml:"driver,omitempty"`
	Purpose string `yaml:"purpose,omitempty"`
}

// Camera is the camera section of a head configuration.
type Camera struct {
	Enabled    bool  `yaml:"enabled"`
	Resolution []int `yaml:"resolution,omitempty"`
	Framerate  int   `yaml:"framerate,omitempty"`
	// Required makes adoption fail on a board without a camera.
	Required bool `yaml:"required,omitempty"`
}

// Config is a role configuration as the server's configs/ directory holds
// it. Sections a role does not use are empty; role-specific settings live
// in Params, which each role decodes.
type Config struct {
	Role     string `yaml:"role"`
	Instance string `yaml:"instance,omitempty"`
	Version  string `yaml:"version"`

	GPIOMapping map[string]GPIOFunction `yaml:"gpio_mapping,omitempty"`
	PWMOutputs  map[string]PWMOutput    `yaml:"pwm_outputs,omitempty"`
	I2CDevices  []I2CDevice             `yaml:"i2c_devices,omitempty"`
	SPIDevices  []SPIDevice             `yaml:"spi_devices,omitempty"`
	CAN         []Port                  `yaml:"can,omitempty"`
	UART        []Port                  `yaml:"uart,omitempty"`
	Camera      *Camera                 `yaml:"camera,omitempty"`
	// Limits are per-axis [min, max] pairs plus scalars such as max_speed.
	Limits map[string]any `yaml:"limits,omitempty"`
	// Params holds the rest of the file for the role to decode.
	Params map[string]any `yaml:",inline"`

	// file and root are where the configuration came from, for errors
	// that name the line.
	file string
	root *yaml.Node
}

// Parse decodes and validates a role configuration. Errors name the line
// and the field at fault (a *FieldError in a *FileError for validation
// failures).
func Parse(data []byte) (*Config, error) {
	return ParseFile("", data)
}

// MaxFileBytes bounds a role configuration (the largest shipped is about
// 5 KB): a node parses what a server sends it, and the work and memory
// of parsing and decoding grow with the file.
const MaxFileBytes = 256 << 10

// ParseFile is Parse for a named file: errors start with the file name
// and the line, "tracks.yaml:41: gpio_mapping.left_rpwm.pin: ...".
func ParseFile(file string, data []byte) (*Config, error) {
	if len(data) > MaxFileBytes {
		return nil, fileErr(file, 0, "", fmt.Sprintf("%d bytes, more than the %d a role configuration may have", len(data), MaxFileBytes))
	}
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, fileErr(file, yamlErrorLine(err), "", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var c Config
	if len(root.Content) == 0 {
		return nil, fileErr(file, 1, "role", "missing (the file is empty)")
	}
	if err := root.Content[0].Decode(&c); err != nil {
		return nil, fileErr(file, yamlErrorLine(err), "", strings.TrimPrefix(err.Error(), "yaml: "))
	}
	c.file, c.root = file, root.Content[0]
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// FieldError is a configuration field's error: the dotted field
// ("gpio_mapping.pan_servo.pin", "i2c_devices[1].address", "" for the
// file as a whole) and what was expected. It is the project's field
// error; a configuration's are wrapped in a *FileError, which places them
// in the file.
type FieldError = fielderr.Error

// FileError places an error in a configuration file: the file (when
// known) and the line (0 when unknown) of a *FieldError, as os.PathError
// places an error at a path.
type FileError struct {
	File string
	Line int
	Err  error
}

func (e *FileError) Error() string {
	var b strings.Builder
	b.WriteString("roleconfig: ")
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	if e.Line > 0 {
		b.WriteString(strconv.Itoa(e.Line))
		b.WriteString(": ")
	} else if e.File != "" {
		b.WriteString(" ")
	}
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the *FieldError.
func (e *FileError) Unwrap() error { return e.Err }

// fileErr is a *FieldError for field placed at file and line.
func fileErr(file string, line int, field, message string) error {
	return &FileError{File: file, Line: line, Err: &FieldError{Field: field, Message: message}}
}

// yamlErrorLine digs the line number out of a yaml.v3 error ("yaml: line
// 7: ..."), 0 when it has none.
func yamlErrorLine(err error) int {
	s := err.Error()
	i := strings.Index(s, "line ")
	if i < 0 {
		return 0
	}
	s = s[i+5:]
	j := strings.IndexFunc(s, func(r rune) bool { return r < '0' || r > '9' })
	if j < 0 {
		j = len(s)
	}
	n, _ := strconv.Atoi(s[:j])
	return n
}

// Line returns the line of a dotted field ("gpio_mapping.pan_servo.pin",
// "i2c_devices[1].address", "speed_loop.kp") in the file the configuration
// was parsed from, or of its closest existing parent; 0 when unknown. Roles
// use it to name the line of a bad parameter.
func (c *Config) Line(field string) int {
	n := c.root
	if n == nil {
		return 0
	}
	line := n.Line
	for _, part := range splitField(field) {
		var next *yaml.Node
		switch {
		case n.Kind == yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == part {
					next, line = n.Content[i+1], n.Content[i].Line
					break
				}
			}
		case n.Kind == yaml.SequenceNode:
			if i, err := strconv.Atoi(part); err == nil && i >= 0 && i < len(n.Content) {
				next = n.Content[i]
				line = next.Line
			}
		}
		if next == nil {
			return line
		}
		n = next
	}
	return line
}

// Errorf returns a *FieldError for field, in a *FileError with its file
// and line: what a role returns when a parameter of its configuration is
// wrong.
func (c *Config) Errorf(field, format string, args ...any) error {
	return fileErr(c.file, c.Line(field), field, fmt.Sprintf(format, args...))
}

// Between checks a number of the configuration: v must lie in [min, max].
// The error names the file, the line and the field, and the range:
// "tracks.yaml:87: cmd_timeout_ms: expected between 20 and 5000 ms, got 0".
// unit ("ms", "s") follows the numbers; NaN and infinities are refused.
func (c *Config) Between(field string, v, min, max float64, unit string) error {
	if v >= min && v <= max {
		return nil
	}
	if unit != "" {
		unit = " " + unit
	}
	return c.Errorf(field, "expected between %g and %g%s, got %g", min, max, unit, v)
}

// DurationMS is Between for a duration in milliseconds: the duration of v
// ms when it lies in [min, max] ms.
func (c *Config) DurationMS(field string, v, min, max float64) (time.Duration, error) {
	if err := c.Between(field, v, min, max, "ms"); err != nil {
		return 0, err
	}
	return time.Duration(v * float64(time.Millisecond)), nil
}

// splitField splits "i2c_devices[1].address" into "i2c_devices", "1",
// "address".
func splitField(field string) []string {
	field = strings.ReplaceAll(field, "[", ".")
	field = strings.ReplaceAll(field, "]", "")
	return strings.Split(field, ".")
}

// Validate checks the fields every role relies on, section by section,
// and returns the first problem; the error is a *FieldError.
func (c *Config) Validate() error {
	for _, check := range []func() error{
		c.validateRole, c.validateGPIOMapping, c.validateI2CDevices, c.validatePWMOutputs,
		c.validateSPIDevices, c.validateLinks, c.validateCamera, c.validateLimits, c.validateParams,
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateRole checks role, instance and version.
func (c *Config) validateRole() error {
	if c.Role == "" {
		return c.Errorf("role", "missing: one of %s", strings.Join(rolespec.Names(), ", "))
	}
	spec, ok := rolespec.Lookup(c.Role)
	if !ok {
		return c.Errorf("role", "%q is not one of %s", c.Role, strings.Join(rolespec.Names(), ", "))
	}
	// A single role reads no instance, so whatever one says is not
	// checked.
	if spec.Instances != rolespec.Single && !spec.ValidInstance(c.Instance) {
		return c.Errorf("instance", "a %s configuration needs %s, got %q", c.Role, spec.InstanceRule(), c.Instance)
	}
	if c.Version == "" {
		return c.Errorf("version", "missing: the configuration's version, such as \"1.0.0\"")
	}
	return nil
}

// validateGPIOMapping checks each function's pin, type, active level and
// pull, and that no two share a pin.
func (c *Config) validateGPIOMapping() error {
	used := map[int]string{}
	for _, name := range c.FunctionNames() {
		f := c.GPIOMapping[name]
		field := "gpio_mapping." + name
		if f.Pin < 0 || f.Pin > 27 {
			return c.Errorf(field+".pin", "%d is not a BCM GPIO (0–27)", f.Pin)
		}
		switch f.Type {
		case "pwm":
			if f.Frequency <= 0 {
				return c.Errorf(field+".frequency", "a pwm pin needs a positive frequency in Hz")
			}
		case "output", "input", "encoder", "enable":
		default:
			return c.Errorf(field+".type", "%q is not one of pwm, output, enable, input, encoder", f.Type)
		}
		switch {
		case f.Active != "" && f.Type != "enable":
			return c.Errorf(field+".active", "only an enable has an active level (this is a %s)", f.Type)
		case f.Active != "" && f.Active != "high" && f.Active != "low":
			return c.Errorf(field+".active", "%q is not one of high, low", f.Active)
		}
		switch f.Pull {
		case "", "up", "down", "none":
		default:
			return c.Errorf(field+".pull", "%q is not one of up, down, none", f.Pull)
		}
		if other, ok := used[f.Pin]; ok {
			return c.Errorf(field+".pin", "GPIO%d is already used by %s", f.Pin, other)
		}
		used[f.Pin] = name
	}
	return nil
}

// validateI2CDevices checks each I²C device's bus, address and driver.
func (c *Config) validateI2CDevices() error {
	for i, d := range c.I2CDevices {
		field := fmt.Sprintf("i2c_devices[%d]", i)
		if d.Bus < 0 {
			return c.Errorf(field+".bus", "%d is not an I²C bus number (0 or more)", d.Bus)
		}
		if d.Address < 0x03 || d.Address > 0x77 {
			return c.Errorf(field+".address", "0x%02x is not a 7-bit device address (0x03–0x77)", d.Address)
		}
		if d.Driver == "" {
			return c.Errorf(field+".driver", "missing: the chip's driver, such as mpu6050")
		}
	}
	return nil
}

// validateSPIDevices checks each SPI device's bus, chip select and driver.
func (c *Config) validateSPIDevices() error {
	for i, d := range c.SPIDevices {
		field := fmt.Sprintf("spi_devices[%d]", i)
		if d.Bus < 0 {
			return c.Errorf(field+".bus", "%d is not an SPI bus number (0 or more)", d.Bus)
		}
		if d.CS < 0 {
			return c.Errorf(field+".cs", "%d is not a chip select (0 or more)", d.CS)
		}
		if d.Driver == "" {
			return c.Errorf(field+".driver", "missing: the chip's driver, such as qmi8658")
		}
	}
	return nil
}

// validateLinks checks the CAN interfaces' and serial ports' names.
func (c *Config) validateLinks() error {
	for i, p := range c.CAN {
		if !strings.HasPrefix(p.Name, "can") && !strings.HasPrefix(p.Name, "vcan") {
			return c.Errorf(fmt.Sprintf("can[%d].name", i), "want a CAN interface such as can0, got %q", p.Name)
		}
	}
	for i, p := range c.UART {
		if p.Name == "" {
			return c.Errorf(fmt.Sprintf("uart[%d].name", i), "missing: the serial port, such as ttyAMA0")
		}
	}
	return nil
}

// validateCamera checks the camera's resolution and frame rate.
func (c *Config) validateCamera() error {
	if cam := c.Camera; cam != nil {
		if len(cam.Resolution) != 0 && (len(cam.Resolution) != 2 || cam.Resolution[0] <= 0 || cam.Resolution[1] <= 0) {
			return c.Errorf("camera.resolution", "want [width, height] in pixels, got %v", cam.Resolution)
		}
		if cam.Framerate < 0 {
			return c.Errorf("camera.framerate", "want frames per second (positive), got %d", cam.Framerate)
		}
	}
	return nil
}

// validateLimits checks that each limit is a number or a [min, max] pair.
func (c *Config) validateLimits() error {
	for _, name := range sortedKeys(c.Limits) {
		field := "limits." + name
		switch v := c.Limits[name].(type) {
		case int, float64:
		case []any:
			if len(v) != 2 {
				return c.Errorf(field, "want a number or a [min, max] pair, got %d values", len(v))
			}
			lo, ok1 := number(v[0])
			hi, ok2 := number(v[1])
			if !ok1 || !ok2 {
				return c.Errorf(field, "want a [min, max] pair of numbers, got %v", v)
			}
			if lo > hi {
				return c.Errorf(field, "min %v is above max %v", lo, hi)
			}
		default:
			return c.Errorf(field, "want a number or a [min, max] pair, got %v", v)
		}
	}
	return nil
}

// validateParams checks the parameters every role reads.
func (c *Config) validateParams() error {
	if v, ok := c.Params["state_rate_hz"]; ok {
		if hz, isNum := number(v); !isNum || hz <= 0 {
			return c.Errorf("state_rate_hz", "want a positive rate in Hz, got %v", v)
		}
	}
	return nil
}

// validatePWMOutputs checks pwm_outputs: a listed chip, a free channel, one
// frequency per chip, a name no gpio_mapping function has.
func (c *Config) validatePWMOutputs() error {
	type chipKey struct{ bus, addr int }
	channels := map[chipKey]map[int]string{}
	freqs := map[chipKey]string{}
	for _, name := range c.PWMOutputNames() {
		o := c.PWMOutputs[name]
		field := "pwm_outputs." + name
		if _, ok := c.GPIOMapping[name]; ok {
			return c.Errorf(field, "gpio_mapping has a function of the same name")
		}
		bus := o.I2CBus()
		if bus < 0 {
			return c.Errorf(field+".bus", "%d is not an I²C bus number (0 or more)", bus)
		}
		if o.PCA9685 < 0x40 || o.PCA9685 > 0x77 {
			return c.Errorf(field+".pca9685", "0x%02x is not a PCA9685 address (0x40–0x77)", o.PCA9685)
		}
		listed := false
		for _, d := range c.I2CDevices {
			listed = listed || (d.Bus == bus && d.Address == o.PCA9685 && d.Driver == "pca9685")
		}
		if !listed {
			return c.Errorf(field+".pca9685", "no PCA9685 at 0x%02x on bus %d in i2c_devices (add {bus: %d, address: 0x%02x, driver: pca9685})", o.PCA9685, bus, bus, o.PCA9685)
		}
		if o.Channel < 0 || o.Channel > 15 {
			return c.Errorf(field+".channel", "%d is not a PCA9685 channel (0–15)", o.Channel)
		}
		if o.Frequency < PCA9685MinHz || o.Frequency > PCA9685MaxHz {
			return c.Errorf(field+".frequency", "%v Hz is outside what a PCA9685 runs (%d–%d Hz)", o.Frequency, PCA9685MinHz, PCA9685MaxHz)
		}
		k := chipKey{bus, o.PCA9685}
		if other, ok := freqs[k]; ok && c.PWMOutputs[other].Frequency != o.Frequency {
			return c.Errorf(field+".frequency", "%v Hz, but %s on the same PCA9685 runs at %v Hz and the chip has one frequency", o.Frequency, other, c.PWMOutputs[other].Frequency)
		}
		freqs[k] = name
		if channels[k] == nil {
			channels[k] = map[int]string{}
		}
		if other, ok := channels[k][o.Channel]; ok {
			return c.Errorf(field+".channel", "channel %d of the PCA9685 at 0x%02x is already used by %s", o.Channel, o.PCA9685, other)
		}
		channels[k][o.Channel] = name
	}
	return nil
}

// PWMOutputNames returns the pwm_outputs names in a stable order.
func (c *Config) PWMOutputNames() []string {
	names := make([]string, 0, len(c.PWMOutputs))
	for n := range c.PWMOutputs {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// FunctionNames returns the gpio_mapping names in a stable order.
func (c *Config) FunctionNames() []string {
	names := make([]string, 0, len(c.GPIOMapping))
	for n := range c.GPIOMapping {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Requirement is a peripheral a role needs before it can start.
type Requirement struct {
	Type    string // "i2c", "spi", "can", "uart", "camera"
	Address string // as board.Peripheral reports it: "1:0x68", "0.0", "can0", "ttyAMA0", "csi"
	What    string // human description: "mpu6050 (imu)"
}

// Requirements lists the peripherals the configuration requires.
func (c *Config) Requirements() []Requirement {
	var rs []Requirement
	for _, d := range c.I2CDevices {
		rs = append(rs, Requirement{Type: "i2c", Address: I2CAddress(d.Bus, d.Address), What: describe(d.Driver, d.Purpose)})
	}
	for _, d := range c.SPIDevices {
		rs = append(rs, Requirement{Type: "spi", Address: strconv.Itoa(d.Bus) + "." + strconv.Itoa(d.CS), What: describe(d.Driver, d.Purpose)})
	}
	for _, p := range c.CAN {
		rs = append(rs, Requirement{Type: "can", Address: p.Name, What: describe(p.Driver, p.Purpose)})
	}
	for _, p := range c.UART {
		rs = append(rs, Requirement{Type: "uart", Address: p.Name, What: describe(p.Driver, p.Purpose)})
	}
	if c.Camera != nil && c.Camera.Enabled && c.Camera.Required {
		rs = append(rs, Requirement{Type: "camera", What: "camera"})
	}
	return rs
}

// I2CAddress formats an I²C device address the way boards report it:
// "1:0x68".
func I2CAddress(bus, addr int) string {
	return fmt.Sprintf("%d:0x%02x", bus, addr)
}

func describe(driver, purpose string) string {
	switch {
	case driver == "":
		return purpose
	case purpose == "":
		return driver
	}
	return driver + " (" + purpose + ")"
}

// Checksum returns the sha256 of a configuration file's bytes, hex encoded,
// as manifest.json lists it.
func Checksum(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

// SplitKey splits a configuration key (msg.RoleKey: "arms_left") into ("arms", "left"); keys without an
// instance return it empty.
func SplitKey(key string) (role, instance string) {
	if i := strings.IndexByte(key, '_'); i > 0 {
		return key[:i], key[i+1:]
	}
	return key, ""
}
