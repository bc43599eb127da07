// Package sibling finds another of the project's commands for a process
// that starts it as a child (saint-sim starting saint-viz or saint-ros2).
package sibling
