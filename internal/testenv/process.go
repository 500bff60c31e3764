package testenv

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// AwaitConnecting waits until process pid holds a TCP connection to
// addr: the moment a test means by "Ctrl-C while connecting". A fixed
// delay before the signal, on a loaded machine, can land before dupctl
// has started (the Go runtime then exits on SIGINT, a kill, not exit 130).
// dupctl installs its handler (cli.Run) before any command dials, so a
// connection says the handler is there; the runtime catches SIGINT from
// its first instruction, so /proc's SigCgt could not say it. It reads
// /proc, so off Linux it only waits for fallback; it gives up after
// within.
func AwaitConnecting(pid int, addr string, within, fallback time.Duration) error {
	if _, err := os.Stat("/proc/self/net/tcp"); err != nil {
		time.Sleep(fallback)
		return nil
	}
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if connectedTo(pid, addr) {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("process %d held no connection to %s after %s", pid, addr, within)
}

// AwaitFile waits (at most within) until path holds at least one byte -
// a command's output has begun - or process pid has exited (nil either
// way: a command that ended first is not signalled to any effect).
func AwaitFile(path string, pid int, within time.Duration) error {
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if st, err := os.Stat(path); err == nil && st.Size() > 0 {
			return nil
		}
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			return nil
		}
	}
	return fmt.Errorf("%s still empty after %s", path, within)
}

// AwaitBlockedOnFIFO waits (at most within) until one of process pid's
// threads is blocked opening a FIFO with no writer (wchan
// wait_for_partner): the command is waiting on its input, past its start
// - a Go program catches SIGINT from its first instruction (the runtime's
// handler), so only a point past signal.Notify makes Ctrl-C an interrupt
// and not a kill. Off Linux it only waits for fallback.
func AwaitBlockedOnFIFO(pid int, within, fallback time.Duration) error {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		time.Sleep(fallback)
		return nil
	}
	for deadline := time.Now().Add(within); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		chans, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/wchan", pid))
		for _, c := range chans {
			if b, err := os.ReadFile(c); err == nil && strings.TrimSpace(string(b)) == "wait_for_partner" {
				return nil
			}
		}
	}
	return fmt.Errorf("process %d not blocked opening a FIFO after %s", pid, within)
}

// connectedTo reports whether one of the process's sockets is a TCP
// connection, established, to addr, an IPv4
// loopback address: /proc/<pid>/net/tcp lists the namespace's sockets,
// its fd links name the process's own by inode.
func connectedTo(pid int, addr string) bool {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || net.ParseIP(host).To4() == nil {
		return false
	}
	p, _ := strconv.Atoi(port)
	ip := net.ParseIP(host).To4()
	// /proc shows the address as the little-endian hex of its 4 bytes.
	want := fmt.Sprintf("%02X%02X%02X%02X:%04X", ip[3], ip[2], ip[1], ip[0], p)
	inodes := socketInodes(pid)
	f, err := os.Open(fmt.Sprintf("/proc/%d/net/tcp", pid))
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		// sl local rem st tx:rx tr:when retrnsmt uid timeout inode
		if len(fields) > 9 && fields[2] == want && fields[3] == "01" && inodes[fields[9]] {
			return true
		}
	}
	return false
}

func socketInodes(pid int) map[string]bool {
	links, _ := filepath.Glob(fmt.Sprintf("/proc/%d/fd/*", pid))
	inodes := make(map[string]bool, len(links))
	for _, l := range links {
		target, err := os.Readlink(l)
		if err != nil {
			continue
		}
		if inode, ok := strings.CutPrefix(target, "socket:["); ok {
			inodes[strings.TrimSuffix(inode, "]")] = true
		}
	}
	return inodes
}
