package webhook

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"syscall"
	"time"

	"code.dny.dev/ssrf"
)

// ErrRefusedAddress is what every *AddressError is, for errors.Is.
var ErrRefusedAddress = errors.New("refused address")

// AddressError is a connection refused because of the address it would reach: loopback,
// private, link-local, shared (CGNAT), unique-local, multicast, unspecified or another of
// IANA's special-purpose addresses, and not allowed.
type AddressError struct {
	Addr   netip.Addr
	Reason string // what the address is, e.g. "a loopback address"
}

func (e *AddressError) Error() string {
	return fmt.Sprintf("refused to connect to %s: %s", e.Addr, e.Reason)
}

// Is reports whether target is ErrRefusedAddress.
func (e *AddressError) Is(target error) bool { return target == ErrRefusedAddress }

// guardian holds code.dny.dev/ssrf's tables, which follow IANA's special-purpose
// registries. Any port: an endpoint may listen on any.
var guardian = ssrf.New(ssrf.WithAnyPort())

// CheckAddr returns nil when addr may be connected to: it is in one of the allow prefixes,
// or ssrf's Guardian lets it through. Otherwise it returns an *AddressError.
func CheckAddr(addr netip.Addr, allow ...netip.Prefix) error {
	if allowed(addr, allow) {
		return nil
	}
	if err := guardian.SafeAddr(addr); err != nil {
		return refusal(addr)
	}
	return nil
}

// allowed reports whether addr, unmapped from IPv6 and without a zone, is in a prefix.
func allowed(addr netip.Addr, allow []netip.Prefix) bool {
	addr = addr.Unmap().WithZone("")
	for _, p := range allow {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// refusal says what addr is, in the words of the standard library where it has them and
// of ssrf's tables otherwise.
func refusal(addr netip.Addr) *AddressError {
	a := addr.WithZone("")
	reason := "a special-purpose address"
	switch {
	case a.Is4In6():
		reason = "an IPv4-mapped IPv6 address"
	case a.IsUnspecified():
		reason = "an unspecified address"
	case a.IsLoopback():
		reason = "a loopback address"
	case a.IsPrivate() && a.Is6():
		reason = "a unique-local address"
	case a.IsPrivate():
		reason = "a private address"
	case a.IsLinkLocalUnicast():
		reason = "a link-local address"
	case a.IsMulticast():
		reason = "a multicast address"
	case a.Is6() && !ssrf.IPv6GlobalUnicast.Contains(a):
		reason = "outside the global unicast range " + ssrf.IPv6GlobalUnicast.String()
	default:
		prefixes := ssrf.IPv4DeniedPrefixes
		if a.Is6() {
			prefixes = ssrf.IPv6DeniedPrefixes
		}
		for _, p := range prefixes {
			if p.Contains(a) {
				reason = "in the special-purpose range " + p.String()
				break
			}
		}
	}
	return &AddressError{Addr: addr, Reason: reason}
}

// control is a net.Dialer's Control: it runs once the address is resolved, just before
// connecting, so a name that resolves to another address at delivery than at
// registration (DNS rebinding) is checked at the address it reaches.
func control(allow []netip.Prefix) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return fmt.Errorf("refused to connect to %q: not an address and port", address)
		}
		if network != "tcp4" && network != "tcp6" {
			return fmt.Errorf("refused to connect over %s: only TCP", network)
		}
		if allowed(ap.Addr(), allow) {
			return nil
		}
		if err := guardian.Safe(network, address, c); err != nil {
			if errors.Is(err, ssrf.ErrProhibitedIP) {
				return refusal(ap.Addr())
			}
			return fmt.Errorf("refused to connect to %s: %w", address, err)
		}
		return nil
	}
}

// NewDialer returns a dialer that connects only to the addresses CheckAddr allows, with
// the allow prefixes (-webhook-allow-cidr, e.g. 127.0.0.0/8 for local development),
// checked at every connection. A refusal is an *AddressError in the dial's error chain.
func NewDialer(allow []netip.Prefix, timeout time.Duration) *net.Dialer {
	return &net.Dialer{
		Timeout: timeout,
		Control: control(append([]netip.Prefix(nil), allow...)),
	}
}
