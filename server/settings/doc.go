// Package settings is the server's configuration as the web UI's Settings
// page edits it: system names, LiveLink ports and broadcast name, and
// whether the API requires authentication. The RC receiver's configuration,
// which the page shows too, is rc_receiver.yaml, kept by the receiver
// (server/inputs/rc); an older settings.json that still has an "rc"
// section opens with that section left aside.
//
// Settings are one JSON document (settings.json in the data directory),
// validated as a whole before anything is stored, written atomically, and
// read back at the next start. A change is a partial document merged onto
// the current settings, so a client sends only what it changes.
package settings
