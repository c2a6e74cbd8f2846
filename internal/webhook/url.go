package webhook

import (
	"errors"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"code.dny.dev/ssrf"
)

// MaxURLLength is the longest endpoint URL, in characters.
const MaxURLLength = 2048

// URLError is a URL refused by CheckURL. Its message is a sentence for a 422's msg, in
// pydantic's words where pydantic has them, and never repeats the URL (it may hold a
// credential); a refused address's names the range that would allow it, and how.
type URLError struct {
	Msg string
	Err error // an *AddressError when the host is a refused IP address, else nil
}

func (e *URLError) Error() string { return e.Msg }
func (e *URLError) Unwrap() error { return e.Err }

func urlError(msg string) error { return &URLError{Msg: msg} }

// CheckURL checks the URL a platform registers for an endpoint: http or https (https only
// in production), at most MaxURLLength characters, no user information, a host, a port
// between 1 and 65535 if given, and a host that is not an IP address CheckAddr refuses
// with allow ("localhost" and names under it count as loopback addresses, which they
// always are). A host name is checked again at every connection by the dialer. Its errors
// are *URLError.
func CheckURL(raw string, production bool, allow ...netip.Prefix) error {
	if utf8.RuneCountInString(raw) > MaxURLLength {
		return urlError("URL should have at most " + strconv.Itoa(MaxURLLength) + " characters")
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return urlError("Input should be a valid URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return urlError("URL scheme should be 'http' or 'https'")
	case production && u.Scheme != "https":
		return urlError("URL scheme should be 'https' in production")
	case u.User != nil:
		return urlError("URL should not contain credentials")
	case u.Opaque != "" || u.Hostname() == "":
		return urlError("URL should have a host")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
			return urlError("URL port should be between 1 and 65535")
		}
	}
	return checkHost(u.Hostname(), strings.HasPrefix(u.Host, "["), allow)
}

// checkHost refuses an IP-literal host CheckAddr refuses, and a host that would be read as
// an IPv4 address in another spelling ("127.1", "2130706433", "0x7f.0.0.1"): a URL parser
// reads a host whose last label is a number as an IPv4 address (WHATWG URL), and so may a
// resolver.
func checkHost(host string, bracketed bool, allow []netip.Prefix) error {
	if bracketed {
		addr, err := netip.ParseAddr(host)
		if err != nil || !addr.Is6() {
			return urlError("URL host should be a valid IPv6 address")
		}
		if addr.Zone() != "" {
			return urlError("URL host should not have an IPv6 zone")
		}
		return checkHostAddr(addr, allow)
	}
	if addr, err := netip.ParseAddr(host); err == nil && addr.Is4() {
		return checkHostAddr(addr, allow)
	}
	labels := strings.Split(strings.TrimSuffix(host, "."), ".")
	if numeric(labels[len(labels)-1]) {
		return urlError("URL host should be a valid IPv4 address")
	}
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		// Allowed when either of the addresses it names is.
		if err := checkHostAddr(netip.AddrFrom4([4]byte{127, 0, 0, 1}), allow); err != nil {
			if checkHostAddr(netip.IPv6Loopback(), allow) != nil {
				return err
			}
		}
	}
	return nil
}

// numeric reports whether a label is a number as the WHATWG URL parser reads one: decimal
// digits, or 0x and hexadecimal digits.
func numeric(label string) bool {
	digits := "0123456789"
	if l := strings.ToLower(label); strings.HasPrefix(l, "0x") {
		label, digits = l[2:], "0123456789abcdef"
	} else if label == "" {
		return false
	}
	for _, c := range label {
		if !strings.ContainsRune(digits, c) {
			return false
		}
	}
	return true
}

// checkHostAddr refuses addr as CheckAddr does, in a message that says how to allow it.
func checkHostAddr(addr netip.Addr, allow []netip.Prefix) error {
	err := CheckAddr(addr, allow...)
	var refused *AddressError
	if errors.As(err, &refused) {
		return &URLError{Msg: "URL host should not be " + refused.Reason + allowHint(addr), Err: refused}
	}
	return err
}

// allowHint returns the end of a refused address's message: the range that would allow
// it, and where paymentsd takes one (serve and webhook add alike; a program that embeds
// the library passes it as Options.WebhookAllow).
func allowHint(addr netip.Addr) string {
	return " (for local development, allow " + rangeOf(addr).String() +
		" with -webhook-allow-cidr or $PAYMENTS_WEBHOOK_ALLOW_CIDR)"
}

// ipv6Ranges are the ranges of the IPv6 addresses outside the global unicast range that
// CheckAddr names: ssrf's tables list only the special-purpose ranges inside it.
var ipv6Ranges = []netip.Prefix{
	netip.MustParsePrefix("::1/128"),   // loopback
	netip.MustParsePrefix("::/128"),    // unspecified
	netip.MustParsePrefix("fc00::/7"),  // unique-local
	netip.MustParsePrefix("fe80::/10"), // link-local
	netip.MustParsePrefix("ff00::/8"),  // multicast
}

// rangeOf returns the special-purpose range addr is in (127.0.0.0/8, 10.0.0.0/8,
// fc00::/7, …), as an allow-list takes it: an IPv4-mapped address by its IPv4 range, an
// address in no listed range alone.
func rangeOf(addr netip.Addr) netip.Prefix {
	a := addr.Unmap().WithZone("")
	ranges := slices.Concat(ipv6Ranges, ssrf.IPv6DeniedPrefixes)
	if a.Is4() {
		ranges = ssrf.IPv4DeniedPrefixes
	}
	for _, p := range ranges {
		if p.Contains(a) {
			return p
		}
	}
	return netip.PrefixFrom(a, a.BitLen())
}
