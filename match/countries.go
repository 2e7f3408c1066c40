package match

import (
	"fmt"
	"strings"
)

// isoCountries are the ISO 3166-1 alpha-2 codes assigned to countries and
// territories (249), and XK, which geolocation databases use for Kosovo.
// A code outside them is refused, so that a typo ("UK") is an error
// rather than a room no one is ever in.
const isoCountries = "" +
	"AD AE AF AG AI AL AM AO AQ AR AS AT AU AW AX AZ " +
	"BA BB BD BE BF BG BH BI BJ BL BM BN BO BQ BR BS BT BV BW BY BZ " +
	"CA CC CD CF CG CH CI CK CL CM CN CO CR CU CV CW CX CY CZ " +
	"DE DJ DK DM DO DZ EC EE EG EH ER ES ET FI FJ FK FM FO FR " +
	"GA GB GD GE GF GG GH GI GL GM GN GP GQ GR GS GT GU GW GY " +
	"HK HM HN HR HT HU ID IE IL IM IN IO IQ IR IS IT JE JM JO JP " +
	"KE KG KH KI KM KN KP KR KW KY KZ LA LB LC LI LK LR LS LT LU LV LY " +
	"MA MC MD ME MF MG MH MK ML MM MN MO MP MQ MR MS MT MU MV MW MX MY MZ " +
	"NA NC NE NF NG NI NL NO NP NR NU NZ OM " +
	"PA PE PF PG PH PK PL PM PN PR PS PT PW PY QA RE RO RS RU RW " +
	"SA SB SC SD SE SG SH SI SJ SK SL SM SN SO SR SS ST SV SX SY SZ " +
	"TC TD TF TG TH TJ TK TL TM TN TO TR TT TV TW TZ " +
	"UA UG UM US UY UZ VA VC VE VG VI VN VU WF WS XK YE YT ZA ZM ZW"

// compileCountries checks a list of country codes and returns it as a set
// of upper-case codes (nil for an empty list).
func compileCountries(field string, list []string) (map[string]bool, error) {
	if len(list) == 0 {
		return nil, nil
	}
	if err := checkLength(field, len(list)); err != nil {
		return nil, err
	}
	set := make(map[string]bool, len(list))
	for i, c := range list {
		code := strings.ToUpper(c)
		if len(code) != 2 || !strings.Contains(" "+isoCountries+" ", " "+code+" ") {
			hint := ""
			if code == "UK" {
				hint = " (the United Kingdom is GB)"
			}
			return nil, fmt.Errorf("%s[%d]: %q is not an ISO 3166-1 alpha-2 country code%s", field, i, c, hint)
		}
		set[code] = true
	}
	return set, nil
}
