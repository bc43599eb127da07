// Command foxglovescreenshot takes the screenshot of the Foxglove app in
// docs/foxglove.md: the app, connected to a live `saint-sim --adopt` over
// the Foxglove WebSocket protocol with the layout docs/foxglove/saint.json,
// in headless Chromium.
//
// The app is Foxglove Studio's open-source web build as published on npm
// (@foxglove/studio-base, whose package carries the built bundle, with
// React 17 beside it), which npm installs into a temporary directory; it
// is served on 127.0.0.1 together with a small page that starts it the way
// Foxglove's web build does. The simulated robot drives a slow circle and
// turns its head while the data accumulates, so the plots move.
//
// Run it from the repository's root (make foxglove-screenshot):
//
//	go run ./cmd/internal/foxglovescreenshot -out docs/screenshots/foxglove.png
//
// -layout takes another layout, and -set NAME=JSON (repeatable) edits a
// parameter in that layout's Parameters panel before the screenshot, as
// a user does (the picture of the Parameters panel in docs/foxglove.md).
//
// It needs node and npm (make test-deps), network access to the npm
// registry, Chromium (or Chrome) and a few minutes: the app is 36 MB.
package main
