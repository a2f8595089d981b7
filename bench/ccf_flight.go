package bench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/flight"
	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/lakesoul-go/lakesoul/internal/safego"
	"github.com/lakesoul-go/lakesoul/server"
)

// The ccf read over Flight SQL: the same full read as over pgwire, as one
// stream (a prepared statement, whose FlightInfo has one endpoint: the
// server merges the units in parallel, "flightsql-stream"), and as the plain
// query's endpoints (one per bucket of the 4-bucket table) fetched by one
// reader in turn ("flightsql-1") and by four readers at once
// ("flightsql-4"). Each row checks the same checksum; its peak RSS is the
// process's during the row (server and client share the process).
func ccfFlight(ctx context.Context, o Options, name string, srv *server.Server, want uint64, keys, reads int, profile string) error {
	cl, err := flightsql.NewClientCtx(ctx, srv.FlightAddr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return err
	}
	defer cl.Close()
	actx, err := cl.Client.AuthenticateBasicToken(ctx, "lakesoul", "bench")
	if err != nil {
		return err
	}
	query := "SELECT " + strings.Join(ccfColumns, ", ") + " FROM ccf.t"
	resetPeakRSS()
	stopProfile, err := startCPUProfile(profile)
	if err != nil {
		return err
	}
	rs, err := repeatRead(reads, func() (int64, uint64, error) {
		stmt, err := cl.Prepare(actx, query)
		if err != nil {
			return 0, 0, err
		}
		defer stmt.Close(actx)
		info, err := stmt.Execute(actx)
		if err != nil {
			return 0, 0, err
		}
		return endpointsChecksum(actx, cl, info, 1)
	})
	stopProfile()
	if err != nil {
		return fmt.Errorf("flightsql-stream: %w", err)
	}
	o.Out.Emit(rs.row(name, "lakesoul-flightsql-stream", want, keys))
	for _, readers := range []int{1, 4} {
		resetPeakRSS()
		rs, err := repeatRead(reads, func() (int64, uint64, error) { return flightChecksum(actx, cl, query, readers) })
		if err != nil {
			return fmt.Errorf("flightsql-%d: %w", readers, err)
		}
		o.Out.Emit(rs.row(name, fmt.Sprintf("lakesoul-flightsql-%d", readers), want, keys))
	}
	return nil
}

// flightChecksum reads query's endpoints with the given number of readers
// and sums the ccf row checksums.
func flightChecksum(ctx context.Context, cl *flightsql.Client, query string, readers int) (int64, uint64, error) {
	info, err := cl.Execute(ctx, query)
	if err != nil {
		return 0, 0, err
	}
	return endpointsChecksum(ctx, cl, info, readers)
}

// endpointsChecksum reads info's endpoints with the given number of readers.
func endpointsChecksum(ctx context.Context, cl *flightsql.Client, info *flight.FlightInfo, readers int) (int64, uint64, error) {
	next := make(chan *flight.FlightEndpoint, len(info.Endpoint))
	for _, ep := range info.Endpoint {
		next <- ep
	}
	close(next)
	var (
		mu   sync.Mutex
		n    int64
		sum  uint64
		errs []error
		g    safego.Group
	)
	for range readers {
		g.Start(func() {
			for ep := range next {
				en, es, err := endpointChecksum(ctx, cl, ep)
				mu.Lock()
				n, sum, errs = n+en, sum+es, append(errs, err)
				mu.Unlock()
			}
		})
	}
	g.Wait()
	return n, sum, errors.Join(errs...)
}

func endpointChecksum(ctx context.Context, cl *flightsql.Client, ep *flight.FlightEndpoint) (int64, uint64, error) {
	rdr, err := cl.DoGet(ctx, ep.Ticket)
	if err != nil {
		return 0, 0, err
	}
	defer rdr.Release()
	var n int64
	var sum uint64
	var h rowHasher
	fields := make([][]byte, len(ccfColumns))
	var ints []byte // the text of integer fields, reused
	for rdr.Next() {
		rec := rdr.RecordBatch()
		cols := rec.Columns()
		for i := 0; i < int(rec.NumRows()); i++ {
			ints = ints[:0]
			for j, c := range cols {
				fields[j], ints = arrowFieldBytes(c, i, ints)
			}
			sum += h.sum(fields)
			n++
		}
	}
	return n, sum, rdr.Err()
}

// arrowFieldBytes is a ccf value's text, as the pgx reader takes it raw:
// strings as they are, integers appended to buf (returned grown), without
// allocating per value. The field aliases the array or buf until buf grows
// again, so a row's fields are hashed before the next row is read.
func arrowFieldBytes(c arrow.Array, i int, buf []byte) ([]byte, []byte) {
	switch a := c.(type) {
	case *array.String:
		s := a.Value(i)
		return unsafe.Slice(unsafe.StringData(s), len(s)), buf
	case *array.Int64:
		start := len(buf)
		buf = strconv.AppendInt(buf, a.Value(i), 10)
		return buf[start:len(buf):len(buf)], buf
	}
	return []byte(c.ValueStr(i)), buf
}
