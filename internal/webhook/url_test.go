package webhook_test

import (
	"errors"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"github.com/platform-payments/payments/internal/webhook"
)

func TestCheckURL(t *testing.T) {
	long := "https://example.com/" + strings.Repeat("a", webhook.MaxURLLength-len("https://example.com/"))
	tests := []struct {
		name       string
		url        string
		production bool
		allow      []netip.Prefix
		msg        string // "" when accepted
	}{
		{name: "OK", url: "https://hooks.example.com/payments?x=1"},
		{name: "OK/http", url: "http://hooks.example.com:8080/in"},
		{name: "OK/production", url: "https://hooks.example.com/in", production: true},
		{name: "OK/public IPv4", url: "https://93.184.215.14/in"},
		{name: "OK/public IPv6", url: "https://[2606:4700::1111]:8443/in"},
		{name: "OK/2048", url: long},
		{name: "OK/scheme case", url: "HTTPS://hooks.example.com/"},
		{name: "OK/loopback allowed", url: "http://127.0.0.1:9000/hook", allow: loopbackV4},
		{name: "OK/localhost allowed", url: "http://localhost:9000/hook", allow: loopbackV4},
		{name: "OK/IPv6 loopback allowed", url: "http://[::1]:9000/", allow: []netip.Prefix{netip.MustParsePrefix("::1/128")}},
		{name: "OK/digits inside a name", url: "https://10.0.0.1.example.com/"},

		{name: "ErrLength", url: long + "a", msg: "URL should have at most 2048 characters"},
		{name: "ErrParse", url: "http://exa mple.com/", msg: "Input should be a valid URL"},
		{name: "ErrParse/control", url: "https://example.com/\x7f\n", msg: "Input should be a valid URL"},
		{name: "ErrParse/relative", url: "/hooks", msg: "Input should be a valid URL"},
		{name: "ErrParse/empty", url: "", msg: "Input should be a valid URL"},
		{name: "ErrScheme/ftp", url: "ftp://example.com/", msg: "URL scheme should be 'http' or 'https'"},
		{name: "ErrScheme/file", url: "file:///etc/passwd", msg: "URL scheme should be 'http' or 'https'"},
		{name: "ErrScheme/javascript", url: "javascript:alert(1)", msg: "URL scheme should be 'http' or 'https'"},
		{name: "ErrScheme/production", url: "http://hooks.example.com/", production: true, msg: "URL scheme should be 'https' in production"},
		{name: "ErrCredentials", url: "https://user:pass@example.com/", msg: "URL should not contain credentials"},
		{name: "ErrCredentials/user", url: "https://user@example.com/", msg: "URL should not contain credentials"},
		{name: "ErrCredentials/empty", url: "https://@example.com/", msg: "URL should not contain credentials"},
		{name: "ErrHost/opaque", url: "http:example.com", msg: "URL should have a host"},
		{name: "ErrHost/empty", url: "https:///path", msg: "URL should have a host"},
		{name: "ErrHost/port only", url: "https://:443/", msg: "URL should have a host"},
		{name: "ErrPort/zero", url: "https://example.com:0/", msg: "URL port should be between 1 and 65535"},
		{name: "ErrPort/large", url: "https://example.com:65536/", msg: "URL port should be between 1 and 65535"},
		{name: "ErrLoopback", url: "http://127.0.0.1:8080/", msg: "URL host should not be a loopback address" + hint("127.0.0.0/8")},
		{name: "ErrLoopback/IPv6", url: "http://[::1]:8080/", msg: "URL host should not be a loopback address" + hint("::1/128")},
		{name: "ErrLoopback/localhost", url: "http://localhost:8080/", msg: "URL host should not be a loopback address" + hint("127.0.0.0/8")},
		{name: "ErrLoopback/LOCALHOST.", url: "http://LOCALHOST.:8080/", msg: "URL host should not be a loopback address" + hint("127.0.0.0/8")},
		{name: "ErrLoopback/under localhost", url: "http://api.localhost/", msg: "URL host should not be a loopback address" + hint("127.0.0.0/8")},
		{name: "ErrLoopback/IPv6 not allowed by IPv4", url: "http://[::1]:8080/", allow: loopbackV4, msg: "URL host should not be a loopback address" + hint("::1/128")},
		{name: "ErrPrivate", url: "https://10.0.0.1/", msg: "URL host should not be a private address" + hint("10.0.0.0/8")},
		{name: "ErrLinkLocal/metadata", url: "http://169.254.169.254/latest/meta-data/", msg: "URL host should not be a link-local address" + hint("169.254.0.0/16")},
		{name: "ErrCGNAT", url: "https://100.64.0.1/", msg: "URL host should not be in the special-purpose range 100.64.0.0/10" + hint("100.64.0.0/10")},
		{name: "ErrUniqueLocal", url: "https://[fc00::1]/", msg: "URL host should not be a unique-local address" + hint("fc00::/7")},
		{name: "ErrMulticast", url: "https://224.0.0.1/", msg: "URL host should not be a multicast address" + hint("224.0.0.0/4")},
		{name: "ErrUnspecified", url: "http://0.0.0.0:8080/", msg: "URL host should not be an unspecified address" + hint("0.0.0.0/8")},
		{name: "ErrMapped", url: "http://[::ffff:127.0.0.1]/", msg: "URL host should not be an IPv4-mapped IPv6 address" + hint("127.0.0.0/8")},
		{name: "ErrZone", url: "http://[fe80::1%25eth0]/", msg: "URL host should not have an IPv6 zone"},
		{name: "ErrIPv4/short", url: "http://127.1/", msg: "URL host should be a valid IPv4 address"},
		{name: "ErrIPv4/decimal", url: "http://2130706433/", msg: "URL host should be a valid IPv4 address"},
		{name: "ErrIPv4/hex", url: "http://0x7f.0.0.1/", msg: "URL host should be a valid IPv4 address"},
		{name: "ErrIPv4/octal", url: "http://0177.0.0.1/", msg: "URL host should be a valid IPv4 address"},
		{name: "ErrIPv4/trailing dot", url: "http://10.0.0.1./", msg: "URL host should be a valid IPv4 address"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := webhook.CheckURL(tc.url, tc.production, tc.allow...)
			if tc.msg == "" {
				if err != nil {
					t.Fatalf("CheckURL(%q) = %v", tc.url, err)
				}
				return
			}
			var e *webhook.URLError
			if !errors.As(err, &e) || e.Msg != tc.msg {
				t.Fatalf("CheckURL(%q) = %v, want %q", tc.url, err, tc.msg)
			}
			if strings.HasPrefix(tc.msg, "URL host should not be ") != errors.Is(err, webhook.ErrRefusedAddress) {
				t.Fatalf("CheckURL(%q) = %v: errors.Is(ErrRefusedAddress) is %v", tc.url, err, errors.Is(err, webhook.ErrRefusedAddress))
			}
		})
	}
}

// hint is the end of the message of a refused address in range.
func hint(cidr string) string {
	return " (for local development, allow " + cidr + " with -webhook-allow-cidr or $PAYMENTS_WEBHOOK_ALLOW_CIDR)"
}

// A refused address's message says how to allow it, for local development: the range it
// is in, which then lets the URL through, and the flag and variable that take it.
func TestCheckURLSaysHowToAllow(t *testing.T) {
	const want = "URL host should not be a loopback address " +
		"(for local development, allow 127.0.0.0/8 with -webhook-allow-cidr or $PAYMENTS_WEBHOOK_ALLOW_CIDR)"
	if err := webhook.CheckURL("http://127.0.0.1:8090/hook", false); err == nil || err.Error() != want {
		t.Fatalf("CheckURL(loopback) = %v, want %q", err, want)
	}
	named := regexp.MustCompile(`\(for local development, allow (\S+) with -webhook-allow-cidr or \$PAYMENTS_WEBHOOK_ALLOW_CIDR\)$`)
	for _, raw := range []string{
		"http://127.0.0.1/", "http://localhost/", "http://[::1]/", "http://[::]/", "http://10.1.2.3/",
		"http://172.20.0.1/", "http://192.168.1.10/", "http://169.254.169.254/", "http://100.64.0.1/",
		"http://[fc00::1]/", "http://[fd12:3456::1]/", "http://[fe80::1]/", "http://[ff02::1]/",
		"http://224.0.0.1/", "http://0.0.0.0/", "http://[::ffff:10.0.0.1]/", "http://198.18.0.1/",
		"http://[2001:db8::1]/", "http://[64:ff9b::1]/", "http://[4000::1]/",
	} {
		err := webhook.CheckURL(raw, false)
		if !errors.Is(err, webhook.ErrRefusedAddress) {
			t.Errorf("CheckURL(%q) = %v, want a refused address", raw, err)
			continue
		}
		m := named.FindStringSubmatch(err.Error())
		if m == nil {
			t.Errorf("CheckURL(%q) = %q, which does not say how to allow it", raw, err)
			continue
		}
		allow, perr := netip.ParsePrefix(m[1])
		if perr != nil {
			t.Errorf("CheckURL(%q) names %q, not a range: %v", raw, m[1], perr)
			continue
		}
		if err := webhook.CheckURL(raw, false, allow); err != nil {
			t.Errorf("CheckURL(%q) with %v, the range its refusal named: %v", raw, allow, err)
		}
	}
}

// The messages never repeat the URL, which may carry a credential.
func TestCheckURLDoesNotEchoTheURL(t *testing.T) {
	for _, raw := range []string{"https://s3cr3t:hunter2@example.com/", "ftp://hunter2.example.com/", "http://hunter2.example.com/"} {
		err := webhook.CheckURL(raw, true)
		if err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("CheckURL(%q) = %v", raw, err)
		}
	}
}
