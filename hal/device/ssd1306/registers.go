package ssd1306

// The SSD1306's command set, as its datasheet (section 9, command table)
// names the commands the driver sends. Commands and their arguments follow
// a control byte saying whether commands or display data come next.

// Control bytes.
const (
	ctrlCommands = 0x00
	ctrlData     = 0x40
)

// Commands.
const (
	cmdMemoryMode    = 0x20 // then the addressing mode
	cmdColumnAddr    = 0x21 // then the first and last column
	cmdPageAddr      = 0x22 // then the first and last page
	cmdScrollOff     = 0x2E
	cmdStartLine     = 0x40 // | the start line, 0–63
	cmdContrast      = 0x81 // then the contrast, 0–255
	cmdChargePump    = 0x8D // then chargePumpOn or off
	cmdSegRemap      = 0xA0 // | 1: column 127 at SEG0
	cmdShowRAM       = 0xA4 // the display follows the RAM (0xA5 lights every pixel)
	cmdNormal        = 0xA6 // not inverted
	cmdMultiplex     = 0xA8 // then the multiplex ratio, rows − 1
	cmdDisplayOff    = 0xAE
	cmdDisplayOn     = 0xAF
	cmdComScanUp     = 0xC0 // COM0 to COM[N−1]
	cmdComScanDown   = 0xC8 // COM[N−1] to COM0
	cmdDisplayOffset = 0xD3 // then the vertical shift
	cmdClockDiv      = 0xD5 // then divide ratio and oscillator frequency
	cmdPrecharge     = 0xD9 // then the phase 1 and phase 2 periods
	cmdComPins       = 0xDA // then the COM pins' configuration
	cmdVcomDeselect  = 0xDB // then the VCOMH deselect level
)

// Command arguments.
const (
	memoryHorizontal   = 0x00
	chargePumpOn       = 0x14
	comPinsAlternative = 0x12 // 128×64 modules
	comPinsSequential  = 0x02 // 128×32 modules
)
