package workflows

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/bookonce/bookonce/internal/customerid"
	"github.com/bookonce/bookonce/internal/mask"
)

// Typed search attributes upserted by the sagas, so a person can filter in
// the Web UI, e.g. CustomerKey = "<key>" AND BookingStatus = "NeedsReview"
// (`starter find --customer +49…` computes the key). Search attributes are
// not encrypted by the payload codec, so they never carry a phone number:
// CustomerKey is its keyed hash (package customerid), CustomerMasked what
// a person may see of it. CustomerPhone is what runs recorded before
// VersionCustomerKey wrote; it stays registered so they keep working.
var (
	CustomerKeyKey    = temporal.NewSearchAttributeKeyKeyword("CustomerKey")
	CustomerMaskedKey = temporal.NewSearchAttributeKeyKeyword("CustomerMasked")
	CustomerPhoneKey  = temporal.NewSearchAttributeKeyKeyword("CustomerPhone")
	ChannelKey        = temporal.NewSearchAttributeKeyKeyword("Channel")
	BookingStatusKey  = temporal.NewSearchAttributeKeyKeyword("BookingStatus")
	ServiceKey        = temporal.NewSearchAttributeKeyKeyword("Service")
	SlotStartKey      = temporal.NewSearchAttributeKeyTime("SlotStart")
)

// VersionCustomerKey: search attributes name the customer by CustomerKey
// and CustomerMasked instead of CustomerPhone. Runs recorded before keep
// writing CustomerPhone where they did.
const VersionCustomerKey = "customer-key-attributes"

// CustomerAttributes name the customer in the search attributes a workflow
// starts a child with: the key (when the run knows it) and the masked
// number; the phone number in runs recorded before VersionCustomerKey.
// v answers VersionCustomerKey (the run's baseline, if any).
func CustomerAttributes(ctx workflow.Context, v Versions, number string, key customerid.Key) []temporal.SearchAttributeUpdate {
	if v.GetVersion(ctx, VersionCustomerKey, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return []temporal.SearchAttributeUpdate{CustomerPhoneKey.ValueSet(number)}
	}
	return KeyedAttributes(number, key)
}

// CustomerUpserts are CustomerAttributes for an upsert: they also remove
// a CustomerPhone an earlier run of the same workflow wrote.
func CustomerUpserts(ctx workflow.Context, v Versions, number string, key customerid.Key) []temporal.SearchAttributeUpdate {
	u := CustomerAttributes(ctx, v, number, key)
	if v.GetVersion(ctx, VersionCustomerKey, workflow.DefaultVersion, 1) == workflow.DefaultVersion {
		return u
	}
	return append(u, CustomerPhoneKey.ValueUnset())
}

// KeyedAttributes are the key (if known) and the masked number.
func KeyedAttributes(number string, key customerid.Key) []temporal.SearchAttributeUpdate {
	u := []temporal.SearchAttributeUpdate{CustomerMaskedKey.ValueSet(mask.Phones(number))}
	if key != "" {
		u = append(u, CustomerKeyKey.ValueSet(string(key)))
	}
	return u
}

// searchAttributes lists name and type in a fixed order.
var searchAttributes = []struct {
	name string
	typ  enumspb.IndexedValueType
}{
	{CustomerPhoneKey.GetName(), enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	{CustomerKeyKey.GetName(), enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	{CustomerMaskedKey.GetName(), enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	{ChannelKey.GetName(), enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	{BookingStatusKey.GetName(), enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	{ServiceKey.GetName(), enumspb.INDEXED_VALUE_TYPE_KEYWORD},
	{SlotStartKey.GetName(), enumspb.INDEXED_VALUE_TYPE_DATETIME},
}

// EnsureSearchAttributes registers the custom search attributes that are
// missing in namespace. Safe to call on every start, on any cluster.
func EnsureSearchAttributes(ctx context.Context, c client.Client, namespace string) error {
	list, err := c.OperatorService().ListSearchAttributes(ctx, &operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("list search attributes: %w", err)
	}
	missing := map[string]enumspb.IndexedValueType{}
	for _, sa := range searchAttributes {
		existing, ok := list.GetCustomAttributes()[sa.name]
		switch {
		case !ok:
			missing[sa.name] = sa.typ
		case existing != sa.typ:
			return fmt.Errorf("search attribute %s exists with type %s, bookonce needs %s", sa.name, existing, sa.typ)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	_, err = c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace: namespace, SearchAttributes: missing,
	})
	if err != nil {
		return fmt.Errorf("add search attributes: %w", err)
	}
	return nil
}
