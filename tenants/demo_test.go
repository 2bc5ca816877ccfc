package tenants_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bookonce/bookonce/deploy"
	"github.com/bookonce/bookonce/intent"
	"github.com/bookonce/bookonce/tenants"
)

// The demo file describes exactly the demo tenant the conversation knew
// before tenants were configurable: the same catalogue, to the synonym.
func TestDemoFileIsTodaysDemoTenant(t *testing.T) {
	f, err := tenants.Parse("tenants.demo.yaml", deploy.DemoTenants)
	require.NoError(t, err)
	require.Len(t, f.Tenants, 1)
	p := tenants.NewProfileForTest(t, f.Tenants[0])
	require.Equal(t, intent.DemoCatalogue(), p.Catalogue())
	require.Equal(t, []string{"+4930123456"}, p.Numbers)
	require.Equal(t, []string{tenants.TokenDigest("bkapi_DEVELOPMENTTOKENDEMOSHOP22JYV77ZI")}, p.TokenHashes)
	for _, s := range []string{"tire-change", "inspection", "oil-change"} {
		d, ok := p.Deposit(s)
		require.True(t, ok)
		require.Equal(t, tenants.Money{Amount: 2000, Currency: "eur"}, d)
	}
	require.Equal(t, "Europe/Berlin", p.Location.String())
}

// The example of docs/tenants.md is a valid file.
func TestDocsExampleParses(t *testing.T) {
	doc, err := os.ReadFile("../docs/tenants.md")
	require.NoError(t, err)
	_, rest, ok := strings.Cut(string(doc), "```yaml\n")
	require.True(t, ok)
	example, _, ok := strings.Cut(rest, "```")
	require.True(t, ok)
	f, err := tenants.Parse("docs/tenants.md", []byte(example))
	require.NoError(t, err)
	require.Equal(t, []string{tenants.TokenDigest("bkapi_NORDGARAGEEXAMPLETOKEN2222JE2AIBI")}, f.Tenants[0].TokenHashes)
}
