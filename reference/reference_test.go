package reference_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/reference"
)

func TestTenantOfAndOwned(t *testing.T) {
	for _, c := range []struct {
		id     string
		tenant string
		ok     bool
	}{
		{"appointment:demo:abc", "demo", true},
		{"appointment:demo:abc#move-2", "demo", true},
		{"booking:appointment:demo:abc", "demo", true},
		{"payment:appointment:demo:abc", "demo", true},
		{"payment:booking:appointment:demo:abc", "demo", true},
		{"customer:shop-2:k_1", "shop-2", true},
		{"appointment:demo:", "", false},
		{"appointment::abc", "", false},
		{"appointment:demo", "", false},
		{"desk-bay-1", "", false},
		{"", "", false},
		{"reconciler", "", false},
	} {
		got, ok := reference.TenantOf(c.id)
		require.Equal(t, c.ok, ok, c.id)
		if c.ok {
			require.Equal(t, c.tenant, got, c.id)
		}
		require.Equal(t, c.ok && c.tenant == "demo", reference.Owned("demo", c.id), c.id)
	}
}

func TestCheckStored(t *testing.T) {
	for _, c := range []struct {
		ref string
		ok  bool
	}{
		{"appointment:demo:abc", true},
		{"appointment:demo:abc#move-1", true},
		{"desk-anything at all", true},
		{"appointment:other:abc", false},
		{"appointment:other:abc#move-1", false},
		{"booking:appointment:other:abc", false},
		{"customer:other:k", false},
		{"appointment:", false},
		{"appointment:demo:", false},
	} {
		err := reference.CheckStored("demo", c.ref)
		if c.ok {
			require.NoError(t, err, c.ref)
		} else {
			require.Error(t, err, c.ref)
		}
	}
}

func TestIsAppointmentOf(t *testing.T) {
	require.True(t, reference.IsAppointmentOf("demo", "appointment:demo:x"))
	require.False(t, reference.IsAppointmentOf("demo", "appointment:demo:x#move-1"))
	require.False(t, reference.IsAppointmentOf("demo", "booking:appointment:demo:x"))
	require.False(t, reference.IsAppointmentOf("demo", "appointment:demo2:x"))
	require.False(t, reference.IsAppointmentOf("dem", "appointment:demo:x"))
	require.Equal(t, "appointment:demo:x", reference.SagaOf("appointment:demo:x#move-3"))
}
