package pgwire

import (
	"encoding/binary"
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// hangupWatch waits for the peer of a socket to hang up, whatever unread
// data is queued (poll's POLLRDHUP: the peer's FIN arrived), or for wake.
// It is used by one goroutine, the input's reader; wake may be called from
// any goroutine until release.
type hangupWatch struct {
	fd     int // the socket's descriptor, polled without holding it
	wakeFd int // an eventfd that wake makes readable
	broken bool
}

// newHangupWatch returns a watch of c's socket, or nil if c has none (or
// the descriptors cannot be had); the input then just waits.
func newHangupWatch(c net.Conn) *hangupWatch {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return nil
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	h := &hangupWatch{fd: -1}
	// The descriptor is used outside Control: polling inside it would hold
	// a reference that makes Close wait for the poll. The input stops
	// watching before the connection closes the socket (input.stop).
	if err := rc.Control(func(fd uintptr) { h.fd = int(fd) }); err != nil || h.fd < 0 {
		return nil
	}
	if h.wakeFd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return nil
	}
	return h
}

// wait blocks until the peer hangs up (it returns true) or wake is called
// (false). Should polling itself fail, it returns false at once from then
// on; the caller then waits without watching.
func (h *hangupWatch) wait() bool {
	if h.broken {
		return false
	}
	fds := []unix.PollFd{
		{Fd: int32(h.fd), Events: unix.POLLRDHUP},
		{Fd: int32(h.wakeFd), Events: unix.POLLIN},
	}
	for {
		_, err := unix.Poll(fds, -1)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			h.broken = true
			return false
		}
		break
	}
	if fds[1].Revents&unix.POLLIN != 0 {
		var b [8]byte
		_, _ = unix.Read(h.wakeFd, b[:])
	}
	return fds[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0
}

// wake makes a running or the next wait return.
func (h *hangupWatch) wake() {
	var b [8]byte
	binary.NativeEndian.PutUint64(b[:], 1)
	_, _ = unix.Write(h.wakeFd, b[:])
}

// release frees the watch's descriptor; h may be nil.
func (h *hangupWatch) release() {
	if h != nil {
		unix.Close(h.wakeFd)
	}
}

// watches reports whether hangups are watched; h may be nil.
func (h *hangupWatch) watches() bool { return h != nil && !h.broken }

// hangupsWatched reports whether this platform watches for hangups.
const hangupsWatched = true
