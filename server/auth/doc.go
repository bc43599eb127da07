// Package auth holds the server's API token: generated from crypto/rand at
// first start, kept 0600 in the data directory, compared in constant time,
// and regenerable, which invalidates the old one.
//
// Clients present it in the WebSocket API's auth message or as an
// "Authorization: Bearer TOKEN" header on the upgrade or HTTP request;
// Middleware guards HTTP endpoints with the header.
package auth
