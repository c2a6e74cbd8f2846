package webhook_test

import (
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/platform-payments/payments/internal/webhook"
)

var loopbackV4 = []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}

// The dialer's Control and CheckAddr, called with addresses they refuse: nothing is dialed.
func TestAddressRefusals(t *testing.T) {
	control := webhook.NewDialer(nil, time.Second).Control
	allowAll := webhook.NewDialer([]netip.Prefix{
		netip.MustParsePrefix("0.0.0.0/0"), netip.MustParsePrefix("::/0"),
	}, time.Second).Control
	refused := map[string]string{
		"10.0.0.1":         "a private address",
		"172.16.5.4":       "a private address",
		"192.168.1.1":      "a private address",
		"169.254.169.254":  "a link-local address",
		"100.64.0.1":       "in the special-purpose range 100.64.0.0/10",
		"127.0.0.1":        "a loopback address",
		"::1":              "a loopback address",
		"fc00::1":          "a unique-local address",
		"fd12:3456::1":     "a unique-local address",
		"fe80::1":          "a link-local address",
		"224.0.0.1":        "a multicast address",
		"ff02::1":          "a multicast address",
		"0.0.0.0":          "an unspecified address",
		"::":               "an unspecified address",
		"::ffff:127.0.0.1": "an IPv4-mapped IPv6 address",
		"::ffff:8.8.8.8":   "an IPv4-mapped IPv6 address",
		"192.0.2.10":       "in the special-purpose range 192.0.2.0/24",
		"2001:db8::1":      "in the special-purpose range 2001:db8::/32",
		"64:ff9b::a00:1":   "outside the global unicast range 2000::/3",
		"255.255.255.255":  "in the special-purpose range 240.0.0.0/4",
	}
	for ip, reason := range refused {
		addr := netip.MustParseAddr(ip)
		network := "tcp4"
		if addr.Is6() {
			network = "tcp6"
		}
		address := netip.AddrPortFrom(addr, 443).String()
		err := control(network, address, nil)
		var e *webhook.AddressError
		if !errors.As(err, &e) || e.Reason != reason || e.Addr != addr {
			t.Errorf("Control(%s) = %v, want %q", address, err, reason)
		}
		if want := "refused to connect to " + ip + ": " + reason; err != nil && err.Error() != want {
			t.Errorf("Control(%s) = %q, want %q", address, err, want)
		}
		if err := webhook.CheckAddr(addr); !errors.Is(err, webhook.ErrRefusedAddress) {
			t.Errorf("CheckAddr(%s) = %v", ip, err)
		}
		if err := allowAll(network, address, nil); err != nil {
			t.Errorf("Control(%s) with every address allowed: %v", address, err)
		}
		if err := webhook.CheckAddr(addr, netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen())); err != nil {
			t.Errorf("CheckAddr(%s) allowed: %v", ip, err)
		}
	}
	for _, ip := range []string{"93.184.215.14", "8.8.8.8", "2606:4700::1111", "1.1.1.1"} {
		addr := netip.MustParseAddr(ip)
		if err := webhook.CheckAddr(addr); err != nil {
			t.Errorf("CheckAddr(%s) = %v, want nil", ip, err)
		}
	}
	// An allowed IPv4 prefix covers the IPv4-mapped form; only TCP is dialed.
	loopback := webhook.NewDialer(loopbackV4, time.Second).Control
	if err := loopback("tcp6", "[::ffff:127.0.0.1]:80", nil); err != nil {
		t.Errorf("Control([::ffff:127.0.0.1]) with 127.0.0.0/8 allowed: %v", err)
	}
	if err := loopback("udp4", "127.0.0.1:53", nil); err == nil {
		t.Error("Control over udp4 passed")
	}
	if err := loopback("tcp4", "localhost:80", nil); err == nil {
		t.Error("Control of a name passed")
	}
}
