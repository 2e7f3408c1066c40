package queue

import "errors"

// MaxKeyIDLength bounds a signing key's id, which every pass carries in
// its header.
const MaxKeyIDLength = 32

// CheckKeyID refuses a key id that is not 1 to 32 of A-Z, a-z, 0-9, ".",
// "_" and "-". Such an id needs no escaping in a token's JSON header, so
// it reads back as it was written; a key id that is not even UTF-8
// ("\xc3") did not, and every pass signed under it was refused.
func CheckKeyID(id string) error {
	if id == "" || len(id) > MaxKeyIDLength {
		return errors.New("must be 1 to 32 characters")
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return errors.New("may only hold A-Z, a-z, 0-9, '.', '_' and '-'")
		}
	}
	return nil
}
