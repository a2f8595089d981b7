//go:build !linux

package pgwire

import "net"

// hangupWatch is not available on this platform: a reader whose buffer is
// full notices a lost client only once the connection consumed the data
// queued before the end.
type hangupWatch struct{}

func newHangupWatch(net.Conn) *hangupWatch { return nil }
func (h *hangupWatch) wait() bool          { return false }
func (h *hangupWatch) wake()               {}
func (h *hangupWatch) release()            {}
func (h *hangupWatch) watches() bool       { return false }

// hangupsWatched reports whether this platform watches for hangups.
const hangupsWatched = false
