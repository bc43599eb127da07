// Package persist writes state files durably: atomic replace with
// write + fsync + rename + directory fsync. Nodes keep their role in it and
// the server its adoption registry, so a crash or power cut at any moment
// loses nothing that was acknowledged.
//
// It reads them strictly too (ReadJSON, ReadYAML): a state file that is
// empty, `null`, truncated or garbled is damaged (ErrDamaged), never an
// empty state, so each loader moves it aside (MoveAside), reports it and
// fails safe rather than start as if nothing had been stored.
package persist
