package payloadcrypt_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	"google.golang.org/protobuf/proto"

	"github.com/bookonce/bookonce/internal/payloadcrypt"
)

// TestTenantKeys: a tenant's codec names its derived key, any codec over
// the same master keys decodes it, a payload relabelled to another
// tenant's key does not open, and a master key ID with ":" is refused.
func TestTenantKeys(t *testing.T) {
	k := key(t, "k1")
	c := codec(t, k)
	orig := plain(t, phone)
	enc, err := c.ForTenant("demo").Encode([]*commonpb.Payload{orig})
	require.NoError(t, err)
	require.Equal(t, payloadcrypt.TenantKeyID("k1", "demo"), string(enc[0].GetMetadata()[payloadcrypt.MetadataKeyID]))
	tenant, ok := payloadcrypt.TenantOfKeyID("k1:demo")
	require.True(t, ok)
	require.Equal(t, "demo", tenant)
	_, ok = payloadcrypt.TenantOfKeyID("k1")
	require.False(t, ok)

	other := codec(t, k) // another process with the same keys
	dec, err := other.Decode(enc)
	require.NoError(t, err)
	require.Equal(t, orig.GetData(), dec[0].GetData())

	relabelled := proto.Clone(enc[0]).(*commonpb.Payload)
	relabelled.Metadata[payloadcrypt.MetadataKeyID] = []byte(payloadcrypt.TenantKeyID("k1", "london"))
	_, err = c.Decode([]*commonpb.Payload{relabelled})
	require.Error(t, err)
	relabelled.Metadata[payloadcrypt.MetadataKeyID] = []byte("k2:demo")
	_, err = c.Decode([]*commonpb.Payload{relabelled})
	require.ErrorIs(t, err, payloadcrypt.ErrUnknownKey)

	_, err = payloadcrypt.New([]payloadcrypt.Key{key(t, "k1:demo")})
	require.Error(t, err)
}

// TestSerializationContextPicksTheTenant: the SDK's serialization context
// names the workflow; a tenant's workflow (wrapped or not, its activities
// too) gets the tenant's key, one without a tenant the master key.
func TestSerializationContextPicksTheTenant(t *testing.T) {
	c := codec(t, key(t, "k1"))
	tests := []struct {
		sc   converter.SerializationContext
		want string
	}{
		{converter.WorkflowSerializationContext{WorkflowID: "appointment:demo:pi_1"}, "k1:demo"},
		{converter.WorkflowSerializationContext{WorkflowID: "payment:appointment:london:pi_1"}, "k1:london"},
		{converter.ActivitySerializationContext{WorkflowID: "customer:demo:abc"}, "k1:demo"},
		{converter.WorkflowSerializationContext{WorkflowID: "reconciler-2026-12-04T20:00:00Z"}, "k1"},
		{converter.ActivitySerializationContext{}, "k1"},
	}
	for _, tt := range tests {
		enc, err := c.WithSerializationContext(tt.sc).Encode([]*commonpb.Payload{plain(t, phone)})
		require.NoError(t, err)
		require.Equal(t, tt.want, string(enc[0].GetMetadata()[payloadcrypt.MetadataKeyID]), "%+v", tt.sc)
	}
}

// TestTenantViewDecodesOnlyTheTenants: the codec server's view for one
// tenant decodes its payloads and returns every other one unchanged.
func TestTenantViewDecodesOnlyTheTenants(t *testing.T) {
	c := codec(t, key(t, "k1"))
	orig := plain(t, phone)
	var in []*commonpb.Payload
	for _, pc := range []converter.PayloadCodec{c.ForTenant("demo"), c.ForTenant("london"), c} {
		enc, err := pc.Encode([]*commonpb.Payload{orig})
		require.NoError(t, err)
		in = append(in, enc[0])
	}
	in = append(in, orig) // in clear: passes through
	out, err := c.TenantView("demo").Decode(in)
	require.NoError(t, err)
	require.Equal(t, orig.GetData(), out[0].GetData())
	require.True(t, proto.Equal(in[1], out[1]), "another tenant's stays encrypted")
	require.True(t, proto.Equal(in[2], out[2]), "the master key's stays encrypted")
	require.True(t, proto.Equal(orig, out[3]))
}
