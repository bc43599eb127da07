// Package bustest holds what every bus.Bus implementation is tested with:
// RunConformance, the behaviour a backend must have (delivery order on the
// subscriber's executor, wildcards, keep-last queues, services, timeouts,
// no-responder detection, Close), and the polling helpers those tests use.
//
// A backend's test calls it with a function that makes two connections to
// one bus:
//
//	func TestConformance(t *testing.T) {
//		bustest.RunConformance(t, func(t *testing.T) (pub, sub bus.Bus) {
//			br := mem.NewBroker()
//			pub, sub = br.Connect(nil), br.Connect(nil)
//			t.Cleanup(func() { pub.Close(); sub.Close() })
//			return pub, sub
//		})
//	}
//
// The suite runs handlers on wall-clock executors on their own goroutines
// (so it suits networked transports too) and waits by polling with
// CheckFor, never by sleeping a guessed amount.
package bustest
