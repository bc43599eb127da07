// Package encoder decodes an incremental quadrature encoder on two GPIO
// inputs, A and B, from their timestamped edges.
//
// Decoding is x4: every edge of either channel is one count. Turning
// forwards, A leads B by a quarter cycle, so (A, B) steps 00 → 10 → 11 →
// 01 → 00; backwards the sequence runs the other way. An edge that reports
// a level its pin already had means the other half of a pulse was missed
// (the shaft moved faster than the edges could be read, or noise): it is
// counted as an illegal transition and changes no count.
//
// Velocity comes from the edge timestamps, not from when the decoder ran:
// counts over the time spanned by the recent edges moving in one direction
// (up to 16), which is exact at constant speed. Between edges the estimate
// decays as 1/(time since the last edge) once that exceeds the edge period,
// and it is zero after Options.StopAfter with no edge.
//
// Edges of A and B are assumed to arrive in timestamp order; the GPIO
// backends deliver each pin's events in order, and a fast shaft whose A
// and B events interleave out of order across pins shows up as illegal
// transitions. sim/twin/encoder generates the edges from a shaft angle in
// the simulator.
package encoder
