//go:build !unix

package db

// LockForServe has no advisory lock to take on this platform: restore cannot
// tell whether a server runs, so the operator must stop it first.
func LockForServe(path string) (unlock func(), err error) { return func() {}, nil }
