// Package rc holds the wire codecs of the hobby RC receiver protocols
// SAINT.OS supports: SBUS, IBUS and CRSF on a UART, PPM sum and per-channel PWM
// on GPIO edges.
//
// Each protocol has an encoder (channels in, bytes or edge timestamps out) and
// a streaming decoder. A byte decoder is fed whatever chunks the UART hands
// over, stamped with their arrival time; it finds frames by their header,
// length and checksum, uses idle gaps on the line to drop half-received
// frames, resynchronises after garbage, never panics and counts what it
// rejected (Stats). An edge decoder is fed gpio.EdgeEvent values and measures
// pulses from their timestamps, never from when it runs.
//
// Every decoder reports the same Frame: channel pulse widths in µs, the
// protocol's raw values, SBUS's frame-lost and failsafe flags, CRSF's link
// statistics and when the frame arrived. The server's RC receiver normalises
// those; the simulator's RC transmitter (sim/twin/rctx) drives the encoders.
//
// Betaflight's src/main/rx/ is the reference implementation of the wire
// formats; docs/protocols.md gives the wire facts and shows the reference
// frame of each protocol byte by byte (the tests' golden vectors).
package rc
