package stack

import (
	"fmt"
	"net/http"
	"time"

	"github.com/bookonce/bookonce/activities"
	"github.com/bookonce/bookonce/internal/config"
	"github.com/bookonce/bookonce/internal/tracing"
	"github.com/bookonce/bookonce/shopcal"
	"github.com/bookonce/bookonce/tenants"
)

// ShopCalendars finds a resource's own calendar from the tenants'
// configuration as applied (reg, read at each call, so a calendar
// connected by `starter tenants apply` is written without a restart) and
// its password by the secret's name in SHOP_CALENDAR_SECRETS.
func ShopCalendars(cfg config.Config, reg *tenants.Registry) activities.ShopCalendars {
	hc := &http.Client{Timeout: 30 * time.Second, Transport: tracing.Transport(nil)}
	return func(tenant, resource string) (shopcal.Provider, bool, error) {
		if reg == nil {
			return nil, false, nil
		}
		p, ok := reg.Get(tenant)
		if !ok {
			return nil, false, nil
		}
		for _, r := range p.Resources {
			if r.Calendar != nil && resource == "" {
				return nil, true, nil
			}
			if r.ID != resource || r.Calendar == nil {
				continue
			}
			c := &shopcal.CalDAV{Calendar: r.Calendar.CalDAV, Username: r.Calendar.Username, HTTP: hc}
			if s := r.Calendar.Secret; s != "" {
				pw, ok := cfg.ShopCalendarSecrets[s]
				if !ok {
					return nil, false, fmt.Errorf("the calendar of %s/%s names secret %q, which SHOP_CALENDAR_SECRETS lacks", tenant, resource, s)
				}
				c.Password = pw
			}
			return c, true, nil
		}
		return nil, false, nil
	}
}
