//go:build !race

package db

// raceEnabled: see race_on_test.go.
const raceEnabled = false
