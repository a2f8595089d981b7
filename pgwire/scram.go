package pgwire

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/lakesoul-go/lakesoul/sqlerr"
)

// SCRAM-SHA-256 (RFC 5802 with the SHA-256 profile of RFC 7677), server side,
// as PostgreSQL speaks it: the user name inside the SCRAM messages is ignored
// (the startup packet's user counts), and channel binding is not offered.

const (
	scramMechanism  = "SCRAM-SHA-256"
	scramPrefix     = "SCRAM-SHA-256$"
	scramIterations = 4096 // PostgreSQL's default scram_iterations
	scramSaltLen    = 16   // PostgreSQL's SCRAM_DEFAULT_SALT_LEN
	scramNonceLen   = 18   // raw bytes of the server nonce, as PostgreSQL
	scramKeyLen     = sha256.Size
)

// errSCRAMAuthFailed is the outcome of a wrong proof, an unknown role or an
// unusable verifier; the client is told only that authentication failed.
var errSCRAMAuthFailed = errors.New("pgwire: SCRAM authentication failed")

// scramVerifier is a stored SCRAM-SHA-256 secret: what pg_authid.rolpassword
// holds, never the password itself.
type scramVerifier struct {
	iterations int
	salt       []byte
	storedKey  []byte // H(ClientKey)
	serverKey  []byte // HMAC(SaltedPassword, "Server Key")
}

// NewSCRAMVerifier returns the SCRAM-SHA-256 verifier of password with a
// random 16-byte salt and 4096 iterations, in PostgreSQL's pg_authid format
// "SCRAM-SHA-256$<iterations>:<base64 salt>$<base64 StoredKey>:<base64 ServerKey>".
// The password is normalised with SASLprep first, as PostgreSQL and libpq do.
func NewSCRAMVerifier(password string) (string, error) {
	salt := make([]byte, scramSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("pgwire: SCRAM salt: %w", err)
	}
	v, err := deriveSCRAMVerifier(saslPrep(password), salt, scramIterations)
	if err != nil {
		return "", err
	}
	return v.String(), nil
}

// deriveSCRAMVerifier computes the verifier of an already normalised password.
func deriveSCRAMVerifier(password string, salt []byte, iterations int) (*scramVerifier, error) {
	salted, err := pbkdf2.Key(sha256.New, password, salt, iterations, scramKeyLen)
	if err != nil {
		return nil, fmt.Errorf("pgwire: SCRAM salted password: %w", err)
	}
	clientKey := hmacSHA256(salted, []byte("Client Key"))
	storedKey := sha256.Sum256(clientKey)
	return &scramVerifier{
		iterations: iterations,
		salt:       salt,
		storedKey:  storedKey[:],
		serverKey:  hmacSHA256(salted, []byte("Server Key")),
	}, nil
}

// String renders v in pg_authid format.
func (v *scramVerifier) String() string {
	b64 := base64.StdEncoding.EncodeToString
	return fmt.Sprintf("%s%d:%s$%s:%s", scramPrefix, v.iterations, b64(v.salt), b64(v.storedKey), b64(v.serverKey))
}

// parseSCRAMVerifier parses a verifier in pg_authid format.
func parseSCRAMVerifier(s string) (*scramVerifier, error) {
	rest, ok := strings.CutPrefix(s, scramPrefix)
	if !ok {
		return nil, errors.New("pgwire: verifier is not SCRAM-SHA-256")
	}
	params, keys, ok := strings.Cut(rest, "$")
	if !ok {
		return nil, errors.New("pgwire: malformed SCRAM verifier")
	}
	iterStr, saltStr, ok1 := strings.Cut(params, ":")
	storedStr, serverStr, ok2 := strings.Cut(keys, ":")
	if !ok1 || !ok2 {
		return nil, errors.New("pgwire: malformed SCRAM verifier")
	}
	iter, err := strconv.Atoi(iterStr)
	if err != nil || iter < 1 {
		return nil, fmt.Errorf("pgwire: SCRAM verifier iteration count %q", iterStr)
	}
	v := &scramVerifier{iterations: iter}
	if v.salt, err = base64.StdEncoding.DecodeString(saltStr); err != nil || len(v.salt) == 0 {
		return nil, errors.New("pgwire: malformed SCRAM verifier salt")
	}
	if v.storedKey, err = base64.StdEncoding.DecodeString(storedStr); err != nil || len(v.storedKey) != scramKeyLen {
		return nil, errors.New("pgwire: malformed SCRAM verifier StoredKey")
	}
	if v.serverKey, err = base64.StdEncoding.DecodeString(serverStr); err != nil || len(v.serverKey) != scramKeyLen {
		return nil, errors.New("pgwire: malformed SCRAM verifier ServerKey")
	}
	return v, nil
}

// matchesPassword reports whether password (as the client sent it, before
// SASLprep) is the one v was made from: SaltedPassword with v's salt and
// iterations, then ClientKey and StoredKey, compared in constant time. This
// is how PostgreSQL checks a cleartext password against a SCRAM secret.
func (v *scramVerifier) matchesPassword(password string) bool {
	d, err := deriveSCRAMVerifier(saslPrep(password), v.salt, v.iterations)
	if err != nil {
		return false
	}
	return subtle.ConstantTimeCompare(d.storedKey, v.storedKey) == 1
}

// mockSCRAMVerifier is shown to roles that cannot log in, so that the
// exchange looks the same as for a real role: the salt is derived from the
// role name and a per-server secret, hence stable across attempts.
func mockSCRAMVerifier(key []byte, role string) *scramVerifier {
	salt := hmacSHA256(key, []byte("scram-mock-salt:"+role))[:scramSaltLen]
	return &scramVerifier{
		iterations: scramIterations,
		salt:       salt,
		storedKey:  make([]byte, scramKeyLen),
		serverKey:  make([]byte, scramKeyLen),
	}
}

// scramServer is one SCRAM-SHA-256 exchange, server side. Use clientFirst,
// then clientFinal, each at most once.
type scramServer struct {
	verifier *scramVerifier
	// mock makes the exchange fail at the proof whatever the client sends.
	mock bool
	// newNonce returns the server's part of the nonce; tests replace it.
	newNonce func() (string, error)

	gs2Header       string // e.g. "n,,"
	clientFirstBare string
	serverFirst     string
	nonce           string // client nonce + server nonce
	// clientKey is set once clientFinal accepted the proof.
	clientKey []byte
}

func newSCRAMServer(v *scramVerifier, mock bool) *scramServer {
	return &scramServer{verifier: v, mock: mock, newNonce: randomSCRAMNonce}
}

// randomSCRAMNonce returns scramNonceLen random bytes in base64, which only
// has printable characters other than ','.
func randomSCRAMNonce() (string, error) {
	b := make([]byte, scramNonceLen)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("pgwire: SCRAM nonce: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// malformedSCRAM builds the 08P01 error of a SCRAM message that breaks the grammar.
func malformedSCRAM(detail string) error {
	return &sqlerr.Error{Code: codeProtocolViolation, Message: "malformed SCRAM message", Detail: detail}
}

// clientFirst consumes client-first-message and returns server-first-message.
func (s *scramServer) clientFirst(msg []byte) ([]byte, error) {
	m := string(msg)
	// gs2-header = gs2-cbind-flag "," [authzid] ","
	switch {
	case strings.HasPrefix(m, "n,"), strings.HasPrefix(m, "y,"):
		// "y": the client could bind but believes we cannot; we indeed do not
		// offer SCRAM-SHA-256-PLUS, so this is no downgrade.
	case strings.HasPrefix(m, "p="):
		return nil, &sqlerr.Error{Code: codeProtocolViolation,
			Message: "channel binding is not supported",
			Detail:  "The client selected SCRAM-SHA-256 but sent channel binding data."}
	default:
		return nil, malformedSCRAM("Unexpected channel-binding flag.")
	}
	rest := m[2:]
	if strings.HasPrefix(rest, "a=") {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "client uses authorization identity, but it is not supported")
	}
	bare, ok := strings.CutPrefix(rest, ",")
	if !ok {
		return nil, malformedSCRAM("Comma expected after the channel-binding flag.")
	}
	s.gs2Header = m[:len(m)-len(bare)]
	s.clientFirstBare = bare

	attrs := strings.Split(bare, ",")
	if len(attrs) < 2 {
		return nil, malformedSCRAM("Attributes n and r expected.")
	}
	if strings.HasPrefix(attrs[0], "m=") {
		return nil, sqlerr.New(sqlerr.FeatureNotSupported, "SCRAM mandatory extensions are not supported")
	}
	if !strings.HasPrefix(attrs[0], "n=") {
		return nil, malformedSCRAM("Attribute n expected.")
	}
	clientNonce, ok := strings.CutPrefix(attrs[1], "r=")
	if !ok || clientNonce == "" || !validNonce(clientNonce) {
		return nil, malformedSCRAM("Attribute r with a printable nonce expected.")
	}
	serverNonce, err := s.newNonce()
	if err != nil {
		return nil, err
	}
	s.nonce = clientNonce + serverNonce
	s.serverFirst = fmt.Sprintf("r=%s,s=%s,i=%d", s.nonce,
		base64.StdEncoding.EncodeToString(s.verifier.salt), s.verifier.iterations)
	return []byte(s.serverFirst), nil
}

// validNonce reports whether n has only printable ASCII characters other than ','.
func validNonce(n string) bool {
	for i := 0; i < len(n); i++ {
		if c := n[i]; c < 0x21 || c > 0x7e || c == ',' {
			return false
		}
	}
	return true
}

// clientFinal consumes client-final-message and returns server-final-message.
// A proof that does not match the verifier yields errSCRAMAuthFailed.
func (s *scramServer) clientFinal(msg []byte) ([]byte, error) {
	m := string(msg)
	i := strings.LastIndex(m, ",p=")
	if i < 0 {
		return nil, malformedSCRAM("Attribute p expected.")
	}
	withoutProof, proofB64 := m[:i], m[i+len(",p="):]
	attrs := strings.Split(withoutProof, ",")
	if len(attrs) < 2 {
		return nil, malformedSCRAM("Attributes c and r expected.")
	}
	cb, ok := strings.CutPrefix(attrs[0], "c=")
	if !ok {
		return nil, malformedSCRAM("Attribute c expected.")
	}
	cbind, err := base64.StdEncoding.DecodeString(cb)
	if err != nil || string(cbind) != s.gs2Header {
		return nil, &sqlerr.Error{Code: codeProtocolViolation,
			Message: "SCRAM channel binding check failed"}
	}
	nonce, ok := strings.CutPrefix(attrs[1], "r=")
	if !ok || nonce != s.nonce {
		return nil, malformedSCRAM("Nonce does not match.")
	}
	proof, err := base64.StdEncoding.DecodeString(proofB64)
	if err != nil || len(proof) != scramKeyLen {
		return nil, malformedSCRAM("Malformed proof in client-final-message.")
	}

	authMessage := []byte(s.clientFirstBare + "," + s.serverFirst + "," + withoutProof)
	clientSignature := hmacSHA256(s.verifier.storedKey, authMessage)
	clientKey := make([]byte, scramKeyLen)
	for j := range clientKey {
		clientKey[j] = proof[j] ^ clientSignature[j]
	}
	storedKey := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(storedKey[:], s.verifier.storedKey) != 1 || s.mock {
		return nil, errSCRAMAuthFailed
	}
	s.clientKey = clientKey
	serverSignature := hmacSHA256(s.verifier.serverKey, authMessage)
	return []byte("v=" + base64.StdEncoding.EncodeToString(serverSignature)), nil
}

func hmacSHA256(key, msg []byte) []byte {
	h := hmac.New(sha256.New, key)
	h.Write(msg)
	return h.Sum(nil)
}

// PasswordCredential checks password (as the client sent it, before
// SASLprep) against verifier, a stored SCRAM-SHA-256 secret in pg_authid
// format, as PostgreSQL checks a cleartext password, and returns the SCRAM
// keys the password yields: the same Credential a SCRAM login proves, so a
// front door that receives passwords (Flight SQL's basic authentication)
// logs its users in to the catalog exactly as pgwire's SCRAM logins do. ok
// is false for a wrong or empty password and for an unusable verifier; the
// key derivation runs in every case but a malformed verifier.
func PasswordCredential(verifier, password string) (_ Credential, ok bool) {
	v, err := parseSCRAMVerifier(verifier)
	if err != nil {
		return Credential{}, false
	}
	salted, err := pbkdf2.Key(sha256.New, saslPrep(password), v.salt, v.iterations, scramKeyLen)
	if err != nil {
		return Credential{}, false
	}
	clientKey := hmacSHA256(salted, []byte("Client Key"))
	storedKey := sha256.Sum256(clientKey)
	if subtle.ConstantTimeCompare(storedKey[:], v.storedKey) != 1 || password == "" {
		return Credential{}, false
	}
	return Credential{SCRAMClientKey: clientKey, SCRAMServerKey: v.serverKey}, true
}

// MockSCRAMVerifier is a well-formed verifier no password matches, for
// checking a password of a role that has none at the cost of a real check.
func MockSCRAMVerifier() string {
	return mockSCRAMVerifier(make([]byte, scramKeyLen), "").String()
}
