// Package activity is the server's activity log: structured events (time,
// level, source, node, message) kept in memory for the dashboard and the
// get_activity_log command, and appended as JSON lines to files in the
// data directory that are rotated by size, keeping a fixed number of files.
//
// Warnings and errors are kept apart from info: each tier has its own
// bounded ring (by events and by bytes) and its own files, so no flood of
// info events pushes a warning out of memory or off the disk. Queries and
// the download merge the tiers by sequence number.
//
// Log.Handler makes it a slog.Handler, so every package that logs through
// the server's *slog.Logger with "source" and "node" attributes lands here
// without knowing about it. Event times come from the clock the log is
// given (the server's executor), so a simulated robot logs simulated time.
package activity
