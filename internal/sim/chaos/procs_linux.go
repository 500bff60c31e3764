package chaos

import "syscall"

// procAttr puts the worker in its own process group (so Ctrl-C in the
// terminal reaches dupctl, which then cleans up, and not the workers
// directly) and has the kernel kill the shell if dupctl dies.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
