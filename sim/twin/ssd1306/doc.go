// Package ssd1306 is a twin of the Solomon Systech SSD1306 128×64 OLED
// controller on I²C (0x3C, or 0x3D), the console node's status display.
//
// It takes what a driver sends: a control byte (Co and D/C# bits) then
// commands or display data. Commands are decoded with their argument counts
// so a stream never loses step; the ones that matter to what is shown
// (display on/off, contrast, memory addressing mode, column and page address
// ranges, page-mode start addresses) take effect, the rest are accepted and
// ignored. Data lands in the 1 KiB display RAM where the chip would put it,
// so the simulator can render the screen: Pixel and Framebuffer read RAM,
// Image and WritePNG give what the panel shows (segment remap, COM scan
// direction, start line, multiplex ratio, inversion, entire display on,
// dark unless the display and its charge pump are on).
//
// A read returns the status byte (bit 6 set while the display is off).
// Not modelled: scrolling, display offset, contrast as brightness and
// charge pump timing.
//
// Datasheet: Solomon Systech SSD1306 rev 1.1, sections 8.1.5 and 10.
//
// Register map: the twin's own reading of the datasheet, kept apart from the
// driver's. The twin defines its registers, reset values and bit meanings
// itself and imports nothing from the driver (hal/device/ssd1306, whose map
// is in its registers.go), so a driver test against the twin checks one
// reading against the other; a mistake both readings share would pass.
package ssd1306
