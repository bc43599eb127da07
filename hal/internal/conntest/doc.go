// Package conntest is the engine behind the bus fakes of i2ctest and
// spitest, after periph.io/x/conn/v3/conntest: Player walks a Playback's
// script of operations in order and remembers the first mismatch; Recorder
// keeps what goes over a live connection. Each fake supplies only its
// operation type and how a call matches one.
package conntest
