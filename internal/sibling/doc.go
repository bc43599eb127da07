// Package sibling finds another of the project's commands for a process
// that starts it as a child (saint-sim starting saint-viz or saint-ros2):
// the binary beside the running program, as `go build -o bin/ ./cmd/...`
// (make build) leaves them, else on $PATH. It does not fall back to
// `go run`: the go command would be the child, and the command it builds
// its grandchild, which a parent-death signal does not reach (see
// internal/childproc). A missing command is an error that says how to
// build it.
package sibling
