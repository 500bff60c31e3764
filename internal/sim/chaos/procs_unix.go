//go:build unix

package chaos

import "syscall"

// procSupported: process groups and SIGSTOP exist here.
const procSupported = true

// signalGroup signals a worker's whole process group: a shell wrapper, a
// JVM and its threads, npm and its node child all stop or die together.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }

const (
	sigKill = syscall.SIGKILL
	sigStop = syscall.SIGSTOP
	sigCont = syscall.SIGCONT
	sigTerm = syscall.SIGTERM
)
