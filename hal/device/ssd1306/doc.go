// Package ssd1306 drives a Solomon Systech SSD1306 OLED controller with a
// 128×64 (or 128×32) panel on I²C, the console node's status display,
// written against hal/i2c so that it runs on a Raspberry Pi and, unchanged,
// on the simulator's twin (sim/twin/ssd1306).
//
// New sends the datasheet's initialisation sequence (application note in
// SSD1306 rev 1.1, figure "Software initialization flow") as one command
// stream: display off, clock divide, multiplex ratio, display offset, start
// line, charge pump on, horizontal addressing, segment remap and COM scan
// direction for a module mounted the usual way up, COM pins, contrast,
// pre-charge, VCOMH, resume to RAM, normal (not inverted) display,
// scrolling off, display on.
//
// Drawing happens in a Frame, a 1-bit framebuffer in display-RAM layout with
// pixels, lines, rectangles and text in a 5×7 font built into the package;
// it is a draw.Image too. Flush sends only the pages that changed: the
// column and page address window, then the data in horizontal addressing
// mode, where the controller wraps from the end of one page to the start
// of the next by itself. Opts.MaxTxBytes splits the data for I²C adapters
// that limit transfer sizes.
//
// On I²C each transfer starts with a control byte: 0x00 for a stream of
// commands, 0x40 for a stream of display data.
//
// Datasheet: Solomon Systech SSD1306 rev 1.1, sections 8.1.5, 9 and 10.
package ssd1306
