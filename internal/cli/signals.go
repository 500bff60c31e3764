package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/dupctl/dupctl/internal/platform/exitcode"
)

// interruptContext is cancelled by the first Ctrl-C or SIGTERM, so the
// running command stops as it would on --timeout: a replay finishes its
// journal, an export keeps its .partial name, watch ends its checks. A
// second one quits at once - a person who presses Ctrl-C twice wants the
// terminal back, not the cleanup (as kubectl and docker do) - and says so.
func interruptContext(errOut io.Writer) (context.Context, func()) {
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	ctx, stop := onSignals(context.Background(), sigs, errOut, os.Exit)
	return ctx, func() {
		signal.Stop(sigs)
		stop()
	}
}

// onSignals cancels the context on the first value from sigs and calls
// exit(130) on the second, after one line on errOut.
func onSignals(parent context.Context, sigs <-chan os.Signal, errOut io.Writer, exit func(int)) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-done:
			return
		}
		select {
		case s := <-sigs:
			select {
			case <-done: // the command has returned: its own exit code stands
				return
			default:
			}
			fmt.Fprintf(errOut, "dupctl: %s again: quitting now, without finishing what the first one was stopping\n", signalName(s))
			exit(exitcode.Interrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		cancel()
	}
}

func signalName(s os.Signal) string {
	if s == os.Interrupt {
		return "interrupt"
	}
	return s.String()
}
