package agent

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// operationPrefix starts every operation ID, so a log or a support
// request shows at once what it is.
const operationPrefix = "op_"

// Errors of an operation ID. Each is a tool error the agent can act on:
// ask for a new operation, never retry the same one.
var (
	ErrOperationForged  = errors.New("operation_id was not issued by this server (or was altered): call begin_operation and use the operation_id it returns")
	ErrOperationForeign = errors.New("operation_id belongs to another tenant or session: call begin_operation in this session")
	ErrOperationStale   = errors.New("operation_id was issued for an older tool contract (capabilities_version changed): list the tools again, re-plan, and call begin_operation")
	ErrOperationExpired = errors.New("operation_id has expired: call begin_operation for a new one")
	ErrOperationReused  = errors.New("operation_id was already used with other arguments; nothing was done: call begin_operation for a different booking")
)

// operation is what an operation ID carries, signed.
type operation struct {
	Tenant  string `json:"t"`
	Scope   string `json:"s"` // the MCP session, "" when stateless
	Version string `json:"v"` // capabilities_version
	Nonce   string `json:"n"`
	Issued  int64  `json:"i"` // Unix seconds
}

// Signer issues and verifies operation IDs with a key every gateway
// replica shares, so an ID issued by one replica is honoured by another
// (stateless behind a load balancer).
type Signer struct {
	Key []byte
	// TTL is how long an operation ID is honoured (the replay horizon).
	TTL time.Duration
}

// Issue returns a new operation ID for tenant and scope under version.
func (s Signer) Issue(tenant, scope, version string, now time.Time) (string, error) {
	nonce := make([]byte, 12)
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("operation nonce: %w", err)
	}
	body, err := json.Marshal(operation{Tenant: tenant, Scope: scope, Version: version, Nonce: hex.EncodeToString(nonce), Issued: now.Unix()})
	if err != nil {
		return "", fmt.Errorf("encode operation: %w", err)
	}
	enc := base64.RawURLEncoding.EncodeToString(body)
	return operationPrefix + enc + "." + s.mac(enc), nil
}

// Verify checks id for tenant and scope under version and returns the
// error the agent should see when it is not honoured.
func (s Signer) Verify(id, tenant, scope, version string, now time.Time) error {
	enc, mac, ok := strings.Cut(strings.TrimPrefix(id, operationPrefix), ".")
	if !ok || !strings.HasPrefix(id, operationPrefix) || !hmac.Equal([]byte(mac), []byte(s.mac(enc))) {
		return ErrOperationForged
	}
	raw, err := base64.RawURLEncoding.DecodeString(enc)
	var op operation
	if err == nil {
		err = json.Unmarshal(raw, &op)
	}
	if err != nil {
		return ErrOperationForged // signed by us but unreadable: treat as forged
	}
	switch {
	case op.Tenant != tenant || op.Scope != scope:
		return ErrOperationForeign
	case op.Version != version:
		return ErrOperationStale
	case s.TTL > 0 && now.Sub(time.Unix(op.Issued, 0)) > s.TTL:
		return ErrOperationExpired
	}
	return nil
}

func (s Signer) mac(enc string) string {
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte("bookonce agent operation\x00" + enc))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
