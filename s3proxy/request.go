package s3proxy

import (
	"net/http"
	"regexp"
	"strings"
	"unicode/utf8"
)

// What a request does, and to which paths: every operation the proxy
// forwards is one of a few kinds, each checked against the table owning the
// path. Anything else is refused.

type access int

const (
	// accessRead reads an object (GET, HEAD, ListParts, a copy's source).
	accessRead access = iota
	// accessWrite creates, overwrites or deletes an object, or works on a
	// multipart upload.
	accessWrite
	// accessList lists keys under a prefix (ListObjects[V2],
	// ListObjectVersions, ListMultipartUploads).
	accessList
)

func (a access) String() string {
	switch a {
	case accessRead:
		return "read"
	case accessWrite:
		return "write"
	}
	return "list"
}

// check is one access the request needs; for lists key is the prefix.
type check struct {
	kind        access
	bucket, key string
}

func (c check) path() string { return "s3://" + c.bucket + "/" + c.key }

// op is a classified request.
type op struct {
	checks []check
	// deleteObjects: the keys are in the body (POST /bucket?delete).
	deleteObjects bool
}

var bucketName = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{1,61}[a-z0-9]$`)

// splitPath splits a path-style request path into bucket and key and
// refuses keys that do not name one object unambiguously.
func splitPath(p string) (bucket, key string, e *s3Error) {
	if !strings.HasPrefix(p, "/") {
		return "", "", accessDenied("bad request path")
	}
	bucket, key, _ = strings.Cut(p[1:], "/")
	if bucket == "" {
		if key != "" {
			return "", "", accessDenied("bad request path")
		}
		return "", "", nil
	}
	if !bucketName.MatchString(bucket) || strings.Contains(bucket, "..") {
		return "", "", accessDenied("bad bucket name")
	}
	if key != "" {
		if why := badKey(key); why != "" {
			return "", "", accessDenied("object key refused: %s", why)
		}
	}
	return bucket, key, nil
}

// badKey says why a key (or list prefix) is refused, or "". The proxy
// decides on the key as it reads it and the backend must store exactly that
// key; keys a backend might read differently are refused: dot segments and
// empty segments (backends that clean paths would move them to another
// table), backslashes, control characters, and escapes that would become
// such things if a backend decoded the key once more.
func badKey(key string) string {
	if len(key) > 1024 {
		return "longer than 1024 bytes"
	}
	if !utf8.ValidString(key) {
		return "not UTF-8"
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return "control character or backslash"
		}
	}
	segs := strings.Split(key, "/")
	for i, s := range segs {
		switch {
		case s == "" && i < len(segs)-1:
			return "empty path segment"
		case s == "." || s == "..":
			return "dot segment"
		}
	}
	lk := strings.ToLower(key)
	for _, esc := range []string{"%2f", "%5c", "%2e", "%00"} {
		if strings.Contains(lk, esc) {
			return "encoded separator"
		}
	}
	return ""
}

// Query parameters each operation may carry besides its own.
var (
	// x-id is added by aws-sdk-go-v2 to name the operation.
	commonParams = map[string]bool{"x-id": true}
	readParams   = map[string]bool{"versionId": true, "partNumber": true, "response-cache-control": true,
		"response-content-disposition": true, "response-content-encoding": true, "response-content-language": true,
		"response-content-type": true, "response-expires": true}
	listPartsParams = map[string]bool{"uploadId": true, "max-parts": true, "part-number-marker": true}
	listParams      = map[string]bool{"list-type": true, "prefix": true, "delimiter": true, "max-keys": true,
		"marker": true, "continuation-token": true, "start-after": true, "fetch-owner": true, "encoding-type": true,
		"allow-unordered": true}
	listUploadsParams = map[string]bool{"uploads": true, "prefix": true, "delimiter": true, "max-uploads": true,
		"key-marker": true, "upload-id-marker": true, "encoding-type": true}
	listVersionsParams = map[string]bool{"versions": true, "prefix": true, "delimiter": true, "max-keys": true,
		"key-marker": true, "version-id-marker": true, "encoding-type": true}
)

// only tells whether every parameter is common or in one of sets.
func only(params []queryParam, sets ...map[string]bool) bool {
next:
	for _, p := range params {
		if commonParams[p.key] {
			continue
		}
		for _, s := range sets {
			if s[p.key] {
				continue next
			}
		}
		return false
	}
	return true
}

func has(params []queryParam, key string) bool {
	_, ok := getParam(params, key)
	return ok
}

// classify maps a request to the accesses it needs. params are the query
// parameters without a presigned URL's signature.
func classify(method, bucket, key string, params []queryParam, h http.Header) (*op, *s3Error) {
	unsupported := func() (*op, *s3Error) {
		return nil, accessDenied("this operation is not available through the LakeSoul S3 proxy")
	}
	if bucket == "" {
		return unsupported() // ListBuckets and the like
	}
	// A parameter or header given twice could be read one way here and
	// the other way by the backend.
	seen := map[string]bool{}
	for _, p := range params {
		if seen[p.key] {
			return nil, accessDenied("query parameter %q given twice", p.key)
		}
		seen[p.key] = true
	}
	if len(h.Values("X-Amz-Copy-Source")) > 1 {
		return nil, accessDenied("x-amz-copy-source given twice")
	}
	if key == "" {
		prefix, _ := getParam(params, "prefix")
		if prefix != "" {
			if why := badKey(prefix); why != "" {
				return nil, accessDenied("prefix refused: %s", why)
			}
		}
		list := &op{checks: []check{{accessList, bucket, prefix}}}
		switch {
		case method == http.MethodHead && only(params):
			return &op{}, nil // HeadBucket: only says the bucket exists
		case method == http.MethodGet && has(params, "location") && only(params, map[string]bool{"location": true}):
			return &op{}, nil // GetBucketLocation
		case method == http.MethodGet && has(params, "uploads") && only(params, listUploadsParams):
			return list, nil
		case method == http.MethodGet && has(params, "versions") && only(params, listVersionsParams):
			return list, nil
		case method == http.MethodGet && only(params, listParams):
			return list, nil
		case method == http.MethodPost && has(params, "delete") && only(params, map[string]bool{"delete": true}):
			return &op{deleteObjects: true}, nil
		}
		return unsupported()
	}
	obj := []check{{accessRead, bucket, key}}
	write := []check{{accessWrite, bucket, key}}
	switch method {
	case http.MethodGet, http.MethodHead:
		switch {
		case has(params, "uploadId") && method == http.MethodGet && only(params, listPartsParams):
			return &op{checks: obj}, nil // ListParts
		case has(params, "attributes") && method == http.MethodGet && only(params, map[string]bool{"attributes": true, "versionId": true}):
			return &op{checks: obj}, nil // GetObjectAttributes
		case only(params, readParams):
			return &op{checks: obj}, nil
		}
	case http.MethodPut:
		if only(params) || (has(params, "partNumber") && has(params, "uploadId") && only(params, map[string]bool{"partNumber": true, "uploadId": true})) {
			if src := h.Get("X-Amz-Copy-Source"); src != "" {
				sb, sk, e := parseCopySource(src)
				if e != nil {
					return nil, e
				}
				write = append(write, check{accessRead, sb, sk})
			}
			return &op{checks: write}, nil // PutObject, CopyObject, UploadPart, UploadPartCopy
		}
	case http.MethodPost:
		if (has(params, "uploads") && only(params, map[string]bool{"uploads": true})) ||
			(has(params, "uploadId") && only(params, map[string]bool{"uploadId": true})) {
			return &op{checks: write}, nil // CreateMultipartUpload, CompleteMultipartUpload
		}
	case http.MethodDelete:
		if only(params, map[string]bool{"versionId": true, "uploadId": true}) {
			return &op{checks: write}, nil // DeleteObject, AbortMultipartUpload
		}
	}
	return unsupported()
}

// parseCopySource reads x-amz-copy-source: [/]bucket/key[?versionId=…],
// URL-encoded.
func parseCopySource(src string) (bucket, key string, e *s3Error) {
	p, _, _ := strings.Cut(src, "?")
	dec, err := percentDecode(p)
	if err != nil {
		return "", "", accessDenied("bad x-amz-copy-source")
	}
	if !strings.HasPrefix(dec, "/") {
		dec = "/" + dec
	}
	bucket, key, e = splitPath(dec)
	if e != nil {
		return "", "", e
	}
	if bucket == "" || key == "" {
		return "", "", accessDenied("bad x-amz-copy-source")
	}
	return bucket, key, nil
}
