//go:build !unix

package chaos

import (
	"errors"
	"syscall"
)

// procSupported: without process groups and SIGSTOP, a worker cannot be
// paused or killed as a whole.
const procSupported = false

var errNoGroups = errors.New("process groups are not supported here")

func signalGroup(int, syscall.Signal) error { return errNoGroups }

func procAttr() *syscall.SysProcAttr { return nil }

const (
	sigKill = syscall.Signal(9)
	sigStop = syscall.Signal(19)
	sigCont = syscall.Signal(18)
	sigTerm = syscall.Signal(15)
)
