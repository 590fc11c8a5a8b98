package configs

import "errors"

// InputError marks bad input: a flag, a configuration key, a data file or
// trace the user gave that lpictl cannot use. It is the project's one type
// for it; cmd/lpictl maps it (and only it) to exit status 2. Packages that
// parse user input return it (or wrap their positional errors in it) at
// the point where the input enters, so that callers never classify errors
// themselves.
type InputError struct{ Err error }

func (e *InputError) Error() string { return e.Err.Error() }
func (e *InputError) Unwrap() error { return e.Err }

// BadInput marks err as bad input. It returns nil for nil and err itself
// when err already is (or wraps) an *InputError.
func BadInput(err error) error {
	if err == nil || IsBadInput(err) {
		return err
	}
	return &InputError{Err: err}
}

// IsBadInput reports whether err is or wraps an *InputError.
func IsBadInput(err error) bool {
	var ie *InputError
	return errors.As(err, &ie)
}
