package platform

import (
	"fmt"
	"time"

	"github.com/fastly/compute-sdk-go/erl"
)

// limits is Fastly's Edge Rate Limiting: counters and penalty boxes shared
// by the POP's instances.
type limits struct{}

func (limits) Count(counter, client string) (int, error) {
	rc := erl.OpenRateCounter(counter)
	if err := rc.Increment(client, 1); err != nil {
		return 0, fmt.Errorf("rate counter %s: %w", counter, err)
	}
	n, err := rc.LookupCount(client, erl.CounterDuration60s)
	if err != nil {
		return 0, fmt.Errorf("rate counter %s: %w", counter, err)
	}
	return int(n), nil
}

func (limits) Penalize(box, client string, d time.Duration) error {
	// The platform counts penalties in whole minutes, one to sixty.
	d = min(max(d.Truncate(time.Minute), time.Minute), time.Hour)
	if err := erl.OpenPenaltyBox(box).Add(client, d); err != nil {
		return fmt.Errorf("penalty box %s: %w", box, err)
	}
	return nil
}

func (limits) Penalized(box, client string) (bool, error) {
	in, err := erl.OpenPenaltyBox(box).Has(client)
	if err != nil {
		return false, fmt.Errorf("penalty box %s: %w", box, err)
	}
	return in, nil
}
