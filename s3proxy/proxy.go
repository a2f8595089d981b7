// Package s3proxy is LakeSoul-Go's S3 proxy: an S3-compatible HTTP endpoint
// (path-style) in front of the warehouse's object store. Clients sign their
// requests (AWS SigV4, header or presigned URL) with an access key from
// lakesoul.create_access_key(); the proxy verifies the signature with the
// key's secret, decides with the catalog's row-level security whether the
// key's role may use the table owning the path (authz.go), and forwards the
// request re-signed with its own credentials, bodies streamed both ways.
//
// It is LakeSoul's lakesoul-s3-proxy (reference §7.5) with two differences:
// it authenticates the caller itself instead of trusting a per-user sidecar,
// and it finds the owning table by longest table_path prefix rather than by
// parsing file names (so no .parquet/.vortex stop tokens).
package s3proxy

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lakesoul-go/lakesoul/catalog"
	"github.com/lakesoul-go/lakesoul/internal/safego"
)

// Backend is the object store the proxy forwards to.
type Backend struct {
	// Endpoint is the S3 endpoint URL, addressed path-style
	// (http://127.0.0.1:8333, https://s3.eu-west-1.amazonaws.com).
	Endpoint string
	// Region signs the forwarded requests.
	Region string
	// Credentials are the proxy's own.
	Credentials aws.CredentialsProvider
	// Transport carries the forwarded requests (default: a transport
	// without compression or proxies from the environment).
	Transport http.RoundTripper
}

// NewBackend is a backend at endpoint with credentials and region from the
// standard AWS configuration chain (environment, shared files …). An empty
// endpoint takes AWS_ENDPOINT_URL, else AWS's regional endpoint.
func NewBackend(ctx context.Context, endpoint, region string) (Backend, error) {
	var opts []func(*config.LoadOptions) error
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return Backend{}, fmt.Errorf("s3proxy: AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if endpoint == "" && cfg.BaseEndpoint != nil {
		endpoint = *cfg.BaseEndpoint
	}
	if endpoint == "" {
		endpoint = "https://s3." + cfg.Region + ".amazonaws.com"
	}
	return Backend{Endpoint: endpoint, Region: cfg.Region, Credentials: cfg.Credentials}, nil
}

// Config configures a Proxy.
type Config struct {
	// Catalog is the catalog, connected as its owner (or a superuser): it
	// reads access keys and all table paths, and what a key's role sees as
	// that role (catalog.ObjectAccessOf).
	Catalog *catalog.Catalog
	Backend Backend
	// Warehouses are the warehouse roots (s3://bucket/prefix) under which
	// <root>/<namespace>/… paths of no table may be written by roles that
	// see the namespace. Empty: such writes are refused.
	Warehouses []string
	Logger     *slog.Logger
}

// Proxy is the S3 proxy, an http.Handler.
type Proxy struct {
	cfg        Config
	log        *slog.Logger
	endpoint   *url.URL
	transport  http.RoundTripper
	creds      aws.CredentialsProvider
	signer     *v4.Signer
	warehouses []string
	// now is the clock (tests move it).
	now func() time.Time
}

// New makes a proxy.
func New(cfg Config) (*Proxy, error) {
	if cfg.Catalog == nil {
		return nil, errors.New("s3proxy: no catalog")
	}
	if cfg.Backend.Credentials == nil {
		return nil, errors.New("s3proxy: no backend credentials")
	}
	u, err := url.Parse(cfg.Backend.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("s3proxy: backend endpoint %q is not an http(s) URL", cfg.Backend.Endpoint)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath, u.RawQuery, u.Fragment = "", "", ""
	p := &Proxy{cfg: cfg, log: cfg.Logger, endpoint: u, transport: cfg.Backend.Transport,
		creds: aws.NewCredentialsCache(cfg.Backend.Credentials), now: time.Now,
		signer: v4.NewSigner(func(o *v4.SignerOptions) { o.DisableURIPathEscaping = true })}
	if p.log == nil {
		p.log = slog.Default()
	}
	if p.cfg.Backend.Region == "" {
		p.cfg.Backend.Region = "us-east-1"
	}
	if p.transport == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil
		t.DisableCompression = true // bodies pass through as stored
		t.MaxIdleConnsPerHost = 64
		p.transport = t
	}
	for _, w := range cfg.Warehouses {
		if !strings.HasPrefix(normPath(w), "s3://") {
			return nil, fmt.Errorf("s3proxy: warehouse %q is not an s3:// URI", w)
		}
		p.warehouses = append(p.warehouses, normPath(w))
	}
	return p, nil
}

// Check verifies that the catalog is one the proxy can work with: migrated
// (access keys exist) and connected as a role that sees every table.
func (p *Proxy) Check(ctx context.Context) error {
	migrated, owner, err := p.cfg.Catalog.CheckObjectAccess(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("s3proxy: catalog: %w", err)
	case !migrated:
		return errors.New("s3proxy: the catalog has no access keys (lakesoul.access_key): run lakesoul migrate up")
	case !owner:
		return errors.New("s3proxy: the catalog connection must be the catalog owner or a superuser")
	}
	return nil
}

func newRequestID() string {
	var b [8]byte
	rand.Read(b[:])
	return strings.ToUpper(hex.EncodeToString(b[:]))
}

// ServeHTTP authenticates, authorizes and forwards one S3 request.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	reqID := newRequestID()
	ctx := r.Context()
	deny := func(e *s3Error, keyID, role, reason string, extra ...any) {
		// A presigned URL's signature is a credential until it expires:
		// not for the log.
		query := signatureParam.ReplaceAllString(r.URL.RawQuery, "${1}…")
		args := append([]any{"request_id", reqID, "access_key_id", keyID, "role", role, "method", r.Method,
			"path", r.URL.Path, "query", query, "code", e.Code, "reason", reason, "remote", r.RemoteAddr}, extra...)
		p.log.Warn("s3proxy: request denied", args...)
		writeError(w, r, e, reqID)
	}
	params, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		deny(badRequest("InvalidURI", "Couldn't parse the specified URI."), "", "", "bad query encoding")
		return
	}
	a, e := verify(ctx, r, params, p.lookupKey, p.now())
	if e != nil {
		deny(e, claimedKeyID(r, params), "", "authentication: "+e.Message)
		return
	}
	keyID, role := a.key.ID, a.key.Role
	// A presigned URL may carry x-amz-* headers as query parameters (they
	// are signed there): S3 applies them as headers, so does the proxy.
	var rest []queryParam
	for _, q := range params {
		switch {
		case presignParams[q.key] && a.presigned:
		case a.presigned && strings.HasPrefix(strings.ToLower(q.key), "x-amz-"):
			r.Header.Set(q.key, q.value)
		default:
			rest = append(rest, q)
		}
	}
	bucket, key, e := splitPath(r.URL.Path)
	if e != nil {
		deny(e, keyID, role, e.Message)
		return
	}
	o, e := classify(r.Method, bucket, key, rest, r.Header)
	if e != nil {
		deny(e, keyID, role, e.Message)
		return
	}
	if !validPayload(a.payload) {
		deny(badRequest("InvalidArgument", "unsupported x-amz-content-sha256 %q", a.payload), keyID, role, "payload mode")
		return
	}
	state := &bodyState{}
	body, length, payload, e := p.requestBody(r, a, state)
	if e != nil {
		deny(e, keyID, role, e.Message)
		return
	}
	if o.deleteObjects {
		// The keys are in the body: read it (it is small), check each.
		buf, err := io.ReadAll(io.LimitReader(body, 4<<20+1))
		if err != nil || len(buf) > 4<<20 {
			if state.err != nil {
				deny(state.err, keyID, role, "request body")
			} else {
				deny(badRequest("MalformedXML", "the delete request is too large or unreadable"), keyID, role, "request body")
			}
			return
		}
		keys, err := deleteKeys(buf)
		if err != nil {
			deny(badRequest("MalformedXML", "The XML you provided was not well-formed or did not validate against our published schema."),
				keyID, role, "delete body: "+err.Error())
			return
		}
		for _, k := range keys {
			if why := badKey(k); why != "" || k == "" {
				deny(accessDenied("object key refused: %s", why), keyID, role, "delete key "+k)
				return
			}
			o.checks = append(o.checks, check{accessWrite, bucket, k})
		}
		body, length, payload = strings.NewReader(string(buf)), int64(len(buf)), sha256Hex(buf)
		if cb, ok := state.chunked(); ok {
			for k, v := range cb.trailerValues {
				r.Header.Set(k, v) // a checksum trailer becomes a header again
			}
		}
	}
	d, err := p.authorize(ctx, role, o.checks)
	if err != nil {
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) {
			// The role cannot be used (dropped, …): nothing is visible.
			deny(accessDenied("Access Denied"), keyID, role, "catalog: "+pgErr.Message)
			return
		}
		p.log.Error("s3proxy: catalog lookup failed", "request_id", reqID, "access_key_id", keyID, "err", err)
		writeError(w, r, errf(http.StatusServiceUnavailable, "ServiceUnavailable", "the catalog cannot be reached"), reqID)
		return
	}
	if d.denied != nil {
		deny(accessDenied("Access Denied"), keyID, role, d.reason,
			"access", d.denied.kind.String(), "object", d.denied.path(), "table", d.table)
		return
	}
	p.forward(w, r, reqID, bucket, key, rest, body, length, payload, state)
}

// deleteKeys reads the keys of a DeleteObjects body. Anything another XML
// parser might read differently is refused: an object with other than one
// Key, content after the root element.
func deleteKeys(body []byte) ([]string, error) {
	var doc struct {
		XMLName xml.Name
		Objects []struct {
			Keys []string `xml:"Key"`
		} `xml:"Object"`
	}
	dec := xml.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	if doc.XMLName.Local != "Delete" {
		return nil, errors.New("the root element is not Delete")
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if cd, ok := tok.(xml.CharData); !ok || len(bytes.TrimSpace(cd)) > 0 {
			return nil, errors.New("content after the root element")
		}
	}
	keys := make([]string, 0, len(doc.Objects))
	for _, o := range doc.Objects {
		if len(o.Keys) != 1 {
			return nil, errors.New("an Object without exactly one Key")
		}
		keys = append(keys, o.Keys[0])
	}
	return keys, nil
}

var signatureParam = regexp.MustCompile(`(?i)(X-Amz-Signature=)[^&]*`)

// claimedKeyID is the access key id a request names, for the log.
func claimedKeyID(r *http.Request, params []queryParam) string {
	c, ok := getParam(params, "X-Amz-Credential")
	if !ok {
		_, after, found := strings.Cut(r.Header.Get("Authorization"), "Credential=")
		if !found {
			return ""
		}
		c = after
	}
	id, _, _ := strings.Cut(c, "/")
	return id
}

// requestBody wraps the client's body in the check its signature calls
// for; it returns the body to forward, its length (-1: unknown) and the
// payload hash to sign it with.
func (p *Proxy) requestBody(r *http.Request, a *authn, state *bodyState) (io.Reader, int64, string, *s3Error) {
	if !isAWSChunked(a.payload) && strings.Contains(strings.ToLower(strings.Join(r.Header.Values("Content-Encoding"), ",")), "aws-chunked") {
		return nil, 0, "", badRequest("InvalidArgument", "aws-chunked bodies need a STREAMING-* x-amz-content-sha256")
	}
	if isAWSChunked(a.payload) {
		cb, e := newChunkedBody(r.Body, a, r.Header, state)
		if e != nil {
			return nil, 0, "", e
		}
		state.body = cb
		return cb, cb.decodedLen, unsignedPayload, nil
	}
	if r.ContentLength == 0 {
		if a.payload != unsignedPayload && a.payload != emptySHA256 && !a.presigned {
			return nil, 0, "", badRequest("XAmzContentSHA256Mismatch", "The provided 'x-amz-content-sha256' header does not match what was computed.")
		}
		return http.NoBody, 0, emptySHA256, nil
	}
	if r.ContentLength < 0 {
		return nil, 0, "", errf(http.StatusLengthRequired, "MissingContentLength", "You must provide the Content-Length HTTP header.")
	}
	if a.payload == unsignedPayload || a.presigned {
		return r.Body, r.ContentLength, unsignedPayload, nil
	}
	return newSHA256Body(r.Body, r.ContentLength, a.payload, state), r.ContentLength, a.payload, nil
}

// hopHeaders are not forwarded in either direction; the client's signature
// headers are replaced by the proxy's.
var hopHeaders = map[string]bool{
	"Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true, "Proxy-Authorization": true,
	"Proxy-Connection": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
}

var signatureHeaders = map[string]bool{
	"Authorization": true, "X-Amz-Date": true, "X-Amz-Content-Sha256": true, "X-Amz-Security-Token": true,
	"Expect": true, "Content-Length": true, "Host": true,
	// aws-chunked framing: the body is forwarded decoded.
	"X-Amz-Decoded-Content-Length": true, "X-Amz-Trailer": true,
}

func (p *Proxy) forward(w http.ResponseWriter, r *http.Request, reqID, bucket, key string, params []queryParam,
	body io.Reader, length int64, payload string, state *bodyState) {
	ctx := r.Context()
	u := *p.endpoint
	path := "/" + bucket
	if key != "" {
		path += "/" + key
	}
	u.Path = p.endpoint.Path + path
	u.RawPath = awsEncode(u.Path, true)
	u.RawQuery = canonicalQuery(params, nil)
	rc, ok := body.(io.ReadCloser)
	if !ok {
		rc = io.NopCloser(body)
	}
	out, err := http.NewRequestWithContext(ctx, r.Method, u.String(), nil)
	if err != nil {
		writeError(w, r, errf(http.StatusInternalServerError, "InternalError", "%v", err), reqID)
		return
	}
	out.URL = &u
	out.Body, out.ContentLength = rc, length
	if length == 0 {
		out.Body = http.NoBody
	}
	for k, vs := range r.Header {
		if hopHeaders[k] || signatureHeaders[k] {
			continue
		}
		if k == "Content-Encoding" {
			vs = withoutAWSChunked(vs)
			if len(vs) == 0 {
				continue
			}
		}
		out.Header[k] = append([]string(nil), vs...)
	}
	out.Header.Set("X-Amz-Content-Sha256", payload)
	creds, err := p.creds.Retrieve(ctx)
	if err != nil {
		p.log.Error("s3proxy: backend credentials", "request_id", reqID, "err", err)
		writeError(w, r, errf(http.StatusServiceUnavailable, "ServiceUnavailable", "the proxy has no backend credentials"), reqID)
		return
	}
	if err := p.signer.SignHTTP(ctx, creds, out, payload, "s3", p.cfg.Backend.Region, time.Now().UTC()); err != nil {
		writeError(w, r, errf(http.StatusInternalServerError, "InternalError", "signing: %v", err), reqID)
		return
	}
	resp, err := p.transport.RoundTrip(out)
	if err != nil {
		if state.err != nil {
			p.log.Warn("s3proxy: request body refused", "request_id", reqID, "method", r.Method, "path", r.URL.Path,
				"code", state.err.Code, "reason", state.err.Message)
			writeError(w, r, state.err, reqID)
			return
		}
		if ctx.Err() == nil {
			p.log.Error("s3proxy: backend request failed", "request_id", reqID, "method", r.Method, "path", r.URL.Path, "err", err)
			writeError(w, r, errf(http.StatusBadGateway, "InternalError", "the object store cannot be reached"), reqID)
		}
		return
	}
	defer resp.Body.Close()
	h := w.Header()
	for k, vs := range resp.Header {
		if !hopHeaders[k] {
			h[k] = vs
		}
	}
	if resp.ContentLength >= 0 && h.Get("Content-Length") == "" {
		h.Set("Content-Length", strconv.FormatInt(resp.ContentLength, 10))
	}
	h.Set("X-Amz-Request-Id", reqID)
	w.WriteHeader(resp.StatusCode)
	if r.Method == http.MethodHead {
		return
	}
	buf := make([]byte, 256<<10)
	if _, err := io.CopyBuffer(w, resp.Body, buf); err != nil && ctx.Err() == nil {
		p.log.Warn("s3proxy: response body cut", "request_id", reqID, "path", r.URL.Path, "err", err)
	}
}

func withoutAWSChunked(vs []string) []string {
	var out []string
	for _, v := range vs {
		var keep []string
		for t := range strings.SplitSeq(v, ",") {
			if t = strings.TrimSpace(t); t != "" && !strings.EqualFold(t, "aws-chunked") {
				keep = append(keep, t)
			}
		}
		if len(keep) > 0 {
			out = append(out, strings.Join(keep, ","))
		}
	}
	return out
}

// Server is a proxy listening on a TCP address.
type Server struct {
	http *http.Server
	ln   net.Listener
	done chan error
}

// Listen serves p on addr (host:port) until Shutdown.
func Listen(addr string, p *Proxy) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("s3proxy: listen %s: %w", addr, err)
	}
	s := &Server{ln: ln, done: make(chan error, 1),
		http: &http.Server{Handler: p, ReadHeaderTimeout: time.Minute, ErrorLog: slog.NewLogLogger(p.log.Handler(), slog.LevelWarn)}}
	safego.Go(func() {
		err := safego.Call(func() error { return s.http.Serve(ln) })
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.done <- err
	})
	return s, nil
}

// Addr is the listening address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Wait blocks until the server stops (Shutdown, or a listener failure).
func (s *Server) Wait() error {
	err := <-s.done
	s.done <- err
	return err
}

// Shutdown stops accepting and waits for requests in flight (until ctx
// ends; then they are cut).
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.http.Shutdown(ctx)
	if err != nil {
		s.http.Close()
	}
	return err
}
