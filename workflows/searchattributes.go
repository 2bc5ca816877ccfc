package workflows

import (
	"context"
	"fmt"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"
)

// Typed search attributes upserted by the sagas, so a person can filter in
// the Web UI, e.g. CustomerPhone = "+4915112345678" AND BookingStatus = "NeedsReview".
var (
	CustomerPhoneKey = temporal.NewSearchAttributeKeyKeyword("CustomerPhone")
	ChannelKey       = temporal.NewSearchAttributeKeyKeyword("Channel")
	BookingStatusKey = temporal.NewSearchAttributeKeyKeyword("BookingStatus")
	ServiceKey       = temporal.NewSearchAttributeKeyKeyword("Service")
	SlotStartKey     = temporal.NewSearchAttributeKeyTime("SlotStart")
)

// searchAttributes lists name and type in a fixed order.
var searchAttributes = []struct {
	name string
	typ  enumspb.IndexedValueType
}{
	{CustomerPhoneKey.GetName(), enumspb.INDEXED_VALUE_TYPE_KEYWORD},
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
