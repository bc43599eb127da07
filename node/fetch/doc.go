// Package fetch downloads a firmware image over HTTP from the server's
// firmware HTTP server into a file: streamed to disk with the sha256 taken
// on the way, synced once at the end, resumed with a Range request after an
// interruption (a dropped connection, a restart of the node), and refused
// when its size or sha256 is not the published one.
//
// The bus only carries the offer (version, size, sha256 and this URL); the
// bytes go over plain HTTP, which moves a 9 MB image at file-server speed.
package fetch
