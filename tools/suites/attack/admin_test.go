package attack

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/edgequeue/waitingroom/tools/devstack"
	"github.com/edgequeue/waitingroom/tools/fastlyhost"
)

func TestAdminPasswordCannotBeGuessedAtSpeed(t *testing.T) {
	e := start(t, shop(oneSeat), nil)
	const allowed = 10 // failed logins per client address in a minute
	guesser := clientIP(0, 0, 2)
	refused := 0
	for i := 1; i <= allowed+5 && refused == 0; i++ {
		a := e.adminAs(guesser, http.MethodGet, "", nil, fmt.Sprintf("guess-%d", i))
		switch a.status {
		case http.StatusTooManyRequests:
			refused = i
		case http.StatusUnauthorized:
		default:
			t.Fatalf("wrong password %d: %s, want 401 or 429", i, a)
		}
	}
	if refused == 0 {
		t.Fatalf("%d wrong passwords from one address in a minute were all answered; want 429 after %d", allowed+5, allowed)
	}
	if refused <= allowed {
		t.Fatalf("wrong password %d was refused with 429; the first %d must be answered 401", refused, allowed)
	}
	if a := e.adminAs(clientIP(0, 0, 3), http.MethodGet, "", nil, adminPassword); a.status != http.StatusOK {
		t.Fatalf("the right password from another address while the guesser is limited: %s, want the panel", a)
	}
}

func TestAShortAdminPasswordDisablesThePanel(t *testing.T) {
	const short = "fifteen-chars!!" // one short of the 16 required
	e := start(t, shop(oneSeat), func(m *fastlyhost.Manifest) {
		m.SecretStores[devstack.SecretStore]["admin_password"] = []byte(short)
	})
	a := e.adminAs("", http.MethodGet, "", nil, short)
	if a.status == http.StatusOK || strings.Contains(a.body, "csrf") || !strings.Contains(a.body, "16") {
		t.Fatalf("the panel with a %d-character password: %s; want it disabled, with a message naming the 16 characters required", len(short), a)
	}
}
