package roleconfig

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// GPIOFunction is one entry of a role's gpio_mapping: a named function
// (pan_servo, left_rpwm, reset_button ...) on a BCM pin.
type GPIOFunction struct {
	Pin  int    `yaml:"pin"`
	Type string `yaml:"type"` // pwm, output, input, encoder
	// Frequency is the PWM frequency in Hz (50 for hobby servos).
	Frequency float64 `yaml:"frequency,omitempty"`
	Pull      string  `yaml:"pull,omitempty"` // up, down, none
}

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
// it (spec: Role Configuration Format). Sections a role does not use are
// empty; role-specific settings live in Params, which each role decodes.
type Config struct {
	Role     string `yaml:"role"`
	Instance string `yaml:"instance,omitempty"`
	Version  string `yaml:"version"`

	GPIOMapping map[string]GPIOFunction `yaml:"gpio_mapping,omitempty"`
	I2CDevices  []I2CDevice             `yaml:"i2c_devices,omitempty"`
	SPIDevices  []SPIDevice             `yaml:"spi_devices,omitempty"`
	CAN         []Port                  `yaml:"can,omitempty"`
	UART        []Port                  `yaml:"uart,omitempty"`
	Camera      *Camera                 `yaml:"camera,omitempty"`
	// Limits are per-axis [min, max] pairs plus scalars such as max_speed.
	Limits map[string]any `yaml:"limits,omitempty"`
	// Params holds the rest of the file for the role to decode.
	Params map[string]any `yaml:",inline"`
}

// Parse decodes and validates a role configuration. Errors name the field
// at fault.
func Parse(data []byte) (*Config, error) {
	var c Config
	if err := yaml.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("roleconfig: %w", err)
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Validate checks the fields every role relies on.
func (c *Config) Validate() error {
	if c.Role == "" {
		return fmt.Errorf("roleconfig: role: missing")
	}
	if c.Version == "" {
		return fmt.Errorf("roleconfig: version: missing")
	}
	used := map[int]string{}
	for _, name := range c.FunctionNames() {
		f := c.GPIOMapping[name]
		if f.Pin < 0 || f.Pin > 27 {
			return fmt.Errorf("roleconfig: gpio_mapping.%s.pin: %d is not a BCM GPIO (0–27)", name, f.Pin)
		}
		switch f.Type {
		case "pwm":
			if f.Frequency <= 0 {
				return fmt.Errorf("roleconfig: gpio_mapping.%s.frequency: a pwm pin needs a positive frequency in Hz", name)
			}
		case "output", "input", "encoder":
		default:
			return fmt.Errorf("roleconfig: gpio_mapping.%s.type: %q is not one of pwm, output, input, encoder", name, f.Type)
		}
		if other, ok := used[f.Pin]; ok {
			return fmt.Errorf("roleconfig: gpio_mapping.%s.pin: GPIO%d is already used by %s", name, f.Pin, other)
		}
		used[f.Pin] = name
	}
	for i, d := range c.I2CDevices {
		if d.Address < 0x03 || d.Address > 0x77 {
			return fmt.Errorf("roleconfig: i2c_devices[%d].address: 0x%02x is not a 7-bit device address", i, d.Address)
		}
	}
	return nil
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
