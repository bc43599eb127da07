// Package rc is the server's RC receiver: where a hobby RC transmitter
// meets the router.
//
// A Receiver reads one receiver's output: SBUS, IBUS or CRSF from a UART
// (hal/uart, opened by a PortOpener that the command chooses: a serial
// device on a robot, a simulated line in saint-sim), PPM or PWM from the
// timestamped edges of GPIO inputs. The UART's reader goroutine and the
// pins' edge callbacks only post the bytes or edges with their arrival time
// into the executor; decoding (hal/device/rc), normalisation, failsafe and
// publishing all run there and take their time from it.
//
// Each channel has a Channel configuration (name, min, max, center in µs,
// reversed, type stick or switch): a stick normalises to −1..1 through its
// centre, a switch to 0..1. Calibrate captures a channel's min, max and
// centre over a window while the operator moves it.
//
// The receiver publishes msg.RCReceiverState on msg.TopicRCState at the
// frame rate (or Config.PublishHz), with the frame rate measured from the
// frames' stamps, RSSI from CRSF link statistics and the SBUS flags. When
// no good frame arrives for failsafe.timeout_ms, or an SBUS receiver raises
// its failsafe flag, the state says failsafe and the configured action is
// carried out through the router's own input topic (msg.TopicRouterInput):
// hold keeps sending the last values, neutral sends every stick at its
// centre and every switch low, estop sends the router's emergency stop,
// passthrough sends nothing so the other sources take over when the RC
// routes time out.
//
// Config is config/rc_receiver.yaml (Parse, Marshal). Register makes the
// server's receiver from that file and installs it as a server feature
// (Feature): the receiver, its WebSocket rc commands, the "rc" topic and
// DATA/rc_receiver.yaml, where every change is written; that file is the
// one configuration of the receiver, which the settings page only shows.
// See docs/rc.md for wiring, the file, normalisation and the commands.
package rc
