package flightsql

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/pgwire"
	"github.com/lakesoul-go/lakesoul/reader"
)

// Parallel scans. A plain scan of one table (engine.PlanScanUnits) gets one
// endpoint per unit of its snapshot (partition × bucket, or a row group of
// a bucket's one file of unique keys). Each ticket holds the unit — table,
// columns, partition, bucket, files, row groups — and the user it was
// issued to, signed (HMAC-SHA-256) with the catalog's ticket key
// (migration 13), so any server of the same catalog serves it without
// shared memory. Serving one checks the signature and expiry (else
// InvalidArgument), that the caller is the ticket's user (else
// PermissionDenied), and reads the unit as the caller's role, which must
// still see the same table (else NotFound).

// unitTicketPrefix marks a unit ticket's statement handle.
const unitTicketPrefix = "u:"

// ticketLifetime is how long a unit ticket may be served after it was issued.
const ticketLifetime = time.Hour

// unitTicket is the signed content of a unit ticket.
type unitTicket struct {
	User      string             `json:"u"`
	Namespace string             `json:"n"`
	Table     string             `json:"t"`
	TableID   string             `json:"i"`
	Columns   []string           `json:"c"`
	Desc      string             `json:"d"`
	Bucket    int                `json:"b"`
	Files     []catalog.DataFile `json:"f"`
	RowGroups []int              `json:"g,omitempty"`
	Expires   int64              `json:"x"`
}

// unitTickets returns one ticket per unit when st is a plain scan.
// Call with the session locked.
func (s *Server) unitTickets(ctx context.Context, c *client, st pgwire.Statement, sc *arrow.Schema) ([][]byte, bool, error) {
	if len(s.cfg.TicketKey) == 0 {
		return nil, false, nil
	}
	plan, ok, err := c.sess.PlanScanUnits(ctx, st)
	if err != nil || !ok {
		return nil, false, flightError(err)
	}
	if len(plan.Units) < 2 {
		return nil, false, nil // one endpoint of the query itself
	}
	exp := time.Now().Add(ticketLifetime).Unix()
	out := make([][]byte, 0, len(plan.Units))
	for _, u := range plan.Units {
		payload, err := json.Marshal(unitTicket{User: c.user, Namespace: plan.Namespace, Table: plan.Table, TableID: plan.TableID,
			Columns: plan.Columns, Desc: u.Desc, Bucket: u.Bucket, Files: u.Files, RowGroups: u.RowGroups, Expires: exp})
		if err != nil {
			return nil, false, err
		}
		handle := unitTicketPrefix + base64.RawURLEncoding.EncodeToString(payload) + "." +
			base64.RawURLEncoding.EncodeToString(s.sign(payload))
		tkt, err := flightsql.CreateStatementQueryTicket([]byte(handle))
		if err != nil {
			return nil, false, err
		}
		out = append(out, tkt)
	}
	return out, true, nil
}

func (s *Server) sign(payload []byte) []byte {
	m := hmac.New(sha256.New, s.cfg.TicketKey)
	m.Write([]byte("lakesoul flight unit ticket\x00"))
	m.Write(payload)
	return m.Sum(nil)
}

// openUnitTicket verifies a unit ticket's handle and returns its content.
func (s *Server) openUnitTicket(raw []byte, user string) (*unitTicket, error) {
	rest, ok := bytes.CutPrefix(raw, []byte(unitTicketPrefix))
	p64, s64, ok2 := bytes.Cut(rest, []byte("."))
	if !ok || !ok2 || len(s.cfg.TicketKey) == 0 {
		return nil, status.Error(codes.InvalidArgument, "malformed ticket")
	}
	payload, err1 := base64.RawURLEncoding.DecodeString(string(p64))
	sig, err2 := base64.RawURLEncoding.DecodeString(string(s64))
	if err1 != nil || err2 != nil || !hmac.Equal(sig, s.sign(payload)) {
		return nil, status.Error(codes.InvalidArgument, "malformed ticket: bad signature")
	}
	var t unitTicket
	if err := json.Unmarshal(payload, &t); err != nil {
		return nil, status.Error(codes.InvalidArgument, "malformed ticket")
	}
	if time.Now().Unix() > t.Expires {
		return nil, status.Error(codes.InvalidArgument, "ticket expired")
	}
	if t.User != user {
		return nil, status.Error(codes.PermissionDenied, "ticket was issued to another user")
	}
	return &t, nil
}

// doGetUnit reads the unit of a unit ticket. It does not lock the session: unit
// reads of one client run in parallel (engine.ReadScanUnit).
func (s *Server) doGetUnit(ctx context.Context, c *client, raw []byte) (*arrow.Schema, <-chan flight.StreamChunk, error) {
	t, err := s.openUnitTicket(raw, c.user)
	if err != nil {
		return nil, nil, err
	}
	ur, err := c.sess.OpenScanUnit(ctx, t.Namespace, t.Table, t.TableID, t.Columns,
		reader.Unit{Desc: t.Desc, Bucket: t.Bucket, Files: t.Files, RowGroups: t.RowGroups})
	if err != nil {
		return nil, nil, flightError(err)
	}
	ch := make(chan flight.StreamChunk, chunkBuffer)
	safego.Go(func() {
		defer close(ch)
		// A panic ends the stream with its error, as any failure.
		err := safego.Call(func() error {
			return ur.Run(ctx, func(rec arrow.RecordBatch) error {
				rec.Retain()
				select {
				case ch <- flight.StreamChunk{Data: rec}:
					return nil
				case <-ctx.Done():
					rec.Release()
					return ctx.Err()
				}
			})
		})
		if err != nil {
			// Always delivered: the framework drains the channel to its
			// end even after the call ended, and a stream that stopped
			// must not look complete.
			ch <- flight.StreamChunk{Err: flightError(err)}
		}
	})
	return ur.Schema(), ch, nil
}
