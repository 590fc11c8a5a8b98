package replaycfg

import (
	"reflect"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/lpictl/lpictl/configs"
)

// TestFlagKeys: every flag names a key of the file.
func TestFlagKeys(t *testing.T) {
	keys := configs.LeafKeys(reflect.TypeOf(File{}))
	for flag, key := range FlagKeys() {
		if _, ok := keys[key]; !ok {
			t.Errorf("--%s: no key %s", flag, key)
		}
	}
}

// TestLoadTiming: flags over the file, --set over flags; the timing is the
// preset's unless given.
func TestLoadTiming(t *testing.T) {
	fs := pflag.NewFlagSet("predict", pflag.ContinueOnError)
	fs.String("wake-time", "", "")
	fs.String("mode", "", "")
	if err := fs.Parse([]string{"--wake-time", "3us", "--mode", "fast-wake"}); err != nil {
		t.Fatal(err)
	}
	if err := CheckFlags(fs); err != nil {
		t.Fatal(err)
	}
	f, err := Load(Options{Sets: []string{"predictor.wake_time=4us"}, Flags: fs, FlagKeys: map[string]string{"wake-time": "predictor.wake_time", "mode": "mode"}})
	if err != nil {
		t.Fatal(err)
	}
	tm, err := f.Timing()
	if err != nil || f.Mode != "fast-wake" || tm.Wake.String() != "4µs" || !f.WakeSet || tm.Handshake != DefaultHandshake(400e9) {
		t.Errorf("%v %+v %+v", err, f, tm)
	}
	fs.Set("wake-time", "0")
	if err := CheckFlags(fs); err == nil || !strings.Contains(err.Error(), "--wake-time: must be > 0") {
		t.Errorf("--wake-time 0: %v", err)
	}
}
