// Package activity is the server's activity log: structured events (time,
// level, source, node, message) kept in a bounded ring for the dashboard and
// the get_activity_log command, and appended as JSON lines to a file in the
// data directory that is rotated by size, keeping a fixed number of files.
//
// Log.Handler makes it a slog.Handler, so every package that logs through
// the server's *slog.Logger with "source" and "node" attributes lands here
// without knowing about it. Event times come from the clock the log is
// given (the server's executor), so a simulated robot logs simulated time.
package activity
