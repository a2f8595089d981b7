package s3proxy

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/textproto"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// AWS Signature Version 4 as S3 uses it: the canonical request of the
// client's request is rebuilt from what arrived, signed with the secret of
// the access key it names, and compared with the client's signature.

const (
	sigAlgorithm      = "AWS4-HMAC-SHA256"
	unsignedPayload   = "UNSIGNED-PAYLOAD"
	streamingSigned   = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
	streamingSignedTr = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"
	streamingUnsigned = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
	amzDateFormat     = "20060102T150405Z"
	// maxSkew is how far a request's date may be from the proxy's clock.
	maxSkew = 15 * time.Minute
	// maxPresignExpiry is the longest X-Amz-Expires S3 accepts.
	maxPresignExpiry = 7 * 24 * time.Hour
	// emptySHA256 is the hex SHA-256 of no bytes.
	emptySHA256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
)

// keyInfo is an access key as the catalog knows it.
type keyInfo struct {
	ID, Secret, Role string
}

// errUnknownKey is what a key lookup returns for keys that do not exist or
// are revoked.
var errUnknownKey = errors.New("unknown or revoked access key")

// keyLookup finds an active access key.
type keyLookup func(ctx context.Context, id string) (keyInfo, error)

// authn is a request whose signature checked out.
type authn struct {
	key       keyInfo
	presigned bool
	// payload is the client's x-amz-content-sha256 (header auth) or
	// UNSIGNED-PAYLOAD (presigned URLs).
	payload string
	// amzDate, scope, signingKey and signature continue the signature chain
	// of aws-chunked bodies.
	amzDate    string
	scope      string
	signingKey []byte
	signature  string
}

// queryParam is one decoded query parameter, in the order sent.
type queryParam struct{ key, value string }

// parseQuery splits a raw query into decoded parameters. '+' is a plus sign,
// as AWS's canonical encoding has it, not a space.
func parseQuery(raw string) ([]queryParam, error) {
	var out []queryParam
	for part := range strings.SplitSeq(raw, "&") {
		if part == "" {
			continue
		}
		k, v, _ := strings.Cut(part, "=")
		dk, err := percentDecode(k)
		if err != nil {
			return nil, err
		}
		dv, err := percentDecode(v)
		if err != nil {
			return nil, err
		}
		out = append(out, queryParam{dk, dv})
	}
	return out, nil
}

var errBadEscape = errors.New("bad percent-encoding")

func percentDecode(s string) (string, error) {
	if !strings.Contains(s, "%") {
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", errBadEscape
		}
		b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
		i += 2
	}
	return b.String(), nil
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

// awsEncode is SigV4's URI encoding: every byte but A-Z a-z 0-9 - _ . ~ (and
// '/' when keepSlash) as %XX with upper-case hex.
func awsEncode(s string, keepSlash bool) string {
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'A' <= c && c <= 'Z', 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			b.WriteByte(c)
		case c == '/' && keepSlash:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		}
	}
	return b.String()
}

// canonicalQuery encodes params sorted by encoded key, then value, leaving
// out those skip names.
func canonicalQuery(params []queryParam, skip func(key string) bool) string {
	type enc struct{ k, v string }
	list := make([]enc, 0, len(params))
	for _, p := range params {
		if skip != nil && skip(p.key) {
			continue
		}
		list = append(list, enc{awsEncode(p.key, false), awsEncode(p.value, false)})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].k != list[j].k {
			return list[i].k < list[j].k
		}
		return list[i].v < list[j].v
	})
	var b strings.Builder
	for i, e := range list {
		if i > 0 {
			b.WriteByte('&')
		}
		b.WriteString(e.k)
		b.WriteByte('=')
		b.WriteString(e.v)
	}
	return b.String()
}

func getParam(params []queryParam, key string) (string, bool) {
	for _, p := range params {
		if p.key == key {
			return p.value, true
		}
	}
	return "", false
}

// presignParams are the query parameters of a presigned URL's signature.
var presignParams = map[string]bool{
	"X-Amz-Algorithm": true, "X-Amz-Credential": true, "X-Amz-Date": true, "X-Amz-Expires": true,
	"X-Amz-SignedHeaders": true, "X-Amz-Signature": true, "X-Amz-Security-Token": true,
}

var spaces = regexp.MustCompile(` {2,}`)

// headerValue is the canonical value of a signed header as it arrived.
func headerValue(r *http.Request, name string) string {
	var vals []string
	switch name {
	case "host":
		vals = []string{r.Host}
	case "transfer-encoding":
		vals = r.TransferEncoding
	default:
		vals = r.Header.Values(textproto.CanonicalMIMEHeaderKey(name))
		if len(vals) == 0 && name == "content-length" && r.ContentLength >= 0 {
			vals = []string{strconv.FormatInt(r.ContentLength, 10)}
		}
	}
	clean := make([]string, len(vals))
	for i, v := range vals {
		clean[i] = strings.TrimSpace(spaces.ReplaceAllString(v, " "))
	}
	return strings.Join(clean, ",")
}

// credentialScope is the parsed Credential of a signature.
type credentialScope struct {
	keyID, date, region string
}

func (c credentialScope) String() string { return c.date + "/" + c.region + "/s3/aws4_request" }

func parseCredential(s string) (credentialScope, *s3Error) {
	parts := strings.Split(s, "/")
	if len(parts) != 5 || parts[0] == "" || len(parts[1]) != 8 || parts[2] == "" || parts[4] != "aws4_request" {
		return credentialScope{}, badRequest("AuthorizationHeaderMalformed", "malformed credential %q", s)
	}
	if parts[3] != "s3" {
		return credentialScope{}, badRequest("AuthorizationHeaderMalformed", "credential should be scoped to service s3, not %q", parts[3])
	}
	return credentialScope{keyID: parts[0], date: parts[1], region: parts[2]}, nil
}

func hmacSHA256(key []byte, data string) []byte {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(data))
	return h.Sum(nil)
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func signingKey(secret string, c credentialScope) []byte {
	k := hmacSHA256([]byte("AWS4"+secret), c.date)
	k = hmacSHA256(k, c.region)
	k = hmacSHA256(k, "s3")
	return hmacSHA256(k, "aws4_request")
}

// verify authenticates r (header or presigned-URL SigV4) at time now. params
// is r's decoded query.
func verify(ctx context.Context, r *http.Request, params []queryParam, lookup keyLookup, now time.Time) (*authn, *s3Error) {
	authz := r.Header.Get("Authorization")
	_, presigned := getParam(params, "X-Amz-Algorithm")
	switch {
	case strings.HasPrefix(authz, sigAlgorithm+" ") && !presigned:
		return verifyHeader(ctx, r, params, authz, lookup, now)
	case presigned && authz == "":
		return verifyPresigned(ctx, r, params, lookup, now)
	case authz != "" && presigned:
		return nil, badRequest("InvalidArgument", "only one auth mechanism allowed")
	case authz != "":
		return nil, badRequest("InvalidArgument", "only AWS Signature Version 4 (%s) is supported", sigAlgorithm)
	}
	return nil, accessDenied("anonymous requests are not allowed; sign requests with an access key from lakesoul.create_access_key()")
}

func verifyHeader(ctx context.Context, r *http.Request, params []queryParam, authz string, lookup keyLookup, now time.Time) (*authn, *s3Error) {
	fields := map[string]string{}
	for f := range strings.SplitSeq(strings.TrimPrefix(authz, sigAlgorithm+" "), ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(f), "=")
		if !ok {
			return nil, badRequest("AuthorizationHeaderMalformed", "malformed Authorization header")
		}
		fields[k] = v
	}
	cred, e := parseCredential(fields["Credential"])
	if e != nil {
		return nil, e
	}
	signed, e := parseSignedHeaders(fields["SignedHeaders"])
	if e != nil {
		return nil, e
	}
	sig := fields["Signature"]
	if sig == "" {
		return nil, badRequest("AuthorizationHeaderMalformed", "the Authorization header has no Signature")
	}
	amzDate := r.Header.Get("X-Amz-Date")
	var t time.Time
	var err error
	if amzDate != "" {
		t, err = time.Parse(amzDateFormat, amzDate)
	} else if d := r.Header.Get("Date"); d != "" {
		t, err = http.ParseTime(d)
		amzDate = t.UTC().Format(amzDateFormat)
	} else {
		return nil, accessDenied("AWS authentication requires a valid Date or x-amz-date header")
	}
	if err != nil {
		return nil, accessDenied("AWS authentication requires a valid Date or x-amz-date header")
	}
	if amzDate[:8] != cred.date {
		return nil, badRequest("AuthorizationHeaderMalformed", "the credential's date %s is not the request's date %s", cred.date, amzDate[:8])
	}
	if d := now.Sub(t); d > maxSkew || d < -maxSkew {
		return nil, errf(http.StatusForbidden, "RequestTimeTooSkewed",
			"The difference between the request time and the current time is too large.")
	}
	payload := r.Header.Get("X-Amz-Content-Sha256")
	if payload == "" {
		return nil, badRequest("InvalidRequest", "Missing required header for this request: x-amz-content-sha256")
	}
	if e := checkAmzHeadersSigned(r, signed, false); e != nil {
		return nil, e
	}
	a, e := finish(ctx, r, params, cred, signed, amzDate, payload, sig, nil, lookup)
	if e != nil {
		return nil, e
	}
	return a, nil
}

func verifyPresigned(ctx context.Context, r *http.Request, params []queryParam, lookup keyLookup, now time.Time) (*authn, *s3Error) {
	if alg, _ := getParam(params, "X-Amz-Algorithm"); alg != sigAlgorithm {
		return nil, badRequest("AuthorizationQueryParametersError", "X-Amz-Algorithm only supports %q", sigAlgorithm)
	}
	credStr, _ := getParam(params, "X-Amz-Credential")
	cred, e := parseCredential(credStr)
	if e != nil {
		return nil, e
	}
	sh, _ := getParam(params, "X-Amz-SignedHeaders")
	signed, e := parseSignedHeaders(sh)
	if e != nil {
		return nil, e
	}
	sig, _ := getParam(params, "X-Amz-Signature")
	amzDate, _ := getParam(params, "X-Amz-Date")
	t, err := time.Parse(amzDateFormat, amzDate)
	if err != nil || sig == "" {
		return nil, badRequest("AuthorizationQueryParametersError", "a presigned URL needs X-Amz-Date and X-Amz-Signature")
	}
	if amzDate[:8] != cred.date {
		return nil, badRequest("AuthorizationQueryParametersError", "the credential's date %s is not the request's date %s", cred.date, amzDate[:8])
	}
	expStr, _ := getParam(params, "X-Amz-Expires")
	exp, err := strconv.ParseInt(expStr, 10, 64)
	if err != nil || exp < 0 {
		return nil, badRequest("AuthorizationQueryParametersError", "X-Amz-Expires should be a number of seconds")
	}
	if time.Duration(exp)*time.Second > maxPresignExpiry {
		return nil, badRequest("AuthorizationQueryParametersError", "X-Amz-Expires must be less than a week (in seconds); that is, the given X-Amz-Expires must be less than 604800 seconds")
	}
	if now.Before(t.Add(-maxSkew)) {
		return nil, accessDenied("Request is not valid yet")
	}
	if now.After(t.Add(time.Duration(exp) * time.Second)) {
		return nil, accessDenied("Request has expired")
	}
	if e := checkAmzHeadersSigned(r, signed, true); e != nil {
		return nil, e
	}
	skip := func(k string) bool { return k == "X-Amz-Signature" }
	a, e := finish(ctx, r, params, cred, signed, amzDate, unsignedPayload, sig, skip, lookup)
	if e != nil {
		return nil, e
	}
	a.presigned = true
	return a, nil
}

// parseSignedHeaders checks a SignedHeaders list: lower case, sorted,
// unique, with host.
func parseSignedHeaders(s string) ([]string, *s3Error) {
	names := strings.Split(s, ";")
	host := false
	for i, n := range names {
		if n == "" || n != strings.ToLower(n) || (i > 0 && names[i-1] >= n) {
			return nil, badRequest("AuthorizationHeaderMalformed", "malformed SignedHeaders %q", s)
		}
		host = host || n == "host"
	}
	if !host {
		return nil, badRequest("AuthorizationHeaderMalformed", "the host header must be signed")
	}
	return names, nil
}

// checkAmzHeadersSigned refuses x-amz-* headers the signature does not
// cover: they change what S3 does (x-amz-copy-source …), so nobody may add
// them to someone else's signed request.
func checkAmzHeadersSigned(r *http.Request, signed []string, presigned bool) *s3Error {
	set := make(map[string]bool, len(signed))
	for _, n := range signed {
		set[n] = true
	}
	for k := range r.Header {
		lk := strings.ToLower(k)
		if !strings.HasPrefix(lk, "x-amz-") || set[lk] {
			continue
		}
		if presigned && lk == "x-amz-content-sha256" {
			continue // a presigned URL's payload is unsigned whatever this says
		}
		return accessDenied("There were headers present in the request which were not signed: %s", lk)
	}
	return nil
}

// finish builds the canonical request, looks the key up and compares the
// signature.
func finish(ctx context.Context, r *http.Request, params []queryParam, cred credentialScope, signed []string,
	amzDate, payload, sig string, skip func(string) bool, lookup keyLookup) (*authn, *s3Error) {
	key, err := lookup(ctx, cred.keyID)
	if errors.Is(err, errUnknownKey) {
		return nil, invalidAccessKey()
	}
	if err != nil {
		return nil, errf(http.StatusServiceUnavailable, "ServiceUnavailable", "access keys cannot be checked now")
	}
	var canon strings.Builder
	canon.WriteString(r.Method)
	canon.WriteByte('\n')
	canon.WriteString(canonicalURI(r.URL.Path))
	canon.WriteByte('\n')
	canon.WriteString(canonicalQuery(params, skip))
	canon.WriteByte('\n')
	for _, n := range signed {
		canon.WriteString(n)
		canon.WriteByte(':')
		canon.WriteString(headerValue(r, n))
		canon.WriteByte('\n')
	}
	canon.WriteByte('\n')
	canon.WriteString(strings.Join(signed, ";"))
	canon.WriteByte('\n')
	canon.WriteString(payload)
	scope := cred.String()
	toSign := sigAlgorithm + "\n" + amzDate + "\n" + scope + "\n" + sha256Hex([]byte(canon.String()))
	sk := signingKey(key.Secret, cred)
	want := hex.EncodeToString(hmacSHA256(sk, toSign))
	if !hmac.Equal([]byte(want), []byte(strings.ToLower(sig))) {
		return nil, signatureMismatch()
	}
	return &authn{key: key, payload: payload, amzDate: amzDate, scope: scope, signingKey: sk, signature: want}, nil
}

// canonicalURI is the SigV4 canonical path of S3: the decoded path encoded
// once, '/' kept, never normalised.
func canonicalURI(path string) string {
	if path == "" {
		return "/"
	}
	return awsEncode(path, true)
}
