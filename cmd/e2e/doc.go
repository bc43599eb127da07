// Package e2e holds the end-to-end tests of SAINT.OS: the real commands,
// built once, run as separate processes on 127.0.0.1 and talk over the
// embedded NATS broker and the WebSocket API, as they do on the robot.
//
// The package has no code of its own; its tests are the acceptance test of
// the node adoption system:
//
//   - unadopted saint-node processes on simulated boards announce their
//     40-pin header GPIOs and the peripherals their harness has;
//   - adopt_node makes a node ACTIVE in its role within a second, with the
//     role's pins claimed; a board lacking a required peripheral refuses the
//     adoption, says which one, and stays unadopted;
//   - a node killed with SIGKILL and restarted resumes its role without a
//     new adoption; reset_node returns it to unadopted, and a factory reset
//     also makes it download the published firmware image again;
//   - a saint-server killed with SIGKILL and restarted on the same ports and
//     data directory keeps every adoption, and the nodes reconnect on their
//     own;
//   - a node updates itself: a published 2.0.0 is downloaded, verified and
//     exec'd in the same process; a 3.0.0 whose bytes do not match their
//     sha256 is refused (and the upload endpoint refuses a binary for the
//     wrong machine or with a wrong sha256, naming the field); a 4.0.0 that
//     exits at start is rolled back to 2.0.0 by saint-node --rollback-check,
//     the service's pre-start hook, and not tried again;
//   - saintctl drives the server over the same API;
//   - the WebSocket API answers bad input with an error naming the fault
//     and keeps the connection open, on both of its endpoints.
//
// Each test starts its own processes on free ports with their own state
// directories, captures every process's output to a file and prints its
// tail when the test fails. The tests are skipped with go test -short.
package e2e
