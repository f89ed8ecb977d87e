//go:build race

package db

// raceEnabled: the race detector multiplies CPU and memory several times,
// so the few tests that bound a request's cost scale their bounds by it.
const raceEnabled = true
