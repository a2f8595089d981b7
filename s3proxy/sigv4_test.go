package s3proxy

import (
	"bufio"
	"context"
	"errors"
	"hash/crc64"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The known answers are the worked examples of AWS's SigV4-for-S3
// documentation (example key AKIAIOSFODNN7EXAMPLE).
const (
	exampleKeyID  = "AKIAIOSFODNN7EXAMPLE"
	exampleSecret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
)

var exampleTime = time.Date(2013, 5, 24, 0, 5, 0, 0, time.UTC)

func exampleLookup(_ context.Context, id string) (keyInfo, error) {
	if id != exampleKeyID {
		return keyInfo{}, errUnknownKey
	}
	return keyInfo{ID: id, Secret: exampleSecret, Role: "alice"}, nil
}

// readRequest parses a raw request as the HTTP server does.
func readRequest(t *testing.T, raw string) *http.Request {
	t.Helper()
	raw = strings.ReplaceAll(raw, "\n", "\r\n")
	r, err := http.ReadRequest(bufio.NewReader(strings.NewReader(raw)))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func verifyRaw(t *testing.T, r *http.Request, now time.Time) (*authn, *s3Error) {
	t.Helper()
	params, err := parseQuery(r.URL.RawQuery)
	if err != nil {
		t.Fatal(err)
	}
	return verify(context.Background(), r, params, exampleLookup, now)
}

func TestSigV4KnownAnswers(t *testing.T) {
	cases := []struct{ name, raw string }{
		{"GET object", `GET /test.txt HTTP/1.1
Host: examplebucket.s3.amazonaws.com
Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41
Range: bytes=0-9
x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
x-amz-date: 20130524T000000Z

`},
		{"PUT object", `PUT /test%24file.text HTTP/1.1
Host: examplebucket.s3.amazonaws.com
Date: Fri, 24 May 2013 00:00:00 GMT
Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class,Signature=98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd
x-amz-date: 20130524T000000Z
x-amz-storage-class: REDUCED_REDUNDANCY
x-amz-content-sha256: 44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072
Content-Length: 21

Welcome to Amazon S3.`},
		{"GET bucket lifecycle", `GET /?lifecycle HTTP/1.1
Host: examplebucket.s3.amazonaws.com
Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature=fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543
x-amz-date: 20130524T000000Z
x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

`},
		{"list objects", `GET /?max-keys=2&prefix=J HTTP/1.1
Host: examplebucket.s3.amazonaws.com
Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;x-amz-content-sha256;x-amz-date,Signature=34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7
x-amz-date: 20130524T000000Z
x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

`},
		{"presigned GET", `GET /test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404 HTTP/1.1
Host: examplebucket.s3.amazonaws.com

`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, e := verifyRaw(t, readRequest(t, c.raw), exampleTime)
			if e != nil {
				t.Fatalf("verify: %v", e)
			}
			if a.key.Role != "alice" {
				t.Errorf("role %q", a.key.Role)
			}
			// Any change to what was signed breaks the signature.
			for _, tamper := range []func(string) string{
				func(s string) string { return strings.Replace(s, "examplebucket", "otherbucket", 1) },
				func(s string) string { return strings.Replace(s, "/", "/x", 1) },
				func(s string) string {
					return strings.Replace(s, exampleKeyID+"/20130524/us-east-1", exampleKeyID+"/20130524/eu-west-1", 1)
				},
				func(s string) string { return strings.Replace(s, "us-east-1%2Fs3", "eu-west-1%2Fs3", 1) },
			} {
				if tamper(c.raw) == c.raw {
					continue
				}
				if _, e := verifyRaw(t, readRequest(t, tamper(c.raw)), exampleTime); e == nil || e.Code != "SignatureDoesNotMatch" {
					t.Errorf("tampered request: %v, want SignatureDoesNotMatch", e)
				}
			}
		})
	}
}

func TestSigV4Refusals(t *testing.T) {
	get := `GET /test.txt HTTP/1.1
Host: examplebucket.s3.amazonaws.com
Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41
Range: bytes=0-9
x-amz-content-sha256: e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
x-amz-date: 20130524T000000Z

`
	presigned := `GET /test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404 HTTP/1.1
Host: examplebucket.s3.amazonaws.com

`
	for _, c := range []struct {
		name, raw string
		now       time.Time
		code      string
	}{
		{"skewed clock", get, exampleTime.Add(20 * time.Minute), "RequestTimeTooSkewed"},
		{"date in the future", get, exampleTime.Add(-30 * time.Minute), "RequestTimeTooSkewed"},
		{"unknown key", strings.Replace(get, "AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLX", 1), exampleTime, "InvalidAccessKeyId"},
		{"unsigned x-amz header", strings.Replace(get, "Range:", "x-amz-copy-source: other/key\nRange:", 1), exampleTime, "AccessDenied"},
		{"anonymous", "GET /test.txt HTTP/1.1\nHost: examplebucket.s3.amazonaws.com\n\n", exampleTime, "AccessDenied"},
		{"signature v2", "GET /test.txt HTTP/1.1\nHost: h\nAuthorization: AWS AKIAIOSFODNN7EXAMPLE:abc\n\n", exampleTime, "InvalidArgument"},
		{"expired URL", presigned, exampleTime.Add(86401 * time.Second), "AccessDenied"},
		{"URL not valid yet", presigned, exampleTime.Add(-time.Hour), "AccessDenied"},
		{"forged URL signature", strings.Replace(presigned, "Signature=aeeed9", "Signature=aeeed8", 1), exampleTime, "SignatureDoesNotMatch"},
		{"longer URL expiry", strings.Replace(presigned, "X-Amz-Expires=86400", "X-Amz-Expires=86401", 1), exampleTime, "SignatureDoesNotMatch"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, e := verifyRaw(t, readRequest(t, c.raw), c.now)
			if e == nil || e.Code != c.code {
				t.Fatalf("got %v, want %s", e, c.code)
			}
		})
	}
}

// The signed aws-chunked example: a 66560-byte object in chunks of 64 KiB
// and 1 KiB.
func chunkedExample(final string) string {
	return "10000;chunk-signature=ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648\r\n" +
		strings.Repeat("a", 65536) + "\r\n" +
		"400;chunk-signature=0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497\r\n" +
		strings.Repeat("a", 1024) + "\r\n" +
		"0;chunk-signature=" + final + "\r\n\r\n"
}

const chunkedHead = `PUT /examplebucket/chunkObject.txt HTTP/1.1
Host: s3.amazonaws.com
x-amz-date: 20130524T000000Z
x-amz-storage-class: REDUCED_REDUNDANCY
Authorization: AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class,Signature=4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9
x-amz-content-sha256: STREAMING-AWS4-HMAC-SHA256-PAYLOAD
Content-Encoding: aws-chunked
x-amz-decoded-content-length: 66560
Content-Length: 66824

`

const chunkedFinal = "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"

func decodeChunked(t *testing.T, body string) (string, *s3Error) {
	t.Helper()
	r := readRequest(t, chunkedHead)
	r.Body = io.NopCloser(strings.NewReader(body))
	a, e := verifyRaw(t, r, exampleTime)
	if e != nil {
		t.Fatalf("seed signature: %v", e)
	}
	state := &bodyState{}
	cb, e := newChunkedBody(r.Body, a, r.Header, state)
	if e != nil {
		t.Fatal(e)
	}
	out, err := io.ReadAll(cb)
	if err != nil {
		var se *s3Error
		if !errors.As(err, &se) {
			t.Fatalf("read: %v", err)
		}
		return string(out), se
	}
	return string(out), nil
}

func TestSignedChunks(t *testing.T) {
	out, e := decodeChunked(t, chunkedExample(chunkedFinal))
	if e != nil {
		t.Fatal(e)
	}
	if out != strings.Repeat("a", 66560) {
		t.Fatalf("decoded %d bytes", len(out))
	}
	// A changed byte, a bad final signature, a missing last chunk: the
	// decoder refuses before handing on the last byte.
	tampered := strings.Replace(chunkedExample(chunkedFinal), "aaaa\r\n400", "aaab\r\n400", 1)
	for name, body := range map[string]string{
		"changed data":    tampered,
		"final signature": chunkedExample(strings.Repeat("0", 64)),
		"truncated":       chunkedExample(chunkedFinal)[:65626],
	} {
		out, e := decodeChunked(t, body)
		if e == nil {
			t.Errorf("%s: accepted", name)
		}
		if len(out) >= 66560 {
			t.Errorf("%s: %d bytes handed on before the refusal", name, len(out))
		}
	}
}

func TestUnsignedTrailer(t *testing.T) {
	body := "5\r\nhello\r\n6\r\n world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n"
	h := http.Header{}
	h.Set("X-Amz-Decoded-Content-Length", "11")
	h.Set("X-Amz-Trailer", "x-amz-checksum-crc32")
	read := func(body string) (string, error) {
		cb, e := newChunkedBody(strings.NewReader(body), &authn{payload: streamingUnsigned}, h, &bodyState{})
		if e != nil {
			t.Fatal(e)
		}
		out, err := io.ReadAll(cb)
		return string(out), err
	}
	if out, err := read(body); err != nil || out != "hello world" {
		t.Fatalf("got %q, %v", out, err)
	}
	out, err := read(strings.Replace(body, "DUoRhQ==", "AAAAAA==", 1))
	if err == nil || !strings.Contains(err.Error(), "BadDigest") {
		t.Fatalf("bad checksum: %v", err)
	}
	if len(out) >= 11 {
		t.Errorf("%d bytes handed on before the refusal", len(out))
	}
}

func TestSHA256Body(t *testing.T) {
	const want = "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072"
	read := func(s string) (string, error) {
		out, err := io.ReadAll(newSHA256Body(strings.NewReader(s), int64(len(s)), want, &bodyState{}))
		return string(out), err
	}
	if out, err := read("Welcome to Amazon S3."); err != nil || out != "Welcome to Amazon S3." {
		t.Fatalf("got %q, %v", out, err)
	}
	out, err := read("Welcome to Amazon S4.")
	if err == nil || !strings.Contains(err.Error(), "XAmzContentSHA256Mismatch") || len(out) == 21 {
		t.Fatalf("changed body: %q, %v", out, err)
	}
}

func TestCRC64NVME(t *testing.T) {
	// The CRC-64/NVME check value.
	if got := crc64.Checksum([]byte("123456789"), crc64nvme); got != 0xae8b14860a799888 {
		t.Fatalf("crc64nvme = %x", got)
	}
}

func TestBadKeys(t *testing.T) {
	for _, k := range []string{"wh/ns/t/../u/x", "wh/./x", "wh//x", "/wh", "..", "a\\b", "a%2Fb", "a%2e%2e/b", "a\x00b"} {
		if badKey(k) == "" {
			t.Errorf("%q accepted", k)
		}
	}
	for _, k := range []string{"wh/ns/t/d=2026-01-01/part-x_0000.parquet", "wh/ns/", "a..b/c.d", "a b+c"} {
		if why := badKey(k); why != "" {
			t.Errorf("%q refused: %s", k, why)
		}
	}
}

func TestDeleteKeys(t *testing.T) {
	keys, err := deleteKeys([]byte(`<?xml version="1.0"?><Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
		<Object><Key>a/b</Key></Object><Object><Key>a&amp;c</Key><VersionId>1</VersionId></Object><Quiet>true</Quiet></Delete>`))
	if err != nil || strings.Join(keys, "|") != "a/b|a&c" {
		t.Fatalf("keys %q, %v", keys, err)
	}
	for _, body := range []string{
		`<Delete><Object><Key>a</Key><Key>b</Key></Object></Delete>`,
		`<Delete><Object><x:Key xmlns:x="y">b</x:Key><Key>a</Key></Object></Delete>`,
		`<Delete><Object><Key>a</Key></Object></Delete><Delete><Object><Key>b</Key></Object></Delete>`,
		`<Delete><Object></Object></Delete>`,
		`<!DOCTYPE d [<!ENTITY e "b">]><Delete><Object><Key>&e;</Key></Object></Delete>`,
		`<Other><Object><Key>a</Key></Object></Other>`,
	} {
		if keys, err := deleteKeys([]byte(body)); err == nil {
			t.Errorf("%s: accepted as %q", body, keys)
		}
	}
}

func TestClassifyRefusesAmbiguity(t *testing.T) {
	params := []queryParam{{"list-type", "2"}, {"prefix", "wh/ns_a/"}, {"prefix", "wh/ns_b/"}}
	if _, e := classify(http.MethodGet, "b", "", params, http.Header{}); e == nil {
		t.Error("two prefixes accepted")
	}
	h := http.Header{}
	h.Add("X-Amz-Copy-Source", "b/wh/ns_a/t/x")
	h.Add("X-Amz-Copy-Source", "b/wh/ns_b/u/x")
	if _, e := classify(http.MethodPut, "b", "wh/ns_a/t/y", nil, h); e == nil {
		t.Error("two copy sources accepted")
	}
	for _, m := range []string{http.MethodPut + " ?acl", http.MethodGet + " ?tagging", http.MethodPost + " ?restore", "PATCH "} {
		method, q, _ := strings.Cut(m, " ?")
		var ps []queryParam
		if q != "" {
			ps = []queryParam{{q, ""}}
		}
		if _, e := classify(method, "b", "wh/ns_a/t/x", ps, http.Header{}); e == nil {
			t.Errorf("%s accepted", m)
		}
	}
}
