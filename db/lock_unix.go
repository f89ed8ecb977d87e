//go:build unix

package db

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// LockForServe takes an exclusive advisory lock beside the database (FILE.lock)
// for as long as a server runs on it, so restore can refuse to replace a
// database in use. The lock goes with the process, so a crash never leaves
// it held.
func LockForServe(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path+".lock", os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%s is in use by a running server: stop it first", path)
		}
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}
