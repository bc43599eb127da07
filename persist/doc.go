// Package persist writes state files durably: atomic replace with
// write + fsync + rename + directory fsync. Nodes keep their role in it and
// the server its adoption registry, so a crash or power cut at any moment
// loses nothing that was acknowledged.
package persist
