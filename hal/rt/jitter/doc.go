// Package jitter measures how punctually a periodic loop runs on the
// machine it runs on: the period error (the difference between the time
// from one run to the next and the nominal period) at p50, p99, p99.9 and
// its maximum, for a loop on the executor on the wall clock, optionally in
// real-time mode (hal/rt), and for a bare time.Ticker as the reference, with
// or without a load that competes for the CPUs and the garbage collector.
//
// saintctl jitter and BenchmarkLoopJitter use it.
package jitter
