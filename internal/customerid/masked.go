package customerid

import "github.com/bookonce/bookonce/internal/mask"

// Masked is the number as people may see it next to a key: country code
// and last two digits ("+49·········78"), the ops page's format.
func Masked(number string) string {
	return mask.Phones(number)
}
