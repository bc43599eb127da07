// Package webui holds the end-to-end tests of the web administration UI
// (server/web): a real saint-sim process on 127.0.0.1 with free ports, and
// Debian's Chromium, headless, driven through the DevTools protocol with
// chromedp. The tests click through the pages as an operator would and check
// what the robot did through the WebSocket API:
//
//   - a node adopted on the adopt page (role, arm side, display name) moves
//     to the adopted table, and the server has it in that role; run as the
//     humanoid robot type, the adopt page offers only its five limbs;
//   - a route created in the route editor shows a live preview that follows
//     both the mapping (its scale) and the input (WebSocket head moves), and
//     is saved with the edited mapping;
//   - the balancing base's details page arms it and drives it while Forward
//     is held, and letting go stops it;
//   - E-Stop All on the dashboard engages the stop, and the tracks node's own
//     state on its details page shows it;
//   - the logs page filters by source and by text, agreeing with the API;
//   - the inputs page's RC channel bars follow a simulated transmitter's
//     sticks, calibration stores the stick's position, and a LiveLink
//     subject's bars show the values streamed to it (an in-process server
//     with those receivers wired);
//   - the robot page draws the humanoid robot type (saint-sim --robot-type
//     pi_plus-S-12L8A0G2H0W): its five limbs in their colours on the
//     canvas, the left hand where the physics has it, and the forearm
//     drawn somewhere else once an action moved the arms, and a limb whose
//     node was reset drawn grey where it was last reported; the reference
//     robot's page says it has no humanoid limbs;
//   - a settings error is shown beside the field it names;
//   - a server with authentication asks for the token, refuses a wrong one
//     and remembers the right one across a reload, and a LiveLink sender on
//     the same machine is refused until it is allowed on the inputs page;
//   - at 360 px, the width of a phone, no page scrolls sideways.
//
// Every page is saved as a PNG screenshot into $SAINT_SCREENSHOT_DIR (the
// committed ones are in docs/screenshots), or into the test's temporary
// directory. The tests install Chromium with apt-get when it is missing and
// they run as root, and skip otherwise; go test -short skips them too.
package webui
