package validate

import (
	"fmt"
	"math/big"
	"strings"
)

// Reference code lists and account-number checks used by the request formats.

// currencyCodes holds the active ISO 4217 currency codes.
var currencyCodes = codeSet(`
AED AFN ALL AMD AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN BWP
BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB
EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD
JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP
MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR
RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS TMT TND
TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XAG XAU XBA XBB
XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU XTS XUA XXX YER ZAR ZMW ZWG`)

// countryCodes holds the ISO 3166-1 alpha-2 country codes.
var countryCodes = codeSet(`
AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR
BS BT BV BW BY BZ CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ DE DJ DK DM DO DZ
EC EE EG EH ER ES ET FI FJ FK FM FO FR GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW
GY HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP KE KG KH KI KM KN KP KR KW KY
KZ LA LB LC LI LK LR LS LT LU LV LY MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV
MW MX MY MZ NA NC NE NF NG NI NL NO NP NR NU NZ OM PA PE PF PG PH PK PL PM PN PR PS PT PW PY
QA RE RO RS RU RW SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ TC TD TF TG
TH TJ TK TL TM TN TO TR TT TV TW TZ UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS YE YT ZA ZM
ZW`)

func codeSet(list string) map[string]bool {
	set := map[string]bool{}
	for _, c := range strings.Fields(list) {
		set[c] = true
	}
	return set
}

func currencyProblem(s string) string {
	if !currencyCodes[s] {
		return fmt.Sprintf("'%s' is not an active ISO 4217 currency code", s)
	}
	return ""
}

func countryProblem(s string) string {
	if !countryCodes[s] {
		return fmt.Sprintf("'%s' is not an ISO 3166-1 alpha-2 country code", s)
	}
	return ""
}

// IBANProblem and CLABEProblem say what is wrong with an account number, as the end of a
// sentence naming the field ("" when nothing is): the checks of the payee rules' data
// types.

// IBANProblem checks an IBAN of the given country and length: the country prefix, the
// length, letters and digits only, and the ISO 13616 mod-97 check digits.
func IBANProblem(iban, country string, length int) string {
	switch {
	case !strings.HasPrefix(iban, country):
		return fmt.Sprintf("must be an IBAN starting with %s", country)
	case len(iban) != length:
		return fmt.Sprintf("must be an IBAN of %d characters", length)
	}
	var digits strings.Builder
	for _, r := range iban[4:] + iban[:4] { // the check moves the first four to the end
		switch {
		case r >= '0' && r <= '9':
			digits.WriteRune(r)
		case r >= 'A' && r <= 'Z':
			fmt.Fprintf(&digits, "%d", r-'A'+10)
		default:
			return "must be an IBAN of upper-case letters and digits"
		}
	}
	n, _ := new(big.Int).SetString(digits.String(), 10)
	if new(big.Int).Mod(n, big.NewInt(97)).Int64() != 1 {
		return "has wrong IBAN check digits"
	}
	return ""
}

// CLABEProblem checks a Mexican CLABE: 18 digits, the last a check digit over the first
// 17 with weights 3, 7, 1.
func CLABEProblem(clabe string) string {
	if len(clabe) != 18 || strings.Trim(clabe, "0123456789") != "" {
		return "must be a CLABE of exactly 18 digits"
	}
	sum := 0
	for i := 0; i < 17; i++ {
		sum += int(clabe[i]-'0') * []int{3, 7, 1}[i%3] % 10
	}
	if want := (10 - sum%10) % 10; int(clabe[17]-'0') != want {
		return "has a wrong CLABE check digit"
	}
	return ""
}
