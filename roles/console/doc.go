// Package console is the console role: the SSD1306 status display (alerts,
// pushed pages, the status page) and the buttons, whose emergency stop and
// manual override reach the router over the bus. See Console and
// docs/roles/console.md.
package console
