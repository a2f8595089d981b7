package s3proxy

import (
	"encoding/xml"
	"fmt"
	"net/http"
)

// s3Error is an error answered to the client the way S3 answers it: an HTTP
// status and an XML <Error> document with a code.
type s3Error struct {
	Status  int
	Code    string
	Message string
}

func (e *s3Error) Error() string { return e.Code + ": " + e.Message }

func errf(status int, code, format string, args ...any) *s3Error {
	return &s3Error{Status: status, Code: code, Message: fmt.Sprintf(format, args...)}
}

// The errors S3 gives for the same conditions.
func accessDenied(format string, args ...any) *s3Error {
	return errf(http.StatusForbidden, "AccessDenied", format, args...)
}

func signatureMismatch() *s3Error {
	return errf(http.StatusForbidden, "SignatureDoesNotMatch",
		"The request signature we calculated does not match the signature you provided. Check your key and signing method.")
}

func invalidAccessKey() *s3Error {
	return errf(http.StatusForbidden, "InvalidAccessKeyId",
		"The AWS Access Key Id you provided does not exist in our records.")
}

func badRequest(code, format string, args ...any) *s3Error {
	return errf(http.StatusBadRequest, code, format, args...)
}

type errorDoc struct {
	XMLName   xml.Name `xml:"Error"`
	Code      string   `xml:"Code"`
	Message   string   `xml:"Message"`
	Resource  string   `xml:"Resource,omitempty"`
	RequestID string   `xml:"RequestId"`
}

// writeError answers e (no body for HEAD, as S3 does).
func writeError(w http.ResponseWriter, r *http.Request, e *s3Error, requestID string) {
	h := w.Header()
	h.Set("Content-Type", "application/xml")
	h.Set("X-Amz-Request-Id", requestID)
	if r.Method == http.MethodHead {
		w.WriteHeader(e.Status)
		return
	}
	body, err := xml.Marshal(errorDoc{Code: e.Code, Message: e.Message, Resource: r.URL.Path, RequestID: requestID})
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.WriteHeader(e.Status)
	w.Write([]byte(xml.Header))
	w.Write(body)
}
