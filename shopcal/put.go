package shopcal

import (
	"context"
	"errors"
	"fmt"
)

// maxRaces bounds how often Put and Remove read an event again that
// changed under them: staff editing the very event that often in the same
// second is a conflict for a person, not a loop.
const maxRaces = 3

// Put makes the calendar hold ev once: created when absent; when it is
// there (an earlier attempt whose answer was lost, or the booking moved),
// changed to ev if it says something else. An edit made meanwhile is read
// again. Repeating Put after any failure converges on the one event.
func Put(ctx context.Context, p Provider, ev Event) error {
	created, err := p.Create(ctx, ev)
	if err != nil || created {
		return err
	}
	for range maxRaces {
		cur, found, err := p.Get(ctx, ev.ID)
		if err != nil {
			return err
		}
		if !found { // deleted between the create and the read: create it again
			if created, err = p.Create(ctx, ev); err != nil || created {
				return err
			}
			continue
		}
		if cur.same(ev) && !cur.Cancelled {
			return nil
		}
		err = p.Update(ctx, ev, cur.Version)
		if !errors.Is(err, ErrChanged) && !errors.Is(err, ErrGone) {
			return err
		}
	}
	return fmt.Errorf("put event %s: %w %d times in a row", ev.ID, ErrChanged, maxRaces)
}

// Remove deletes the booking's event id: by the version it reads, so an
// event it no longer finds is removed already.
func Remove(ctx context.Context, p Provider, id string) error {
	for range maxRaces {
		cur, found, err := p.Get(ctx, id)
		if err != nil || !found || cur.Cancelled {
			return err
		}
		if err = p.Delete(ctx, id, cur.Version); !errors.Is(err, ErrChanged) {
			return err
		}
	}
	return fmt.Errorf("remove event %s: %w %d times in a row", id, ErrChanged, maxRaces)
}
