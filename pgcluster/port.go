package pgcluster

import (
	"fmt"
	"net"
)

// freePort asks the kernel for a currently unused TCP port on 127.0.0.1.
// Without ListenTCP the port only names the socket file, so a later clash
// is harmless; with it, choosing a free port keeps the first start working.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pgcluster: pick a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
