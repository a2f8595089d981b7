package pgwire

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgproto3"
)

// Notice is a NoticeResponse: a message to the client in the middle of a
// statement (progress, a WARNING), which does not end the statement.
type Notice struct {
	// Severity is WARNING, NOTICE, INFO, LOG or DEBUG (default NOTICE).
	Severity string
	// Code is the SQLSTATE (default 00000; WARNINGs are 01000).
	Code            string
	Message, Detail string
}

type noticeKey struct{}

// SendNotice sends n to the client of the session whose call ctx belongs
// to, at once (flushed). It must be called on the goroutine running that
// call (the Session method pgwire called); outside a session call it fails.
func SendNotice(ctx context.Context, n Notice) error {
	c, _ := ctx.Value(noticeKey{}).(*conn)
	if c == nil {
		return errors.New("pgwire: no client to send a notice to")
	}
	if n.Severity == "" {
		n.Severity = "NOTICE"
	}
	if n.Code == "" {
		n.Code = "00000"
		if n.Severity == "WARNING" {
			n.Code = "01000"
		}
	}
	if err := c.out.send(&pgproto3.NoticeResponse{Severity: n.Severity, SeverityUnlocalized: n.Severity,
		Code: n.Code, Message: n.Message, Detail: n.Detail}); err != nil {
		return err
	}
	return c.out.flush()
}
