// Package persource aggregates repeated events per source address into one
// report per source per window, with the count of the events it held back.
//
// Failed logins, sessions that never authenticate and refused bus
// connections all go to the activity log, whose size is bounded: one line
// per attempt would let a loop of bad attempts push the real events out.
// With a Throttle the first event of a window is reported at once and the
// rest of that window by the next report, or when the window closes if
// Flush is set, as "N more since T". Events writes those reports to a
// slog.Logger and also bounds the lines of a window across all sources,
// since a stranger may have many addresses.
package persource
