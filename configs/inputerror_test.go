package configs

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"
)

func TestBadInput(t *testing.T) {
	if BadInput(nil) != nil {
		t.Fatal("BadInput(nil) is not nil")
	}
	base := fmt.Errorf("scenario.yaml:3: unknown key %q", "topolgy")
	err := BadInput(base)
	if !IsBadInput(err) || err.Error() != base.Error() || !errors.Is(err, base) {
		t.Fatalf("BadInput(%v) = %v: not an unchanged, unwrappable input error", base, err)
	}
	// Wrapping keeps the mark, and marking twice adds no second layer.
	wrapped := fmt.Errorf("sweep point 4: %w", err)
	if !IsBadInput(wrapped) || BadInput(wrapped) != wrapped {
		t.Fatalf("a wrapped input error lost its mark or was wrapped again: %v", wrapped)
	}
	if IsBadInput(fs.ErrPermission) {
		t.Fatal("a runtime error is reported as bad input")
	}
}
