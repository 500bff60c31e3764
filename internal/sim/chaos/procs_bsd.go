//go:build unix && !linux

package chaos

import "syscall"

// procAttr puts the worker in its own process group.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
