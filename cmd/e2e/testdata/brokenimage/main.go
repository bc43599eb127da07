// Command brokenimage is a firmware image that fails at once, as a node
// binary built for the wrong board or with a fatal start-up bug would: the
// self-update end-to-end test publishes it and expects the node to roll
// back to the image it ran before.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "brokenimage: failing at start, as a bad firmware image does")
	os.Exit(3)
}
