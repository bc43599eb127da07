// Package persource aggregates repeated events per source address into one
// report per source per window, with the count of the events it held back.
//
// Failed WebSocket logins and refused bus connections both go to the
// activity log, whose size is bounded: one line per attempt would let a
// loop of bad attempts push the real events out. With a Throttle the first
// event of a window is reported at once and the rest of that window by
// the next report, as "N more since T".
package persource
