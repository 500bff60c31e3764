package proxy

import (
	"context"
	"net"
)

// DialTCP returns a Dial func for a plain TCP address.
func DialTCP(addr string) func(ctx context.Context) (net.Conn, error) {
	return func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	}
}
